"""Beam search for the translation model and corpus BLEU (docs/methods.md 1.1:
beam 5, max length 100, scored with sacrebleu).

Vectorised over batch x beam: one decoder step per output position for all
hypotheses at once. A model decodes through two methods: ``start(src, src_len)``
-> state (a dict of tensors, batch first) and ``step(tokens, state)`` ->
(log-probabilities [N, V], state).
"""

from __future__ import annotations

import torch

BOS, EOS, PAD = 1, 2, 0


def _pick(state: dict, idx: torch.Tensor) -> dict:
    return {k: v[idx] for k, v in state.items()}


# How the final beam's best hypothesis is chosen (probe.beam_rank): "sum", the highest summed
# log-probability (the authors' reference code; it favours short outputs), or "mean", the sum
# divided by the length (fairseq's default length penalty of 1).
RANKS = ("sum", "mean")


@torch.no_grad()
def beam_search(model, src, src_len, beam: int = 5, max_len: int = 100, rank: str = "sum") -> list[list[int]]:
    """Best hypothesis per source sentence (ids without <s> and </s>), chosen from the final
    beam by ``rank`` (RANKS). The search itself is the same either way: it keeps the ``beam``
    best summed scores, a finished hypothesis holding its place at no cost."""
    if rank not in RANKS:
        raise ValueError(f"beam_search: rank {rank!r} is not one of {RANKS}")
    B, device = len(src), src.device
    state = _pick(model.start(src, src_len), torch.arange(B, device=device).repeat_interleave(beam))
    scores = torch.full((B, beam), float("-inf"), device=device)
    scores[:, 0] = 0.0  # all beams start identical: expand only the first
    tokens = torch.full((B * beam, 1), BOS, dtype=torch.long, device=device)
    done = torch.zeros(B * beam, dtype=torch.bool, device=device)
    lengths = torch.zeros(B * beam, device=device)
    for _ in range(max_len):
        logp, state = model.step(tokens[:, -1], state)
        V = logp.shape[-1]
        # a finished hypothesis only extends with padding, at no cost
        logp = torch.where(done[:, None], torch.full_like(logp, float("-inf")), logp)
        logp[:, PAD] = torch.where(done, 0.0, float("-inf"))
        cand = (scores.view(-1, 1) + logp).view(B, beam * V)
        scores, flat = cand.topk(beam, dim=-1)
        origin = (torch.arange(B, device=device)[:, None] * beam + flat // V).view(-1)
        new = (flat % V).view(-1)
        state, done, lengths = _pick(state, origin), done[origin], lengths[origin]
        tokens = torch.cat([tokens[origin], new[:, None]], dim=1)
        lengths = lengths + (~done).float()
        done = done | (new == EOS)
        if done.all():
            break
    final = scores.view(-1) if rank == "sum" else scores.view(-1) / lengths.clamp(min=1)
    best = final.view(B, beam).argmax(-1)
    rows = tokens.view(B, beam, -1)[torch.arange(B, device=device), best, 1:]
    return [row.tolist() for row in _cut_at_eos(rows)]


def _cut_at_eos(rows: torch.Tensor) -> list[torch.Tensor]:
    """Each row up to its first </s>."""
    first = torch.where(rows == EOS, torch.arange(rows.shape[1], device=rows.device), rows.shape[1]).min(1).values
    return [row[:n] for row, n in zip(rows, first.tolist())]


def corpus_bleu(hypotheses: list[str], references: list[str]) -> float:
    """sacrebleu's corpus BLEU (13a tokenisation), as a fraction in [0, 1]."""
    import sacrebleu

    return sacrebleu.corpus_bleu(hypotheses, [references]).score / 100.0
