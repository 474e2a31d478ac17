"""The bag-of-words proxy model (paper 2.3, eq. 5-6).

Mean of the source embeddings -> linear -> softmax over the target vocabulary
(translation) or -> sigmoid (classification). xi^px[t, s] is its log
probability of y_t from the single word x_s. The output layer's bias is trained
but, as in the reference code, left out of the probe unless ``output_bias``
(docs/methods.md 13): a word's translation is softmax(E[x] W^T).
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.functional import logsigmoid


class BagOfWords(nn.Module):
    def __init__(self, vocab_size: int, embed: int, n_out: int, output_bias: bool = False):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed, padding_idx=0)
        self.out = nn.Linear(embed, n_out)
        self.output_bias = output_bias  # in the probe (word_logits); training always has it

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1)
        mean = (self.embed(ids) * mask).sum(1) / mask.sum(1).clamp(min=1)
        return self.out(mean)

    def word_logits(self, ids):
        """Output logits from each word alone: [B, S, n_out]."""
        return nn.functional.linear(self.embed(ids), self.out.weight, self.out.bias if self.output_bias else None)

    def lexical_logprobs(self, src, targets):
        """Translation: [B, T, S] log p(y_t | x_s alone)."""
        logp = torch.log_softmax(self.word_logits(src), -1)  # [B, S, V]
        idx = targets.unsqueeze(1).expand(-1, src.shape[1], -1)  # [B, S, T]
        return logp.gather(-1, idx).transpose(1, 2)

    def label_logprobs(self, ids, labels):
        """Classification: [B, S] log p(gold label | x_s alone)."""
        sign = (2 * labels - 1).unsqueeze(-1).to(torch.float32)
        return logsigmoid(sign * self.word_logits(ids).squeeze(-1))
