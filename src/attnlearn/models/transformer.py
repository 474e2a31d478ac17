"""A small Transformer encoder-decoder: the multi-head model family on
which norm-based attention, effective attention and head roles are defined.

Pre-layer-norm blocks, sinusoidal positions, one embedding table shared by
source and target (as the LSTM model), an untied output layer. Attention is
this module's own so that every layer's and head's weights and value vectors
are exposed, and it goes through ``attention_weights``: the standard, uniform
and TanhMax settings apply to every head (scores scaled by 1/sqrt(head dim)).

Head h's value vector of key x is f^h(x) = (x W_V + b_V) W_O^h (docs/methods.md 9):
a head's output is sum_s alpha^h_ts f^h(x_s), the layer's is the sum over heads
plus b_O.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from attnlearn.models.attention import attention_weights
from attnlearn.models.lexical import pairwise_logprobs


def sinusoid(length: int, dim: int, device=None) -> torch.Tensor:
    pos = torch.arange(length, device=device, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, device=device, dtype=torch.float32) * (-math.log(10000.0) / dim))
    out = torch.zeros(length, dim, device=device)
    out[:, 0::2] = torch.sin(pos * freq)
    out[:, 1::2] = torch.cos(pos * freq[: dim // 2])
    return out


class MultiHeadAttention(nn.Module):
    def __init__(self, dim: int, heads: int, settings: dict):
        super().__init__()
        if dim % heads:
            raise ValueError(f"transformer: hidden ({dim}) must be divisible by heads ({heads})")
        self.heads, self.head_dim, self.settings = heads, dim // heads, settings
        self.q, self.k, self.v, self.o = (nn.Linear(dim, dim) for _ in range(4))

    def _split(self, x):
        B, L, _ = x.shape
        return x.view(B, L, self.heads, self.head_dim).transpose(1, 2)  # [B, h, L, dh]

    def forward(self, xq, xkv, mask, override=None):
        """Output [B, Q, d] and weights [B, h, Q, K]; ``mask`` [B, Q, K] is True at allowed keys."""
        if override is None:
            scores = self._split(self.q(xq)) @ self._split(self.k(xkv)).transpose(-1, -2)
            s = self.settings
            alpha = attention_weights(scores, mask.unsqueeze(1), s["mode"], s["activation"],
                                      s["score_scale"] / math.sqrt(self.head_dim))
        else:
            alpha = override
        ctx = (alpha @ self._split(self.v(xkv))).transpose(1, 2).flatten(2)
        return self.o(ctx), alpha

    def values(self, xkv):
        """f^h(x_s) = (x_s W_V + b_V) W_O^h: [B, h, K, d] (b_O left out)."""
        w_o = self.o.weight.T.reshape(self.heads, self.head_dim, -1)  # [h, dh, d]
        return torch.einsum("bhkj,hjd->bhkd", self._split(self.v(xkv)), w_o)


def _feed_forward(dim, ff, dropout):
    return nn.Sequential(nn.Linear(dim, ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(ff, dim))


# The pre-LN residual blocks both layer kinds share (a layer has ln_self, self_attn, ln_ff,
# ff and drop); ``site`` = ("enc_self" | "dec_self", layer) names the recorded weights.
def _self_attention_block(layer, x, mask, record, site, override):
    h = layer.ln_self(x)
    a_out, alpha = layer.self_attn(h, h, mask, override.get(site))
    record[site] = (alpha, h)
    return x + layer.drop(a_out)


def _feed_forward_block(layer, x):
    return x + layer.drop(layer.ff(layer.ln_ff(x)))


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads, ff, dropout, settings):
        super().__init__()
        self.ln_self, self.ln_ff = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.self_attn = MultiHeadAttention(dim, heads, settings)
        self.ff = _feed_forward(dim, ff, dropout)
        self.drop = nn.Dropout(dropout)

    def forward(self, x, mask, record, layer, override):
        return _feed_forward_block(self, _self_attention_block(self, x, mask, record, ("enc_self", layer), override))


class DecoderLayer(nn.Module):
    def __init__(self, dim, heads, ff, dropout, settings):
        super().__init__()
        self.ln_self, self.ln_cross, self.ln_ff = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.self_attn = MultiHeadAttention(dim, heads, settings)
        self.cross_attn = MultiHeadAttention(dim, heads, settings)
        self.ff = _feed_forward(dim, ff, dropout)
        self.drop = nn.Dropout(dropout)

    def after_cross(self, y):
        return _feed_forward_block(self, y)

    def forward(self, y, memory, self_mask, cross_mask, record, layer, override):
        y = _self_attention_block(self, y, self_mask, record, ("dec_self", layer), override)
        a_out, alpha = self.cross_attn(self.ln_cross(y), memory, cross_mask, override.get(("cross", layer)))
        record[("cross", layer)] = (alpha, memory)
        return self.after_cross(y + self.drop(a_out)), y


class Transformer(nn.Module):
    """Encoder-decoder with the Seq2Seq interface (teacher forcing, ``scale``, ``alpha``).

    ``alpha`` [B, T, S] replaces the last layer's cross-attention of every head (as the
    LSTM's alpha); ``override`` {(kind, layer): [B, h, Q, K]} replaces any site's weights,
    kind in ``enc_self``, ``dec_self``, ``cross``. Output ``alpha`` = the last layer's
    cross-attention averaged over heads (what the agreement tables compare).
    """

    attention_params = frozenset({"self_attn", "cross_attn"})  # what the frozen variant trains

    def __init__(self, vocab_size: int, hidden: int = 64, layers: int = 2, heads: int = 4, ff: int = 128,
                 dropout: float = 0.0, attention: str = "standard", activation: str = "softmax",
                 score_scale: float = 1.0):
        super().__init__()
        self.hidden, self.layers, self.heads = hidden, layers, heads
        self.mode, self.activation = attention, activation
        settings = {"mode": attention, "activation": activation, "score_scale": score_scale}
        self.embed = nn.Embedding(vocab_size, hidden, padding_idx=0)
        self.enc_layers = nn.ModuleList(EncoderLayer(hidden, heads, ff, dropout, settings) for _ in range(layers))
        self.dec_layers = nn.ModuleList(DecoderLayer(hidden, heads, ff, dropout, settings) for _ in range(layers))
        self.enc_ln, self.dec_ln = nn.LayerNorm(hidden), nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, vocab_size)
        self.drop = nn.Dropout(dropout)

    def _inputs(self, ids, scale=None):
        x = self.embed(ids)
        if scale is not None:
            x = x * scale.unsqueeze(-1)
        return self.drop(x + sinusoid(ids.shape[1], self.hidden, ids.device))

    def forward(self, src, src_len, tgt_in, tgt_len, scale=None, alpha=None, override=None, rows=None):
        """As Seq2Seq.forward; ``rows`` [B, T] (bool) limits the logits to those positions, [N, V]."""
        override = dict(override or {})
        last = self.layers - 1
        if alpha is not None:
            override[("cross", last)] = alpha.unsqueeze(1).expand(-1, self.heads, -1, -1)
        record: dict = {}
        memory = self.encode(src, scale, override, record)
        y, before_cross = self.decode(tgt_in, memory, src != 0, override, record)
        return {"logits": self.out(y if rows is None else y[rows]), "alpha": record[("cross", last)][0].mean(1),
                "enc": memory, "dec": before_cross, "attention": record}

    def encode(self, src, scale=None, override=None, record=None):
        """The encoder memory [B, S, d]; ``record`` collects the self-attention sites."""
        record = {} if record is None else record
        x = self._inputs(src, scale)
        enc_mask = (src != 0)[:, None, :].expand(-1, src.shape[1], -1)
        for i, layer in enumerate(self.enc_layers):
            x = layer(x, enc_mask, record, i, override or {})
        return self.enc_ln(x)

    def decode(self, tgt_in, memory, src_ok, override=None, record=None):
        """(The final decoder states [B, T, d] before the output layer, the residual stream
        entering the last cross-attention)."""
        record = {} if record is None else record
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).tril()
        self_mask = causal[None] & (tgt_in != 0)[:, None, :]  # every query sees <s>
        cross_mask = src_ok[:, None, :].expand(-1, T, -1)
        y = self._inputs(tgt_in)
        before_cross = None
        for i, layer in enumerate(self.dec_layers):
            y, before_cross = layer(y, memory, self_mask, cross_mask, record, i, override or {})
        return self.dec_ln(y), before_cross

    # Decoding for beam search (decode.py): state tensors are batch first. The source is encoded
    # once; each step reruns the decoder over the whole prefix (exact and simple: these models
    # and sentences are small).
    def start(self, src, src_len) -> dict:
        return {"memory": self.encode(src), "src_ok": src != 0, "prefix": src.new_empty(len(src), 0)}

    def step(self, tokens, state: dict):
        prefix = torch.cat([state["prefix"], tokens[:, None]], dim=1)
        logits = self.out(self.decode(prefix, state["memory"], state["src_ok"])[0][:, -1])
        return torch.log_softmax(logits, -1), {**state, "prefix": prefix}

    def site_values(self, record, kind: str, layer: int) -> torch.Tensor:
        """f^h(x) of every key of one attention site: [B, h, K, d]."""
        module = (self.enc_layers[layer].self_attn if kind == "enc_self" else
                  self.dec_layers[layer].self_attn if kind == "dec_self" else self.dec_layers[layer].cross_attn)
        return module.values(record[(kind, layer)][1])

    def lexical_logprobs(self, enc, dec, targets, chunk_elems: int = 1 << 24, src_ok=None):
        """xi[b, t, s] = log p(y_t | every head of the last cross-attention attends only to s).

        ``enc`` = the encoder memory, ``dec`` = the residual stream entering the last
        cross-attention; with one-hot weights the attention output is W_O v(m_s) + b_O, and
        what follows it is position-wise. Real (t, s) pairs only, like the LSTM's probe.
        """
        cross = self.dec_layers[-1].cross_attn
        ctx = cross.o(cross.v(enc))  # [B, S, d]
        last = self.dec_layers[-1]
        return pairwise_logprobs(dec, ctx, lambda y: self.out(self.dec_ln(last.after_cross(y))), targets,
                                 self.out.out_features, src_ok, chunk_elems)
