"""LSTM encoder-decoder with bilinear attention (METHODS.md 1.1, paper 2.1)."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .attention import attention_weights


class Seq2Seq(nn.Module):
    """Shared embeddings; 2-layer BiLSTM encoder; LSTM decoder (teacher forcing).

    score(t, s) = (W_a d_t) . e_s; c_t = W_p sum_s alpha_ts e_s;
    p(y_t) = softmax(W_o ReLU(W_f [d_t; c_t])).
    """

    attention_params = ("attn",)  # what the frozen variant trains

    def __init__(self, vocab_size: int, hidden: int = 256, layers: int = 2, dropout: float = 0.5,
                 attention: str = "standard", activation: str = "softmax", score_scale: float = 1.0):
        super().__init__()
        self.hidden, self.layers = hidden, layers
        self.mode, self.activation, self.score_scale = attention, activation, score_scale
        self.embed = nn.Embedding(vocab_size, hidden, padding_idx=0)
        lstm_dropout = dropout if layers > 1 else 0.0
        self.encoder = nn.LSTM(hidden, hidden, layers, batch_first=True, bidirectional=True, dropout=lstm_dropout)
        self.decoder = nn.LSTM(hidden, hidden, layers, batch_first=True, dropout=lstm_dropout)
        self.attn = nn.Linear(hidden, 2 * hidden, bias=False)  # W_a
        self.proj = nn.Linear(2 * hidden, hidden)  # W_p
        self.combine = nn.Linear(2 * hidden, hidden)  # W_f
        self.out = nn.Linear(hidden, vocab_size)  # W_o

    def encode(self, src, src_len, scale=None):
        """Encoder states e [B, S, 2H] and the decoder's initial state.

        ``scale`` [B, S] multiplies each source embedding (for gradient saliency).
        """
        x = self.embed(src)
        if scale is not None:
            x = x * scale.unsqueeze(-1)
        packed = pack_padded_sequence(x, src_len.cpu(), batch_first=True, enforce_sorted=False)
        out, (h, c) = self.encoder(packed)
        enc, _ = pad_packed_sequence(out, batch_first=True, total_length=src.shape[1])
        # average the two directions, layer by layer
        h = h.view(self.layers, 2, *h.shape[1:]).mean(1)
        c = c.view(self.layers, 2, *c.shape[1:]).mean(1)
        return enc, (h.contiguous(), c.contiguous())

    def decode(self, tgt_in, tgt_len, state):
        """Decoder states [B, T, H]. The decoder is causal, so right padding does
        not change its outputs at real positions: no packing needed (faster)."""
        return self.decoder(self.embed(tgt_in), state)[0]

    def scores(self, dec, enc):
        return torch.einsum("bth,bsh->bts", self.attn(dec), enc)

    def readout(self, dec, ctx):
        return self.out(torch.relu(self.combine(torch.cat([dec, ctx], dim=-1))))

    def forward(self, src, src_len, tgt_in, tgt_len, scale=None, alpha=None):
        """Logits [B, T, V], attention [B, T, S], encoder and decoder states.

        ``alpha`` overrides the attention weights (probing and erasure tests).
        """
        enc, state = self.encode(src, src_len, scale)
        dec = self.decode(tgt_in, tgt_len, state)
        mask = (src != 0).unsqueeze(1).expand(-1, dec.shape[1], -1)
        if alpha is None:
            alpha = attention_weights(self.scores(dec, enc), mask, self.mode, self.activation, self.score_scale)
        ctx = self.proj(torch.bmm(alpha, enc))
        return {"logits": self.readout(dec, ctx), "alpha": alpha, "enc": enc, "dec": dec}

    # Incremental decoding for beam search (decode.py): state tensors are batch first.
    def start(self, src, src_len) -> dict:
        enc, (h, c) = self.encode(src, src_len)
        return {"enc": enc, "mask": src != 0, "h": h.transpose(0, 1), "c": c.transpose(0, 1)}

    def step(self, tokens, state: dict):
        """One decoder step for tokens [N] -> (log p(next) [N, V], new state)."""
        hc = (state["h"].transpose(0, 1).contiguous(), state["c"].transpose(0, 1).contiguous())
        dec, (h, c) = self.decoder(self.embed(tokens[:, None]), hc)
        enc, mask = state["enc"], state["mask"][:, None, :]
        alpha = attention_weights(self.scores(dec, enc), mask, self.mode, self.activation)
        logits = self.readout(dec, self.proj(torch.bmm(alpha, enc)))[:, 0]
        return torch.log_softmax(logits, -1), {**state, "h": h.transpose(0, 1), "c": c.transpose(0, 1)}

    def lexical_logprobs(self, enc, dec, targets, chunk_elems: int = 1 << 24):
        """xi[b, t, s] = log p(y_t | context = W_p e_s, d_t) (paper eq. 4).

        The T x S x V logits are built in chunks of target steps so that one
        chunk holds about ``chunk_elems`` numbers.
        """
        B, T, _ = dec.shape
        S = enc.shape[1]
        H = self.hidden
        w_dec, w_ctx = self.combine.weight[:, :H], self.combine.weight[:, H:]
        from_dec = dec @ w_dec.T  # [B, T, H]
        from_ctx = self.proj(enc) @ w_ctx.T + self.combine.bias  # [B, S, H]
        step = max(1, chunk_elems // max(1, B * S * self.out.out_features))
        parts = []
        for t0 in range(0, T, step):
            hidden = torch.relu(from_dec[:, t0:t0 + step, None, :] + from_ctx[:, None, :, :])
            logits = self.out(hidden)  # [B, t, S, V]
            y = targets[:, t0:t0 + step, None, None].expand(-1, -1, S, 1)
            parts.append((logits.gather(-1, y) - torch.logsumexp(logits, -1, keepdim=True)).squeeze(-1))
        return torch.cat(parts, dim=1)
