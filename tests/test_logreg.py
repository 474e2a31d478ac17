"""Table 11's logistic regression: features, sweep and the signed probe."""

import numpy as np
import pandas as pd
import torch

from attnlearn.training.logreg import C_GRID, bag_of_words, fit_logreg, logreg_probe


def test_bag_of_words_is_length_normalised():
    x = bag_of_words(pd.Series([[1, 5, 5, 2], [1, 3, 2]]), 6).toarray()
    np.testing.assert_allclose(x.sum(1), 1.0)
    assert x[0, 5] == 0.5 and x[1, 3] == 1 / 3


def test_sweep_covers_ten_orders_and_coefficients_find_the_keywords():
    rng = np.random.default_rng(0)
    n, vocab = 400, 30  # word 10 marks label 1, word 11 label 0, the rest is noise
    labels = rng.integers(0, 2, n)
    ids = [[1, *rng.integers(12, vocab, 6), 10 if y else 11, 2] for y in labels]
    table = pd.DataFrame({"ids": ids, "label": labels})
    coef, sweep = fit_logreg(table[:300], table[300:], vocab)
    assert len(sweep) == 19 and np.isclose(sweep["C"].min(), 1e-5) and np.isclose(sweep["C"].max(), 1e4)
    assert sweep["chosen"].sum() == 1 and sweep.loc[sweep["chosen"], "valid_accuracy"].item() == 1.0
    assert coef[10] > 0 > coef[11] and abs(coef[10]) > np.abs(coef[12:]).max()
    assert len(C_GRID) == 19


def test_probe_points_to_the_gold_label():
    coef = np.array([0, 0, 0, 2.0, -1.0], dtype=np.float32)
    b = {"ids": torch.tensor([[1, 3, 4, 2], [1, 3, 4, 2]]), "label": torch.tensor([1.0, 0.0])}
    xi = logreg_probe(coef, b)
    assert xi.shape == (2, 1, 4)
    assert xi[0, 0].tolist() == [0, 2, -1, 0] and xi[1, 0].tolist() == [0, -2, 1, 0]
