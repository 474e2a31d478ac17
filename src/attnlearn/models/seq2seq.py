"""LSTM encoder-decoder with bilinear attention (docs/methods.md 1.1, paper 2.1)."""

from __future__ import annotations

import torch
from torch import nn

from attnlearn.models.attention import attention_weights
from attnlearn.models.bilstm import encode_padded
from attnlearn.models.lexical import pairwise_logprobs


HEAD_COMBINE = ("sum", "mean")
READOUTS = ("concat", "additive")


class Seq2Seq(nn.Module):
    """Shared embeddings; 2-layer BiLSTM encoder; LSTM decoder (teacher forcing).

    score(t, s) = (W_a d_t + b_a) . e_s; c_t = W_p sum_s alpha_ts e_s;
    p(y_t) = softmax(W_o ReLU(W_f [d_t; c_t])).

    With ``heads`` = K > 1 (the multi-head model of docs/methods.md 1.3 at full size), each
    head k has its own W_a^k and W_p^k (bias included) and the head contexts
    c^k_t = W_p^k sum_s alpha^k_ts e_s are summed (paper eq. 21) or averaged
    (``head_combine``). ``alpha`` is then the head mean, ``heads`` all of them.
    K = 1 is the paper's model, parameter for parameter and number for number.

    ``readout="additive"`` is appendix A.1's variant (eq. 31): p(y_t) = softmax(W_o (d_t + c_t)),
    no W_f. Its logits are linear in the attention weights, so the loss-minimising attention
    of each target word is a convex problem (optimal.py).
    """

    attention_params = frozenset({"attn"})  # what the frozen variant trains (every head's W_a)

    def __init__(self, vocab_size: int, hidden: int = 256, layers: int = 2, dropout: float = 0.5,
                 attention: str = "standard", activation: str = "softmax", score_scale: float = 1.0,
                 heads: int = 1, head_combine: str = "sum", attn_bias: bool = True, readout: str = "concat"):
        super().__init__()
        if head_combine not in HEAD_COMBINE:
            raise ValueError(f"unknown head_combine {head_combine!r}; expected one of {HEAD_COMBINE}")
        if readout not in READOUTS:
            raise ValueError(f"unknown readout {readout!r}; expected one of {READOUTS}")
        self.readout_kind = readout
        self.hidden, self.layers, self.heads, self.head_combine = hidden, layers, heads, head_combine
        self.mode, self.activation, self.score_scale = attention, activation, score_scale
        self.embed = nn.Embedding(vocab_size, hidden, padding_idx=0)
        lstm_dropout = dropout if layers > 1 else 0.0
        self.encoder = nn.LSTM(hidden, hidden, layers, batch_first=True, bidirectional=True, dropout=lstm_dropout)
        self.decoder = nn.LSTM(hidden, hidden, layers, batch_first=True, dropout=lstm_dropout)
        # the K heads' maps stacked in one layer each: K = 1 draws the same initial numbers
        # W_a^1..K; b_a is a learned, query-independent prior over source positions (the
        # reference's attn_lin has it, and the paper's 6,132,544 parameters count it)
        self.attn = nn.Linear(hidden, heads * 2 * hidden, bias=attn_bias)
        self.proj = nn.Linear(2 * hidden, heads * hidden)  # W_p^1..K
        if readout == "concat":
            self.combine = nn.Linear(2 * hidden, hidden)  # W_f
        self.out = nn.Linear(hidden, vocab_size)  # W_o

    def encode(self, src, src_len, scale=None):
        """Encoder states e [B, S, 2H] and the decoder's initial state.

        ``scale`` [B, S] multiplies each source embedding (for gradient saliency).
        """
        x = self.embed(src)
        if scale is not None:
            x = x * scale.unsqueeze(-1)
        # on a CPU one fused call per layer and direction (models/bilstm.py: the packed numbers)
        enc, (h, c) = encode_padded(self.encoder, x, src_len, states=True)
        # average the two directions, layer by layer
        h = h.view(self.layers, 2, *h.shape[1:]).mean(1)
        c = c.view(self.layers, 2, *c.shape[1:]).mean(1)
        return enc, (h.contiguous(), c.contiguous())

    def decode(self, tgt_in, tgt_len, state):
        """Decoder states [B, T, H]. The decoder is causal, so right padding does
        not change its outputs at real positions: no packing needed (faster)."""
        return self.decoder(self.embed(tgt_in), state)[0]

    def scores(self, dec, enc):
        """Attention scores [B, K, T, S]."""
        query = self.attn(dec)
        if self.heads == 1:
            return torch.einsum("bth,bsh->bts", query, enc).unsqueeze(1)
        return torch.einsum("btkh,bsh->bkts", query.unflatten(-1, (self.heads, -1)), enc)

    def weights(self, dec, enc, src):
        """Attention weights [B, K, T, S] over the real source positions."""
        mask = (src != 0)[:, None, None, :]
        return attention_weights(self.scores(dec, enc), mask, self.mode, self.activation, self.score_scale)

    def context(self, alpha, enc):
        """c_t [B, T, H] from the weights of every head [B, K, T, S]."""
        if self.heads == 1:
            return self.proj(torch.bmm(alpha[:, 0], enc))
        mixed = torch.einsum("bkts,bsh->bkth", alpha, enc)
        w = self.proj.weight.unflatten(0, (self.heads, -1))  # [K, H, 2H]
        per_head = torch.einsum("bkth,kgh->bktg", mixed, w) + self.proj.bias.view(self.heads, 1, -1)
        return self._combine(per_head, 1)

    def _combine(self, per_head, dim):
        return per_head.sum(dim) if self.head_combine == "sum" else per_head.mean(dim)

    def head_values(self, enc):
        """f^k(e_s) [B, K, S, H]: what head k adds to c_t per unit of weight on s (bias out,
        1/K in for ``mean``), so that c_t = sum_k alpha^k f^k + the combined bias."""
        w = self.proj.weight.unflatten(0, (self.heads, -1))  # [K, H, 2H]
        values = torch.einsum("bsh,kgh->bksg", enc, w)
        return values / self.heads if self.head_combine == "mean" else values

    def readout(self, dec, ctx):
        if self.readout_kind == "additive":
            return self.out(dec + ctx)
        return self.out(torch.relu(self.combine(torch.cat([dec, ctx], dim=-1))))

    def position_contexts(self, enc):
        """c_t [B, S, H] when every head puts all its weight on s."""
        return self._combine(self.proj(enc).unflatten(-1, (self.heads, -1)), 2)

    def forward(self, src, src_len, tgt_in, tgt_len, scale=None, alpha=None, rows=None, states=None):
        """Logits [B, T, V], attention (head mean [B, T, S], per head [B, K, T, S]), encoder
        and decoder states.

        ``alpha`` overrides the attention weights (probing and erasure tests): [B, T, S]
        for every head, or [B, K, T, S] head by head. ``rows`` [B, T] (bool) limits the
        logits to those positions, [N, V]: training skips the output layer at pads, its
        largest matrix product. ``states`` (enc, dec) gives the encoder's and decoder's outputs
        instead of computing them: a stacked model (models/stacked_seq2seq.py) runs all its
        members' recurrences as one batch and the rest of this forward per member.
        """
        if states is None:
            enc, state = self.encode(src, src_len, scale)
            dec = self.decode(tgt_in, tgt_len, state)
        else:
            enc, dec = states
        if alpha is None:
            heads = self.weights(dec, enc, src)
        else:
            heads = alpha if alpha.dim() == 4 else alpha.unsqueeze(1).expand(-1, self.heads, -1, -1)
        ctx = self.context(heads, enc)
        logits = self.readout(dec, ctx) if rows is None else self.readout(dec[rows], ctx[rows])
        return {"logits": logits, "alpha": heads.mean(1), "heads": heads, "enc": enc, "dec": dec}

    # Incremental decoding for beam search (decode.py): state tensors are batch first.
    def start(self, src, src_len) -> dict:
        enc, (h, c) = self.encode(src, src_len)
        return {"enc": enc, "src": src, "h": h.transpose(0, 1), "c": c.transpose(0, 1)}

    def step(self, tokens, state: dict):
        """One decoder step for tokens [N] -> (log p(next) [N, V], new state)."""
        hc = (state["h"].transpose(0, 1).contiguous(), state["c"].transpose(0, 1).contiguous())
        dec, (h, c) = self.decoder(self.embed(tokens[:, None]), hc)
        enc = state["enc"]
        logits = self.readout(dec, self.context(self.weights(dec, enc, state["src"]), enc))[:, 0]
        return torch.log_softmax(logits, -1), {**state, "h": h.transpose(0, 1), "c": c.transpose(0, 1)}

    def lexical_logprobs(self, enc, dec, targets, chunk_elems: int = 1 << 24, src_ok=None):
        """xi[b, t, s] = log p(y_t | context = W_p e_s, d_t) (paper eq. 4): every head attends
        only to s. Computed at real (t, s) pairs only (``src_ok`` [B, S]: real source positions),
        about ``chunk_elems`` logits at a time; 0 at pads."""
        if self.readout_kind == "additive":
            return pairwise_logprobs(dec, self.position_contexts(enc), self.out, targets, self.out.out_features,
                                     src_ok, chunk_elems)
        H = self.hidden
        w_dec, w_ctx = self.combine.weight[:, :H], self.combine.weight[:, H:]
        from_dec = dec @ w_dec.T  # [B, T, H]
        from_ctx = self.position_contexts(enc) @ w_ctx.T + self.combine.bias  # [B, S, H]
        return pairwise_logprobs(from_dec, from_ctx, lambda h: self.out(torch.relu(h)), targets,
                                 self.out.out_features, src_ok, chunk_elems)
