"""The four related analyses of attention (docs/methods.md sections 9-12), run on
the same trained models and checkpoints as the reproduction:

- ``norms``: hard alignments and their error rates, from the weights or from the norm-based
  weights ||alpha f(x)|| (computed beside the attention sites, models/sites.py);
- ``effective``: effective attention (null-space projection) and erasure tests;
- ``head_roles``: sieve scores, one-sided t-tests, multiple-comparison corrections;
- ``tanhmax``: softmax vs TanhMax on classification.
"""
