"""IBM Model 1 fitted by EM (Brown et al. 1993; paper section 4, docs/methods.md 7).

p(f | e) = prod_j sum_i t(f_j | e_i) / (|e| + 1), the source e including a NULL
word. EM from uniform t: the E step gives each target token j the posterior over
source positions a_ij = t(f_j | e_i) / sum_i' t(f_j | e_i'), the M step sets
t(f | e) proportional to the summed posteriors. The first E step from uniform t
adds 1 / (|e| + 1) per co-occurring pair: the count table of the paper (eq. 16,
with NULL), so one iteration gives the paper's t(y | x) (eq. 17) and further
iterations sharpen it.

Everything is vectorised over flat (sentence, target position, source position)
triples, processed in chunks of sentences; t is stored only on the cells that
co-occur (a sorted key array), so memory grows with the co-occurrence table.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.data.probe_table import probe_table, within

CHUNK_PAIRS = 1 << 23  # triples per chunk


def source_cells(src_len: np.ndarray, tgt_len: np.ndarray):
    """For every target token (sentence by sentence), each source position of its sentence:
    (target token row, index into the concatenated sources) of the flat pairs."""
    n = np.repeat(src_len, tgt_len)  # source length per target token
    first = np.repeat(np.cumsum(src_len) - src_len, tgt_len)  # its sentence's first source index
    row = np.repeat(np.arange(len(n)), n)
    return row, first[row] + within(n)


class IBM1:
    def __init__(self, n_src: int, n_tgt: int):
        self.n_src, self.n_tgt = n_src, n_tgt  # source id n_src is NULL
        self.keys = np.zeros(0, dtype=np.int64)  # cell key = e * n_tgt + f, sorted
        self.t = np.zeros(0)
        self.log_likelihood: list[float] = []

    @property
    def null(self) -> int:
        return self.n_src

    def _chunks(self, src, tgt):
        """Flat triples per chunk: (sentence-local row id of target token, cell key)."""
        src_len = np.array([len(s) + 1 for s in src])  # + NULL
        tgt_len = np.array([len(t) for t in tgt])
        cum = np.cumsum(src_len * tgt_len)
        start = 0
        while start < len(src):
            done = cum[start - 1] if start else 0
            end = max(int(np.searchsorted(cum, done + CHUNK_PAIRS, side="right")), start + 1)
            yield self._triples(src[start:end], tgt[start:end], src_len[start:end], tgt_len[start:end])
            start = end

    def _triples(self, src, tgt, src_len, tgt_len):
        e = np.concatenate([np.append(np.asarray(s, dtype=np.int64), self.null) for s in src])
        f = np.concatenate([np.asarray(t, dtype=np.int64) for t in tgt])
        row, cell = source_cells(src_len, tgt_len)  # source lengths include NULL
        return row, e[cell] * self.n_tgt + f[row], len(f)

    def fit(self, src, tgt, iterations: int = 5) -> "IBM1":
        """EM from uniform t; ``log_likelihood`` has the corpus log-likelihood
        sum_j log(sum_i t(f_j | e_i) / (|e| + 1)) (without the length distribution)
        under t before each iteration's update."""
        src, tgt = list(src), list(tgt)
        length_term = -float(sum(len(f) * np.log(len(e) + 1) for e, f in zip(src, tgt)))
        self.keys = np.unique(np.concatenate([k for _, k, _ in self._chunks(src, tgt)]))
        self.t = np.full(len(self.keys), 1.0 / self.n_tgt)
        for _ in range(iterations):
            counts = np.zeros(len(self.keys))
            ll = length_term
            for row, keys, n_rows in self._chunks(src, tgt):
                cell = np.searchsorted(self.keys, keys)
                p = self.t[cell]
                z = np.bincount(row, weights=p, minlength=n_rows)
                ll += np.log(z).sum()
                counts += np.bincount(cell, weights=p / z[row], minlength=len(self.keys))
            self.log_likelihood.append(float(ll))
            totals = np.bincount(self.keys // self.n_tgt, weights=counts, minlength=self.n_src + 1)
            self.t = counts / totals[self.keys // self.n_tgt]
        return self

    def prob(self, e: np.ndarray, f: np.ndarray) -> np.ndarray:
        """t(f | e) elementwise (0 for pairs never seen together in training)."""
        keys = np.asarray(e, dtype=np.int64) * self.n_tgt + np.asarray(f, dtype=np.int64)
        idx = np.clip(np.searchsorted(self.keys, keys), 0, max(len(self.keys) - 1, 0))
        found = (self.keys[idx] == keys) if len(self.keys) else np.zeros(keys.shape, bool)
        return np.where(found, self.t[idx] if len(self.t) else 0.0, 0.0)

    def frame(self) -> pd.DataFrame:
        """The translation table t(f | e) on its non-zero cells (src_id = n_src is NULL)."""
        keep = self.t > 0
        return pd.DataFrame({"src_id": (self.keys[keep] // self.n_tgt).astype(np.int32),
                             "tgt_id": (self.keys[keep] % self.n_tgt).astype(np.int32), "t": self.t[keep]})

    def alignment_table(self, src, tgt, step: int = 0, floor: float = 1e-12):
        """Probe table (measure ``ibm1``) over every (example, target position) row:
        log of the alignment posterior of each source position, normalised over the
        source positions and NULL (paper eq. 19 with the EM-fitted t)."""
        src, tgt = list(src), list(tgt)
        src_len = np.array([len(s) for s in src])
        tgt_len = np.array([len(t) for t in tgt])
        ex = np.repeat(np.arange(len(src)), tgt_len)
        f = np.concatenate([np.asarray(t, dtype=np.int64) for t in tgt])
        e = np.concatenate([np.asarray(s, dtype=np.int64) for s in src])
        n = src_len[ex]
        row, cell = source_cells(src_len, tgt_len)
        p = self.prob(e[cell], f[row])
        z = np.bincount(row, weights=p, minlength=len(f)) + self.prob(np.full(len(f), self.null), f)
        flat = np.log(np.maximum(p / np.maximum(z[row], floor), floor))
        return probe_table({"step": np.full(len(f), step), "example": ex, "t": within(tgt_len), "n": n,
                            "measures": {"ibm1": flat}})
