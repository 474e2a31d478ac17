"""Turning attention scores into weights over source positions.

``mode`` is how the scores are used: ``standard`` (learned) or ``uniform``
(uniform over non-pad positions, paper 3.2, whatever the activation: a
TanhMax of zero scores would be all zeros, not uniform).
``activation`` is the normaliser; adding one is one entry in ``ACTIVATIONS``:

- ``softmax``: exp(a_i) / sum_j exp(a_j) over the unmasked positions.
- ``tanhmax`` (docs/methods.md 11): sinh(a_i) / sum_j cosh(a_j), signed weights with
  |w_i| < 1 and sign(w_i) = sign(a_i). Computed in the stable form
  z = softmax([a; -a]) over the 2n unmasked entries, w = z[:n] - z[n:], which
  never overflows (sinh and cosh do for |a| > 710 in float64, 89 in float32).

``scale`` multiplies the scores before the activation (1/sqrt(dim) keeps
scores of wide models in the range where TanhMax is not saturated).
"""

from __future__ import annotations

import torch

MODES = ("standard", "uniform")


def softmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    return torch.softmax(scores if mask is None else scores.masked_fill(~mask, float("-inf")), dim=-1)


def tanhmax(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """sinh(a_i) / sum_j cosh(a_j) over unmasked positions; masked positions get 0."""
    both = torch.cat([scores, -scores], dim=-1)
    if mask is not None:
        mask = mask.expand_as(scores)
        both = both.masked_fill(~torch.cat([mask, mask], dim=-1), float("-inf"))
    z = torch.softmax(both, dim=-1)
    n = scores.shape[-1]
    return z[..., :n] - z[..., n:]


ACTIVATIONS = {"softmax": softmax, "tanhmax": tanhmax}


def attention_weights(scores: torch.Tensor, mask: torch.Tensor | None, mode: str = "standard",
                      activation: str = "softmax", scale: float = 1.0) -> torch.Tensor:
    """Weights over the last axis; ``mask`` is True at real (non-pad) positions, None where every
    position is real (the copying experiments' toy model: a mask of ones only copies the scores,
    forward and backward, for the same numbers)."""
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown attention activation {activation!r}; expected one of {sorted(ACTIVATIONS)}")
    if mode == "uniform":
        return softmax(torch.zeros_like(scores), mask)
    if mode != "standard":
        raise ValueError(f"unknown attention mode {mode!r}; expected one of {MODES}")
    if scale != 1.0:
        scores = scores * scale
    return ACTIVATIONS[activation](scores, mask)
