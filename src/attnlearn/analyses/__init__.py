"""The four related analyses of attention (docs/methods.md sections 9-12), run on
the same trained models and checkpoints as the reproduction:

- ``norms``: norm-based attention ||alpha f(x)|| and alignment error rates;
- ``effective``: effective attention (null-space projection) and erasure tests;
- ``head_roles``: sieve scores, one-sided t-tests, multiple-comparison corrections;
- ``tanhmax``: softmax vs TanhMax on classification;
- ``sites``: where each model family exposes its attention heads and value vectors.
"""
