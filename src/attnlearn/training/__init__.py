"""Training: the attention models (train), the bag-of-words proxy, and the baselines it is read against (logistic regression, IBM Model 1)."""
