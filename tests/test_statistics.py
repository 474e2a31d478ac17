"""The project's statistics (src/attnlearn/statistics.py) against scipy or a textbook value, and
their edge cases: NaN dropped, too few values (NaN), no spread."""

import numpy as np
import pytest
from scipy import stats

from attnlearn import statistics as S

Z2 = stats.norm.ppf(0.975) ** 2


def test_t_intervals_match_scipy_and_drop_nan():
    v = np.array([0.31, 0.42, 0.25, 0.38, np.nan])
    iv = S.t_intervals(v)
    x = v[~np.isnan(v)]
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=stats.sem(x))  # sem: ddof 1
    assert (iv["n"], iv["mean"], iv["sd"]) == (4, pytest.approx(x.mean()), pytest.approx(x.std(ddof=1)))
    assert (iv["ci_low"], iv["ci_high"]) == (pytest.approx(lo), pytest.approx(hi))
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(0.9)
    assert (S.t_intervals(x, 0.9)["ci_low"], S.t_intervals(x, 0.9)["ci_high"]) == (pytest.approx(ci.low),
                                                                                   pytest.approx(ci.high))
    # prediction interval for one more draw: mean +- t sd sqrt(1 + 1/n)
    lo, hi = stats.t.interval(0.95, len(x) - 1, loc=x.mean(), scale=x.std(ddof=1) * np.sqrt(1 + 1 / len(x)))
    assert (iv["pi_low"], iv["pi_high"]) == (pytest.approx(lo), pytest.approx(hi))


def test_t_intervals_of_one_value_none_or_no_spread():
    one = S.t_intervals([0.3, np.nan])
    assert (one["n"], one["mean"]) == (1, 0.3) and np.isnan([one["sd"], one["ci_low"], one["pi_high"]]).all()
    none = S.t_intervals([np.nan])
    assert none["n"] == 0 and np.isnan(none["mean"])
    flat = S.t_intervals([0.5, 0.5, 0.5])  # no spread: the interval is the point (scipy's is NaN)
    assert flat["ci_low"] == flat["ci_high"] == flat["pi_low"] == 0.5


def test_t_interval_is_t_intervals_mean_and_ci():
    x = [0.31, 0.28, 0.35, 0.30, np.nan]
    iv = S.t_intervals(x)
    assert S.t_interval(x) == (iv["mean"], iv["ci_low"], iv["ci_high"], 4)
    mean, low, high, n = S.t_interval([0.3])
    assert (mean, n) == (0.3, 1) and np.isnan([low, high]).all()


@pytest.mark.parametrize("alternative", ["two-sided", "greater", "less"])
def test_t_test_is_scipys_with_nan_dropped(alternative):
    x = np.random.default_rng(0).normal(3.4, 1.0, size=25)
    res = S.t_test(np.append(x, np.nan), 3.0, alternative)
    ref = stats.ttest_1samp(x, 3.0, alternative=alternative)
    assert res == (ref.statistic, ref.pvalue, 25)
    assert np.isnan(S.t_test([1.0, np.nan], 0.0).p)  # one value: no test


def test_t_test_without_spread():
    # every value the same: the mean is exact; 0.1 * 3 / 3 is not 0.1 in floats, yet no spread
    assert S.t_test([0.1] * 3, 0.0) == (np.inf, 0.0, 3)
    assert S.t_test([0.1] * 3, 1.0) == (-np.inf, 0.0, 3)
    assert S.t_test([0.1] * 3, 1.0, "greater") == (-np.inf, 1.0, 3)
    assert S.t_test([0.1] * 3, 0.0, "less") == (np.inf, 1.0, 3)
    on_null = S.t_test([0.1] * 3, 0.1)
    assert np.isnan(on_null.t) and np.isnan(on_null.p)
    assert S.t_test([0.1] * 3, 0.1, tie=1.0).p == 1.0  # the claims' reading: the data sit on the null
    # equal up to rounding (the 20-epoch Multi30k parts 1 and 2: 139 more hits of 8,056 rows each):
    # no spread either, not scipy's t = 1e14, p = 1e-15 with a precision-loss warning
    same = [2471 / 8056 - 2332 / 8056, 2487 / 8056 - 2348 / 8056]
    assert np.ptp(same) > 0
    assert S.t_test(same, 0.0) == (np.inf, 0.0, 2)
    rounded = S.t_intervals(same)  # and its interval is the point, as t_test reads it
    assert rounded["sd"] == 0.0 and rounded["ci_low"] == rounded["ci_high"] == rounded["mean"]


def test_correlation_is_scipys_pearson_with_the_fisher_z_interval():
    rng = np.random.default_rng(0)
    x = rng.normal(size=12)
    y = x + rng.normal(size=12)
    c = S.correlation(np.append(x, np.nan), np.append(y, 1.0))  # the pair with a NaN is dropped
    r, p = stats.pearsonr(x, y)
    half = stats.norm.ppf(0.975) / np.sqrt(12 - 3)  # Fisher's z: se 1 / sqrt(n - 3)
    assert (c["n"], c["r"], c["p_value"]) == (12, pytest.approx(r), pytest.approx(p))
    assert (c["r_low"], c["r_high"]) == (pytest.approx(np.tanh(np.arctanh(r) - half)),
                                         pytest.approx(np.tanh(np.arctanh(r) + half)))


def test_correlation_edge_cases():
    assert np.isnan(S.correlation([1, 2, np.nan], [3, 4, 5])["r"])  # two pairs: no correlation
    three = S.correlation([1, 2, 3], [3, 5, 4])
    assert not np.isnan(three["r"]) and np.isnan(three["r_low"])  # three pairs: r, no interval
    assert not np.isnan(S.correlation([1, 2, 3, 5], [3, 4, 5, 5])["r_low"])  # four pairs: an interval
    assert np.isnan(S.correlation([1, 1, 1, 1], [3, 4, 5, 6])["r"])  # a constant reading
    line = S.correlation([1, 2, 3, 4, 5], [2, 4, 6, 8, 10])
    assert (line["r"], line["r_low"], line["r_high"]) == (pytest.approx(1.0), pytest.approx(1.0), 1.0)


def test_wilson_interval_of_known_shares():
    assert S.wilson(8, 10) == pytest.approx((0.4902, 0.9433), abs=1e-4)  # the textbook case
    # k = 0 and k = n: closed forms; the Wald interval would be the point 0 or 1
    assert S.wilson(0, 4) == pytest.approx((0.0, Z2 / (4 + Z2)))
    assert S.wilson(4, 4) == pytest.approx((4 / (4 + Z2), 1.0))
    assert np.isnan(S.wilson(0, 0)).all()
    # the score formula: (p + z^2/2n +- z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)
    k, n, z = 3, 7, np.sqrt(Z2)
    p = k / n
    centre, half = (p + Z2 / (2 * n)) / (1 + Z2 / n), z * np.sqrt(p * (1 - p) / n + Z2 / (4 * n * n)) / (1 + Z2 / n)
    assert S.wilson(k, n) == pytest.approx((centre - half, centre + half), rel=1e-12)


def test_newcombe_interval_of_a_difference_of_shares():
    # Newcombe (1998), table II, example (a): 56/70 - 48/80, method 10: 0.0524 to 0.3339
    assert S.newcombe(56, 70, 48, 80) == pytest.approx((0.0524, 0.3339), abs=1e-4)
    low, high = S.newcombe(0, 5, 5, 5)
    assert -1 <= low < -0.5 and high < 0  # inside [-1, 1], and not the point -1


def test_holm_and_benjamini_hochberg():
    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan, 0.5])
    ok = ~np.isnan(p)
    # Holm by hand: sorted 0.005, 0.01, 0.03, 0.04, 0.5 times 5, 4, 3, 2, 1, running max
    assert np.allclose(S.holm(p)[ok], [0.04, 0.09, 0.09, 0.025, 0.5])
    assert S.holm([0.01, 0.04, 0.03, np.nan]).tolist()[:3] == pytest.approx([0.03, 0.06, 0.06])
    assert np.array_equal(S.benjamini_hochberg(p)[ok], stats.false_discovery_control(p[ok], method="bh"))
    assert np.isnan(S.holm(p)[4]) and np.isnan(S.benjamini_hochberg(p)[4])  # NaN stay NaN, not counted
    assert S.holm([]).size == 0 and np.isnan(S.benjamini_hochberg([np.nan])).all()
    assert S.holm([0.6, 0.7]).tolist() == [1.0, 1.0]  # capped at 1


def test_a_column_apart_by_rounding_alone_is_constant_and_has_no_correlation():
    """A random baseline summed per replicate over the same rows differs in its last digits:
    scipy read that noise as r = -1.00, p = 1e-20."""
    x = np.arange(6.0)
    y = np.array([0.0797, 0.07970000000000001] * 3)
    assert np.ptp(y) > 0 and S.constant(y) and S.constant([0.0, 0.0, np.nan]) and S.constant([])
    assert not S.constant([0.0797, 0.0798, 0.0797]) and not S.constant([0.0, 1e-300])
    assert np.isnan(S.correlation(x, y)["r"]) and np.isnan(S.correlation(x, y)["p_value"])
    assert np.isnan(S.correlation(y, x)["r"])
    assert S.correlation(x, [0.0797, 0.0798, 0.0797, 0.0799, 0.08, 0.0801])["r"] > 0
