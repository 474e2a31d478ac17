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
from scipy import stats

from attnlearn.agreement.claims import holm  # the project's one Holm correction


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


def ttest_greater(x: np.ndarray, tau: float) -> tuple[float, float, int]:
    """One-sided one-sample t-test of H0: mean <= tau. Returns (t, p, n); NaNs dropped."""
    x = np.asarray(x, dtype=np.float64)
    x = x[~np.isnan(x)]
    n = len(x)
    if n < 2:
        return float("nan"), float("nan"), n
    sd = x.std(ddof=1)
    if sd == 0:
        t = float("inf") if x.mean() > tau else (float("-inf") if x.mean() < tau else float("nan"))
    else:
        t = float((x.mean() - tau) / (sd / np.sqrt(n)))
    return t, float(stats.t.sf(t, n - 1)) if not np.isnan(t) else float("nan"), n


def _adjusted(p: np.ndarray, adjust) -> np.ndarray:
    """Apply ``adjust`` (sorted p-values -> adjusted, sorted) to the non-NaN p-values; NaNs stay
    NaN and do not count towards the number of tests."""
    p = np.asarray(p, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        order = np.argsort(p[ok], kind="stable")
        res = np.empty(ok.sum())
        res[order] = np.minimum(adjust(p[ok][order]), 1.0)
        out[ok] = res
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (NaNs stay NaN and do not count)."""
    return _adjusted(p, lambda q: np.minimum.accumulate((len(q) / np.arange(len(q), 0, -1) * q[::-1]))[::-1])


CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg, "none": lambda p: np.asarray(p, dtype=np.float64)}
