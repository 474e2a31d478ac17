"""Turning attention scores into weights over source positions.

``mode`` is how the scores are used: ``standard`` (learned) or ``uniform``
(scores zeroed before masking: uniform over non-pad positions, paper 3.2).
``activation`` is the normaliser; adding one (e.g. TanhMax) is one entry in
``ACTIVATIONS``.
"""

from __future__ import annotations

import torch

MODES = ("standard", "uniform")


def softmax(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)


ACTIVATIONS = {"softmax": softmax}


def attention_weights(scores: torch.Tensor, mask: torch.Tensor, mode: str = "standard",
                      activation: str = "softmax") -> torch.Tensor:
    """Weights over the last axis; ``mask`` is True at real (non-pad) positions."""
    if mode == "uniform":
        scores = torch.zeros_like(scores)
    elif mode != "standard":
        raise ValueError(f"unknown attention mode {mode!r}; expected one of {MODES}")
    return ACTIVATIONS[activation](scores, mask)
