"""The lexical probe's T x S x V computation, shared by the translation models.

xi[b, t, s] = log p(y_t) when the model attends only to source position s. In both model
families the output at (t, s) is ``readout(from_dec[b, t] + from_src[b, s])`` with a
position-wise ``readout``, so the logits of every (t, s) pair are one matrix product
over the pairs. Only real pairs (a target token, a source token) are computed, in
chunks of about ``chunk_elems`` logits: padding costs nothing and memory is bounded.
"""

from __future__ import annotations

from typing import Callable

import torch


def pairwise_logprobs(from_dec: torch.Tensor, from_src: torch.Tensor, readout: Callable, targets: torch.Tensor,
                      n_out: int, src_ok: torch.Tensor | None = None, chunk_elems: int = 1 << 24) -> torch.Tensor:
    """[B, T, S]: log softmax(readout(from_dec[b, t] + from_src[b, s]))[targets[b, t]] at every
    real pair (targets != 0, ``src_ok``; None: every source position), 0 elsewhere."""
    B, T, S = targets.shape[0], targets.shape[1], from_src.shape[1]
    real = (targets != 0)[:, :, None]
    if src_ok is not None:
        real = real & src_ok[:, None, :]
    b, t, s = torch.nonzero(real.expand(B, T, S), as_tuple=True)
    step = max(1, chunk_elems // max(1, n_out))
    parts = []
    for i in range(0, len(b), step):
        bi, ti, si = b[i:i + step], t[i:i + step], s[i:i + step]
        logits = readout(from_dec[bi, ti] + from_src[bi, si])  # [pairs, V]
        top = logits.amax(1, keepdim=True)
        gold = (logits.gather(1, targets[bi, ti, None]) - top).squeeze(1)
        # log sum exp in place: the chunk is the largest tensor here, never copied
        parts.append(gold - logits.sub_(top).exp_().sum(1).log_())
    xi = from_dec.new_zeros(B, T, S)
    if parts:
        xi[b, t, s] = torch.cat(parts)
    return xi
