"""The toy encoder-decoder of the copying experiments (docs/methods.md 1.3).

Shared embeddings, a 1-layer unidirectional LSTM (or GRU) encoder and decoder
(decoder starts from the encoder's final state), no dropout, and K attention
heads, each with its own query map W_q^k and context map W_c^k (both H -> H with
bias, as in the reference code):

    alpha^k_t = act((W_q^k d_t) . e_s),   c^k_t = W_c^k sum_s alpha^k_ts e_s,
    c_t = sum_k c^k_t  (``combine: sum``, paper eq. 21)  or  mean_k c^k_t
          (``combine: mean``, the reference code),
    p(y_t) = softmax(W_o tanh(W_f [d_t; c_t])).

With K = 1 it is the single-head model of paper 3.3. Heads are separate modules
so that a multi-head model can be assembled from saved single-head
initialisations (paper 5.2); the forward pass stacks their weights and runs all
heads at once.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlearn.models.attention import attention_weights

COMBINE = ("sum", "mean")
CELLS = {"lstm": nn.LSTM, "gru": nn.GRU}


class Head(nn.Module):
    def __init__(self, hidden: int):
        super().__init__()
        self.query = nn.Linear(hidden, hidden)
        self.context = nn.Linear(hidden, hidden)


class ToySeq2Seq(nn.Module):
    def __init__(self, n_tokens: int, hidden: int = 256, heads: int = 1, combine: str = "sum",
                 cell: str = "lstm", attention: str = "standard", activation: str = "softmax"):
        super().__init__()
        if combine not in COMBINE:
            raise ValueError(f"unknown combine {combine!r}; expected one of {COMBINE}")
        self.hidden, self.combine, self.mode, self.activation = hidden, combine, attention, activation
        self.embed = nn.Embedding(n_tokens, hidden)
        self.encoder = CELLS[cell](hidden, hidden, batch_first=True)
        self.decoder = CELLS[cell](hidden, hidden, batch_first=True)
        self.heads = nn.ModuleList(Head(hidden) for _ in range(heads))
        self.mix = nn.Linear(2 * hidden, hidden)  # W_f
        self.out = nn.Linear(hidden, n_tokens)  # W_o

    def base_state(self) -> dict:
        """Every parameter except the heads' (the shared initialisation of paper 5.2)."""
        return {k: v for k, v in self.state_dict().items() if not k.startswith("heads.")}

    def set_heads(self, head_states: list[dict]) -> None:
        """Replace the heads by ones loaded from single-head state dicts."""
        heads = [Head(self.hidden) for _ in head_states]
        for head, state in zip(heads, head_states):
            head.load_state_dict(state)
        self.heads = nn.ModuleList(heads).to(self.embed.weight.device)

    def attend(self, dec, enc):
        """Per-head contexts [K, B, T, H] and attention [K, B, T, S], all heads at once."""
        w_q = torch.stack([h.query.weight for h in self.heads])  # [K, H, H]
        b_q = torch.stack([h.query.bias for h in self.heads])
        query = torch.einsum("bth,kgh->kbtg", dec, w_q) + b_q[:, None, None, :]
        scores = torch.einsum("kbtg,bsg->kbts", query, enc)
        alpha = attention_weights(scores, None, self.mode, self.activation)  # no padding: every position is real
        w_c = torch.stack([h.context.weight for h in self.heads])
        b_c = torch.stack([h.context.bias for h in self.heads])
        ctx = torch.einsum("kbts,bsh->kbth", alpha, enc)
        return torch.einsum("kbth,kgh->kbtg", ctx, w_c) + b_c[:, None, None, :], alpha

    def forward(self, src, tgt_in):
        """Logits [B, T, V] and attention [K, B, T, S]."""
        enc, state = self.encoder(self.embed(src))
        dec = self.decoder(self.embed(tgt_in), state)[0]
        ctx, alpha = self.attend(dec, enc)
        ctx = ctx.sum(0) if self.combine == "sum" else ctx.mean(0)
        logits = self.out(torch.tanh(self.mix(torch.cat([dec, ctx], -1))))
        return {"logits": logits, "alpha": alpha}
