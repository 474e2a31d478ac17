"""Effective attention (docs/methods.md 10; Brunner et al. 2019, and the seed "On
explaining with attention matrices") and erasure tests.

With the head's value matrix T (S x d: row s = f(x_s)), any attention row plus
a vector of the left null space of T gives the same output. Effective
attention keeps the part in the column space of T: A_eff = A U_r U_r^T
(U_r = the left singular vectors of T with non-negligible singular values), so
A_eff T = A T. Each query is projected on the value rows of the keys it may
see (padding and causal masks): a causal decoder query's null space is that
of its visible prefix, so no effective weight lands on a future key. It may be
negative and need not sum to 1; the renormalised variant clips it at 0 and
rescales each row to sum to 1 (it no longer gives the same output: the
identity check measures by how much).
"""

from __future__ import annotations

import torch


def column_space(values: torch.Tensor, rtol: float | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """(U_r with unused columns zeroed [..., S, k], rank [...]) of values [..., S, d].

    Rank: singular values above ``rtol`` (default: S * machine epsilon) times the largest,
    as numpy.linalg.matrix_rank does.
    """
    U, sv, _ = torch.linalg.svd(values, full_matrices=False)
    if rtol is None:
        rtol = max(values.shape[-2:]) * torch.finfo(values.dtype).eps
    keep = sv > rtol * sv[..., :1].clamp(min=torch.finfo(values.dtype).tiny)
    return U * keep.unsqueeze(-2), keep.sum(-1)


def effective_attention(alpha: torch.Tensor, values: torch.Tensor, key_mask: torch.Tensor | None = None,
                        rtol: float | None = None, chunk_elems: int = 1 << 24):
    """A_eff row i = alpha_i U_i U_i^T, U_i spanning the value rows of the keys query i may see.

    alpha [..., Q, K], values [..., K, d], key_mask bool [..., Q, K] or [..., 1, K]
    (None: every key; the value rows of pads must then be zero). Returns (A_eff [..., Q, K],
    rank [..., Q]). A key set shared by every query (cross and encoder attention) is
    decomposed once; distinct ones (causal masks) one per query, batched, in chunks of queries
    of about ``chunk_elems`` masked value entries."""
    if key_mask is None:
        key_mask = torch.ones_like(alpha[..., :1, :], dtype=torch.bool)
    elif bool((key_mask == key_mask[..., :1, :]).all()):
        key_mask = key_mask[..., :1, :]
    shared = key_mask.shape[-2] == 1
    step = alpha.shape[-2] if shared else max(1, chunk_elems // max(1, values.numel()))
    parts, ranks = [], []
    for q0 in range(0, alpha.shape[-2], step):
        mask = key_mask if shared else key_mask[..., q0:q0 + step, :]
        U, rank = column_space(values.unsqueeze(-3) * mask.unsqueeze(-1), rtol)  # [..., q or 1, K, r]
        a = alpha[..., q0:q0 + step, :].unsqueeze(-2)  # [..., q, 1, K]
        parts.append((a @ U @ U.transpose(-1, -2)).squeeze(-2))
        ranks.append(rank.expand(a.shape[:-2]))
    return torch.cat(parts, -2), torch.cat(ranks, -1)


def renormalised(a_eff: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The non-negative variant: max(A_eff, 0) over real positions, each row rescaled to sum 1
    (uniform over real positions where nothing is positive)."""
    pos = a_eff.clamp(min=0) * mask
    total = pos.sum(-1, keepdim=True)
    uniform = mask / mask.sum(-1, keepdim=True).clamp(min=1)
    return torch.where(total > 0, pos / total.clamp(min=torch.finfo(a_eff.dtype).tiny), uniform)


def output_gap(a: torch.Tensor, b: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """||a T - b T|| / ||a T|| per row: [..., T]."""
    ref = a @ values
    return (ref - b @ values).norm(dim=-1) / ref.norm(dim=-1).clamp(min=1e-12)


def top_k_mask(ranking: torch.Tensor, mask: torch.Tensor, k: int) -> torch.Tensor:
    """The k highest-ranked real positions per row (fewer where a row has fewer): bool [..., S]."""
    k_row = mask.sum(-1, keepdim=True).clamp(max=k)
    order = ranking.masked_fill(~mask, float("-inf")).argsort(dim=-1, descending=True, stable=True)
    positions = torch.arange(order.shape[-1], device=order.device).expand_as(order)
    rank = torch.empty_like(order).scatter_(-1, order, positions)
    return (rank < k_row) & mask


def erase(alpha: torch.Tensor, chosen: torch.Tensor, keep: bool) -> torch.Tensor:
    """Necessity (keep=False): zero the chosen positions; sufficiency (keep=True): zero all others.
    No renormalisation: the output changes by exactly the erased positions' contribution."""
    return alpha * (chosen if keep else ~chosen)


def random_ranking(shape, generator: torch.Generator, dtype=torch.float32, device="cpu") -> torch.Tensor:
    """Drawn from ``generator`` (a CPU one: the same numbers whatever the device), then moved."""
    return torch.rand(shape, generator=generator, dtype=dtype, device=generator.device).to(device)
