"""Controlled experiments of the paper (docs/methods.md sections 1.3 and 8): permutation
copying and its controls, the multi-head rescue and the keyword toy."""
