"""The agreement metric's rules, its exact baseline and Kendall's tau."""

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import kendalltau

from attnlearn.agreement.metric import (agreement_rows, baseline_rows, hit_positions, hit_rows, kendall_rows, load_measure,
                                 padded, summarize, top_k)
from attnlearn.data.probe_table import probe_table


def rows(*vectors):
    width = max(map(len, vectors))
    return np.array([list(v) + [np.nan] * (width - len(v)) for v in vectors], dtype=float)


def test_k_is_ceil_of_five_percent():
    assert list(top_k([1, 19, 20, 21, 40, 41])) == [1, 1, 1, 2, 2, 3]


def test_match_when_argmax_lands_on_top_of_b():
    a = rows([0.1, 0.7, 0.2])
    assert agreement_rows(a, rows([0.0, 5.0, 1.0]))[0] == 1
    assert agreement_rows(a, rows([9.0, 5.0, 1.0]))[0] == 0


def test_ties_count_as_a_match():
    # b has a tie for the top value at the argmax of a: nothing is strictly greater
    assert agreement_rows(rows([0.1, 0.7, 0.2]), rows([3.0, 3.0, 1.0]))[0] == 1


def test_argmax_of_first_argument_in_top_of_second_order_matters():
    a, b = rows([0.0, 1.0, 0.5]), rows([1.0, 0.0, 0.5])
    assert agreement_rows(a, b)[0] == 0 and agreement_rows(b, a)[0] == 0
    a2 = rows([0.0, 1.0, 0.5])
    b2 = rows([0.0, 2.0, 9.0])
    assert agreement_rows(a2, b2)[0] == 0  # argmax a (1) is second in b
    assert agreement_rows(b2, a2)[0] == 0


def test_n_equals_one_always_matches():
    assert agreement_rows(rows([0.3]), rows([-5.0]))[0] == 1
    assert baseline_rows(rows([-5.0]))[0] == 1


def test_k_two_allows_second_place_for_long_rows():
    n = 25  # k = 2
    b = np.arange(n, dtype=float)[None]
    a = np.zeros((1, n))
    a[0, n - 2] = 1.0  # argmax at the second largest entry of b
    assert agreement_rows(a, b)[0] == 1
    a[0, n - 2], a[0, n - 3] = 0.0, 1.0  # third largest: two entries above
    assert agreement_rows(a, b)[0] == 0


def test_pads_are_ignored():
    a = rows([0.1, 0.9], [0.5, 0.2, 0.3])
    b = rows([0.0, 1.0], [1.0, 0.0, 0.0])
    assert list(agreement_rows(a, b)) == [1, 1]


def test_exact_baseline_matches_monte_carlo():
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=200)
    b = padded(rng.integers(0, 5, size=lengths.sum()).astype(float), lengths)  # many ties
    exact = baseline_rows(b).mean()
    draws = 2000
    picks = (rng.random((draws, len(b))) * lengths).astype(int)
    mc = np.mean([agreement_rows(np.where(np.arange(b.shape[1]) == p[:, None], 1.0, 0.0) + 0 * b, b).mean()
                  for p in picks[:200]])
    assert abs(exact - mc) < 0.02
    assert exact != pytest.approx(0.05)


def test_hit_positions_are_the_pairwise_definition():
    """The sorted k-th value gives exactly the positions with fewer than k entries strictly
    above them, ties and pads included; the baseline and agreement both rest on it."""
    rng = np.random.default_rng(2)
    lengths = rng.integers(1, 70, size=300)
    b = padded(rng.integers(0, 4, size=lengths.sum()).astype(float), lengths)
    above = (b[:, None, :] > b[:, :, None]).sum(-1)
    expected = (above < np.ceil(0.05 * lengths)[:, None]) & ~np.isnan(b)
    assert np.array_equal(hit_positions(b), expected)
    assert np.array_equal(baseline_rows(b), expected.sum(1) / lengths)
    a = rng.random(b.shape) + 0 * b
    assert np.array_equal(agreement_rows(a, b), expected[np.arange(len(b)), np.nanargmax(a, axis=1)])


def test_baseline_without_ties_is_k_over_n():
    b = np.arange(30, dtype=float)[None]
    assert baseline_rows(b)[0] == pytest.approx(2 / 30)


def test_kendall_matches_scipy():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 12))
    b = np.round(rng.normal(size=(5, 12)), 1)
    b[:, 7:] = np.nan
    a[:, 7:] = np.nan
    ours = kendall_rows(a, b)
    ref = [kendalltau(a[i, :7], b[i, :7]).statistic for i in range(5)]
    assert np.allclose(ours, ref)


def test_gold_hit_is_strict():
    gold = np.zeros((1, 25))
    gold[0, 3] = 1
    a = np.zeros((1, 25))
    a[0, 4] = 1  # wrong position: A counts it (k = 2, one entry above), hit does not
    assert agreement_rows(a, gold)[0] == 1 and hit_rows(a, gold)[0] == 0


def test_summarize_aligns_rows_by_example_and_step():
    def table(examples, ts, vectors):
        return probe_table({"step": np.zeros(len(examples)), "example": np.array(examples), "t": np.array(ts),
                            "n": np.array([len(v) for v in vectors]),
                            "measures": {"m": np.concatenate(vectors)}})
    a = table([0, 1], [0, 0], [np.array([1.0, 0.0]), np.array([0.0, 1.0, 0.0])])
    b = table([1, 0, 2], [0, 0, 0], [np.array([0.0, 1.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0])])
    out = summarize(load_measure(a, "m"), load_measure(b, "m"), metrics=("agreement",))[0]
    assert out["n_rows"] == 2 and out["value"] == 0.5
    assert isinstance(a, pa.Table)
