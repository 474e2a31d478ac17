"""Hard alignments from attention scores and their error rates (docs/methods.md 9;
Kobayashi et al. 2020, "Attention is Not Only a Weight").

The norm-based weights themselves (||alpha_ts f(x_s)||) live beside the attention sites
(models/sites.py): the probe's ``norm`` measure computes them too, and a probe must not
depend on this analysis.
"""

from __future__ import annotations

import numpy as np
import torch

from attnlearn.data.tokenize import BOS, EOS, PAD


def hard_alignment(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """One link per target row: the argmax over the allowed source positions.
    scores [..., T, S], allowed bool broadcastable -> bool [..., T, S] with one True per row."""
    masked = scores.masked_fill(~allowed, float("-inf"))
    out = torch.zeros(masked.shape, dtype=torch.bool, device=scores.device)
    return out.scatter_(-1, masked.argmax(-1, keepdim=True), True)


def word_index(ids: torch.Tensor, starts_word: torch.Tensor) -> torch.Tensor:
    """Word number of each position [B, L], -1 at pads. A word starts at the first position,
    at each piece ``starts_word`` marks (bool [V]: SentencePiece's U+2581 pieces and the
    specials) and right after a special, so <s> and </s> are words of their own."""
    special = (ids == BOS) | (ids == EOS)
    new = starts_word[ids] | special
    new[:, 0] = True
    new[:, 1:] |= special[:, :-1]
    return (new.long().cumsum(1) - 1).masked_fill(ids == PAD, -1)


def members(index: torch.Tensor) -> torch.Tensor:
    """One-hot word membership [B, L, W] of a word index [B, L] (positions at -1 in none)."""
    words = torch.arange(int(index.max()) + 1, device=index.device)
    return (index[..., None] == words).float()


def word_scores(scores: torch.Tensor, tgt: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """Piece scores [B, T, S] -> word scores [B, Wt, Ws]: the sum over a source word's pieces
    and the mean over a target word's pieces, as Kobayashi et al.'s alignment code does.
    ``tgt`` [B, T, Wt], ``src`` [B, S, Ws]: membership (``members``)."""
    tgt, src = tgt.to(scores.dtype), src.to(scores.dtype)
    mean_t = tgt / tgt.sum(1, keepdim=True).clamp(min=1)
    return mean_t.transpose(1, 2) @ scores @ src


def alignment_error_rate(pred, sure, possible=None) -> float:
    """AER = 1 - (|A & S| + |A & P|) / (|A| + |S|) over a corpus of boolean link arrays
    (Och and Ney 2003). ``possible`` defaults to ``sure`` (and always includes it)."""
    pred, sure = np.asarray(pred, dtype=bool), np.asarray(sure, dtype=bool)
    possible = sure if possible is None else np.asarray(possible, dtype=bool) | sure
    denom = pred.sum() + sure.sum()
    if denom == 0:
        return float("nan")
    return float(1 - ((pred & sure).sum() + (pred & possible).sum()) / denom)


def token_classes(ids: torch.Tensor, specials: dict[str, int]) -> dict[str, torch.Tensor]:
    """Boolean masks [B, S] of each special token and of the other real tokens ("word")."""
    out = {name: ids == i for name, i in specials.items()}
    special = torch.zeros_like(ids, dtype=torch.bool)
    for m in out.values():
        special |= m
    out["word"] = (ids != 0) & ~special
    return out
