"""Training: the attention models (train: the learning; model: a run's seed and initial model;
workdir: the work folder's protocol), the bag-of-words proxy, and the baselines it is read against
(logistic regression, IBM Model 1)."""
