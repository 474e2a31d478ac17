"""Sequence distributions of the copying experiments (paper 3.3, A.3, 6.2).

A task is a dict: ``vocab`` (content tokens 0..vocab-1), ``length`` (tokens per
input, drawn without replacement), ``sets`` (the vocabulary is split into this
many disjoint sets of vocab/sets tokens; each input is a permutation of tokens
from one set chosen at random: 2 gives the mixture of A.3), ``reorder``
(``false``: output = input copied; ``true``: output = input reordered by one
fixed random permutation of the positions, paper 6.2, drawn from
``reorder_seed``).

Every input ends with EOS (= vocab); the decoder reads BOS (= vocab + 1) then the
output, and predicts the output then EOS. ``gold[t]`` is the source position the
target token t comes from (EOS from EOS).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

TASK_KEYS = ("vocab", "length", "sets", "reorder", "reorder_seed")


@dataclass(frozen=True)
class CopyTask:
    vocab: int
    length: int
    sets: int = 1
    reorder: bool = False
    reorder_seed: int = 0

    def __post_init__(self):
        if self.vocab % self.sets:
            raise ValueError(f"vocab ({self.vocab}) must split into {self.sets} equal sets")
        if self.length > self.vocab // self.sets:
            raise ValueError(f"length ({self.length}) exceeds the set size ({self.vocab // self.sets})")

    @classmethod
    def from_dict(cls, spec: dict) -> "CopyTask":
        return cls(**{k: spec[k] for k in TASK_KEYS if k in spec})

    @property
    def eos(self) -> int:
        return self.vocab

    @property
    def bos(self) -> int:
        return self.vocab + 1

    @property
    def n_tokens(self) -> int:
        """Embedding rows the model needs (content, EOS, BOS)."""
        return self.vocab + 2

    def order(self) -> np.ndarray:
        """Target position t copies source position order[t] (identity unless reorder)."""
        if not self.reorder:
            return np.arange(self.length)
        return np.random.default_rng(self.reorder_seed).permutation(self.length)

    def gold(self) -> np.ndarray:
        """Aligned source position of every decoder output (EOS last)."""
        return np.append(self.order(), self.length)

    def sample(self, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` examples: source [n, length + 1] (ending with EOS) and the target
        outputs [n, length + 1] (ending with EOS)."""
        size = self.vocab // self.sets
        which = rng.integers(self.sets, size=n)
        tokens = np.argsort(rng.random((n, size)), axis=1)[:, :self.length] + size * which[:, None]
        eos = np.full((n, 1), self.eos)
        src = np.concatenate([tokens, eos], 1)
        tgt = np.concatenate([tokens[:, self.order()], eos], 1)
        return src, tgt

    def batch(self, n: int, rng: np.random.Generator, device="cpu") -> dict:
        src, tgt = self.sample(n, rng)
        bos = np.full((n, 1), self.bos)
        as_t = lambda a: torch.as_tensor(a, dtype=torch.long, device=device)  # noqa: E731
        return {"src": as_t(src), "tgt_in": as_t(np.concatenate([bos, tgt[:, :-1]], 1)), "tgt_out": as_t(tgt)}
