"""Head-role hypothesis tests (docs/methods.md 12; Pande et al. 2021, "The heads
hypothesis").

A role is a sieve S(i) of key positions for each query i. A head's sentence
score is the mean over queries with a non-empty sieve of
(mean attention inside S(i)) / (mean attention over all real positions); the
uniform distribution scores 1. Per head and role, a one-sided one-sample
t-test over sentences of H0: mean score <= tau; p-values are corrected over
all heads x roles (Holm or Benjamini-Hochberg; the original applies none).
"""

from __future__ import annotations

import numpy as np
import torch

from attnlearn.statistics import benjamini_hochberg, holm


def sieve_scores(alpha: torch.Tensor, sieve: torch.Tensor, mask: torch.Tensor, valid_q: torch.Tensor):
    """Sentence scores [B, h]; NaN where no query of the sentence has a non-empty sieve.

    alpha [B, h, Q, K] (absolute values are used: signed TanhMax weights count by size),
    sieve [B, Q, K] bool, mask [B, Q, K] real keys, valid_q [B, Q] real queries.
    """
    a = alpha.abs() * mask.unsqueeze(1)
    sieve = sieve & mask
    n_in = sieve.sum(-1)  # [B, Q]
    inside = (a * sieve.unsqueeze(1)).sum(-1) / n_in.clamp(min=1).unsqueeze(1)
    overall = a.sum(-1) / mask.sum(-1).clamp(min=1).unsqueeze(1)
    ratio = inside / overall.clamp(min=torch.finfo(a.dtype).tiny)
    use = (valid_q & (n_in > 0)).unsqueeze(1)  # [B, 1, Q]
    count = use.sum(-1)
    total = torch.where(use, ratio, torch.zeros_like(ratio)).sum(-1)
    return torch.where(count > 0, total / count.clamp(min=1), torch.full_like(total, float("nan")))


def local_sieve(n_q: int, n_k: int, width: int = 2, device="cpu") -> torch.Tensor:
    """|i - j| <= width (self-attention): [Q, K]."""
    i = torch.arange(n_q, device=device)[:, None]
    j = torch.arange(n_k, device=device)[None, :]
    return (i - j).abs() <= width


def diagonal_sieve(q_len: torch.Tensor, k_len: torch.Tensor, n_q: int, n_k: int, width: int = 1,
                   offset: int = 1) -> torch.Tensor:
    """Cross-attention diagonal band: key j within ``width`` of the query's proportional
    position offset + i * (n_k - 2) / n_q (``offset`` skips <s>; the last query, </s>, maps
    to the source </s>). [B, Q, K]."""
    i = torch.arange(n_q, dtype=torch.float64, device=q_len.device)[None, :, None]
    j = torch.arange(n_k, dtype=torch.float64, device=q_len.device)[None, None, :]
    ql, kl = q_len.double()[:, None, None], k_len.double()[:, None, None]
    words_q = (ql - 1).clamp(min=1)  # target words (the last output is </s>)
    centre = offset + i * (kl - 2) / words_q
    return (j - centre).abs() <= width


def token_sieve(keys: torch.Tensor, n_q: int) -> torch.Tensor:
    """The same key positions for every query: keys [B, K] bool -> [B, Q, K]."""
    return keys[:, None, :].expand(-1, n_q, -1)


# the p value corrections over heads x roles, by their name in the config (analyses: roles: correction)
CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg, "none": lambda p: np.asarray(p, dtype=np.float64)}
