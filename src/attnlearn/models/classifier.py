"""BiLSTM classifier with additive attention (docs/methods.md 1.2, paper 2.4)."""

from __future__ import annotations

import torch
from torch import nn
from attnlearn.models.attention import attention_weights
from attnlearn.models.bilstm import encode_padded


class Classifier(nn.Module):
    """alpha = softmax(w2 . ReLU(W1 h_l + b1) + b2); logit = sum_l alpha_l beta_l,
    beta_l = w_beta . h_l + b."""

    attention_params = frozenset({"att_hidden", "att_score"})

    def __init__(self, vocab_size: int, embed: int = 300, hidden: int = 256, att_hidden: int = 256,
                 attention: str = "standard", activation: str = "softmax", score_scale: float = 1.0):
        super().__init__()
        self.mode, self.activation, self.score_scale = attention, activation, score_scale
        self.embed = nn.Embedding(vocab_size, embed, padding_idx=0)
        self.encoder = nn.LSTM(embed, hidden, batch_first=True, bidirectional=True)
        self.att_hidden = nn.Linear(2 * hidden, att_hidden)
        self.att_score = nn.Linear(att_hidden, 1)
        self.beta = nn.Linear(2 * hidden, 1)

    def encode(self, x, lengths):
        """BiLSTM outputs [B, S, 2H], 0 at pads. On a CPU one fused call per direction over the
        padded batch (models/bilstm.py: same numbers, 2-4x faster); cuDNN steps packed
        batches natively, and splitting its flattened weights would copy them every call."""
        return encode_padded(self.encoder, x, lengths)

    def forward(self, ids, lengths, scale=None, alpha=None, enc=None):
        """Logit [B], attention [B, S], per-position scores beta [B, S].

        ``enc`` [B, S, 2H] gives the encoder's outputs instead of computing them: a stacked model
        (models/stacked.py) runs all its members' recurrences as one batch and the rest of this
        forward per member, so the two cannot drift apart."""
        h = enc
        if h is None:
            x = self.embed(ids)
            if scale is not None:
                x = x * scale.unsqueeze(-1)
            h = self.encode(x, lengths)
        beta = self.beta(h).squeeze(-1)
        if alpha is None:
            scores = self.att_score(torch.relu(self.att_hidden(h))).squeeze(-1)
            alpha = attention_weights(scores, ids != 0, self.mode, self.activation, self.score_scale)
        return {"logit": (alpha * beta).sum(-1), "alpha": alpha, "beta": beta, "enc": h}
