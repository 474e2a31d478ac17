"""The bag-of-words logistic regression of the paper's appendix A.10 (Table 11).

L2-regularised logistic regression on length-normalised bag-of-words counts,
C swept over 19 values from 1e-5 to 1e4 and chosen on validation accuracy.
Its unigram coefficients are the "keywords" that the uniform model's probe
xi^uf is said to converge to: xi^lr at position l is coef[x_l] * (2y - 1),
pointing to the gold label like xi.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch

C_GRID = np.logspace(-5, 4, 19)


def bag_of_words(ids: pd.Series, vocab_size: int) -> sp.csr_matrix:
    """[examples, vocab] counts divided by each example's length (ids include <bos>, <eos>)."""
    lengths = ids.map(len).to_numpy()
    cols = np.concatenate([np.asarray(x, dtype=np.int64) for x in ids])
    rows = np.repeat(np.arange(len(ids)), lengths)
    vals = np.repeat(1.0 / lengths, lengths)
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(ids), vocab_size))


def fit_logreg(train: pd.DataFrame, valid: pd.DataFrame, vocab_size: int, c_grid=C_GRID, seed: int = 0):
    """Sweep C; returns (coefficients [vocab], sweep frame with columns C, valid_accuracy, chosen)."""
    # imported here: every proxy job imports this module, one in a dataset's proxies fits the
    # regression, and scikit-learn's import is 1.5 s on a slow 2-core machine
    from sklearn.linear_model import LogisticRegression

    x_tr, x_va = bag_of_words(train["ids"], vocab_size), bag_of_words(valid["ids"], vocab_size)
    y_tr, y_va = train["label"].to_numpy(), valid["label"].to_numpy()
    best, rows = None, []
    for c in c_grid:
        model = LogisticRegression(C=float(c), max_iter=2000, random_state=seed).fit(x_tr, y_tr)
        acc = float((model.predict(x_va) == y_va).mean())
        rows.append({"C": float(c), "valid_accuracy": acc})
        if best is None or acc > best[0]:  # the smallest C among ties: the strongest regularisation
            best = (acc, model)
    sweep = pd.DataFrame(rows)
    sweep["chosen"] = sweep["C"] == best[1].C
    return best[1].coef_[0].astype(np.float32), sweep


def logreg_probe(coef: np.ndarray, b: dict) -> torch.Tensor:
    """xi^lr [B, 1, S]: each position's word coefficient, signed toward the gold label."""
    weights = torch.as_tensor(coef, device=b["ids"].device)[b["ids"]]
    return (weights * (2 * b["label"] - 1).unsqueeze(-1)).unsqueeze(1)
