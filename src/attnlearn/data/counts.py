"""Co-occurrence count table and the IBM Model 1 style quantities (paper section 4).

c[x, y] = sum over training pairs of count_x(source) * count_y(target) / |source|,
over the wrapped source (<s> ... </s>) and the decoder's outputs (y_1 .. y_T </s>);
for classification the target is the label. t(y | x) = c[x, y] / sum_y' c[x, y'] (eq. 17).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp


def _bag_matrix(seqs, n_cols: int, weights=None) -> sp.csr_matrix:
    lengths = np.array([len(s) for s in seqs])
    cols = np.concatenate([np.asarray(s, dtype=np.int64) for s in seqs])
    rows = np.repeat(np.arange(len(seqs)), lengths)
    data = np.ones(len(cols)) if weights is None else np.repeat(weights, lengths)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(seqs), n_cols))


def count_matrix(src_seqs, tgt_seqs, n_src: int, n_tgt: int) -> sp.csr_matrix:
    """[n_src, n_tgt] sparse co-occurrence counts, each pair weighted 1/|source|."""
    inv_len = 1.0 / np.array([len(s) for s in src_seqs])
    return (_bag_matrix(src_seqs, n_src, inv_len).T @ _bag_matrix(tgt_seqs, n_tgt)).tocsr()


def translation_sides(table: pd.DataFrame):
    return table["src_ids"].tolist(), [t[1:] for t in table["tgt_ids"]]


def classification_sides(table: pd.DataFrame):
    return table["ids"].tolist(), [[int(y)] for y in table["label"]]


def count_frame(counts: sp.csr_matrix) -> pd.DataFrame:
    """Non-zero cells with t(y|x) beside the count."""
    coo = counts.tocoo()
    row_sums = np.asarray(counts.sum(1)).ravel()
    return pd.DataFrame({"src_id": coo.row.astype(np.int32), "tgt_id": coo.col.astype(np.int32),
                         "count": coo.data, "t_tgt_given_src": coo.data / row_sums[coo.row]})


def translation_table(counts: sp.csr_matrix) -> sp.csr_matrix:
    """t(y | x) as a sparse row-normalised matrix."""
    row_sums = np.asarray(counts.sum(1)).ravel()
    return sp.diags(1.0 / np.where(row_sums > 0, row_sums, 1.0)) @ counts


def count_scores(t_table: sp.csr_matrix, src: np.ndarray, tgt: np.ndarray, floor: float = 1e-12) -> np.ndarray:
    """log t(y_t | x_s) for padded id arrays src [B, S], tgt [B, T] -> [B, T, S].

    Monotone in the alignment probability of eq. 19, so it ranks positions the same way.
    """
    dense_rows = t_table[src.ravel()].toarray().reshape(*src.shape, -1)  # [B, S, V_tgt]
    idx = np.broadcast_to(tgt[:, None, :], (src.shape[0], src.shape[1], tgt.shape[1]))
    return np.log(np.maximum(np.take_along_axis(dense_rows, idx, -1), floor)).transpose(0, 2, 1)
