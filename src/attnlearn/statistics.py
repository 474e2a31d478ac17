"""The project's statistics, in one module at the ground floor of the package.

It imports numpy and scipy only, so every stage may use it, and a rule that does reruns for a
change here alone (runtime/codedeps.py). scipy computes what it has: the t quantile and the
one-sample t test, Wilson's score interval (``binomtest(...).proportion_ci``), Pearson's r with
its Fisher-z interval (``pearsonr(...).confidence_interval``), Benjamini-Hochberg's adjustment
(``false_discovery_control``). Written here, where scipy has no function for it: the
prediction interval of one more draw, Holm's step-down adjustment and Newcombe's interval of a
difference of shares. Every function drops NaN values and answers NaN where too few are left.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import stats

LEVEL = 0.95
NAN = float("nan")


def finite(values) -> np.ndarray:
    """``values`` as float64, NaN dropped."""
    v = np.asarray(values, dtype=np.float64)
    return v[~np.isnan(v)]


def t_intervals(values, level: float = LEVEL) -> dict:
    """n, mean, sd (ddof 1), the t interval of the mean (``ci_low``, ``ci_high``) and the
    prediction interval of one more draw (``pi_low``, ``pi_high``), over the non-NaN values;
    NaN bounds below two values. Written out rather than scipy's
    ``ttest_1samp(...).confidence_interval``: that one is NaN where the values have no spread
    (this one is then the point itself: sd 0 where they differ only by rounding, ``constant``, as
    t_test reads them), and scipy has no prediction interval."""
    v = finite(values)
    n = len(v)
    sd = (0.0 if constant(v) else float(v.std(ddof=1))) if n > 1 else NAN
    out = {"n": n, "mean": float(v.mean()) if n else NAN, "sd": sd,
           "ci_low": NAN, "ci_high": NAN, "pi_low": NAN, "pi_high": NAN}
    if n > 1:
        t = stats.t.ppf(0.5 + level / 2, n - 1)
        half_ci, half_pi = t * out["sd"] / np.sqrt(n), t * out["sd"] * np.sqrt(1 + 1 / n)
        out.update(ci_low=out["mean"] - half_ci, ci_high=out["mean"] + half_ci,
                   pi_low=out["mean"] - half_pi, pi_high=out["mean"] + half_pi)
    return out


def t_interval(values, level: float = LEVEL) -> tuple[float, float, float, int]:
    """(mean, low, high, n) of ``t_intervals``: the t interval of the mean alone."""
    iv = t_intervals(values, level)
    return iv["mean"], float(iv["ci_low"]), float(iv["ci_high"]), iv["n"]


class TTest(NamedTuple):
    t: float
    p: float
    n: int  # the non-NaN values tested


def t_test(values, null: float = 0.0, alternative: str = "two-sided", tie: float = NAN) -> TTest:
    """scipy's one-sample t test of the mean of ``values`` (NaN dropped) against ``null``
    (``alternative`` as scipy's), NaN below two values. Where the values have no spread scipy
    divides by zero (and warns); the mean is then exact, so t is +-inf and p 0 on the side the
    mean lies (1 on the other, one-sided), and where it equals ``null`` t is NaN and p is ``tie``
    (NaN: no test; 1: the data sit on the null, the claims' reading). Values that differ only
    by floating-point rounding (``constant``) have no spread either: two parts' differences of
    the same count over the same rows (2471/8056 - 2332/8056 and 2487/8056 - 2348/8056) differ
    in their 17th digit, and scipy read that as t = 1e14, p = 1e-15."""
    v = finite(values)
    n = len(v)
    if n < 2:
        return TTest(NAN, NAN, n)
    if constant(v):
        return _no_spread(float(v[0]) - null, alternative, tie, n)
    res = stats.ttest_1samp(v, null, alternative=alternative)
    return TTest(float(res.statistic), float(res.pvalue), n)


def _no_spread(gap: float, alternative: str, tie: float, n: int) -> TTest:
    """t_test where every value is the same: ``gap`` = the value - null."""
    if gap == 0:
        return TTest(NAN, tie, n)
    against = {"two-sided": False, "greater": gap < 0, "less": gap > 0}[alternative]
    return TTest(float(np.copysign(np.inf, gap)), 1.0 if against else 0.0, n)


def constant(values, rel: float = 1e-9, scale: float | None = None) -> bool:
    """Whether the values (NaN dropped) do not vary, or vary only by floating-point rounding:
    their range is within ``rel`` of their largest magnitude, or of ``scale`` where they were
    computed from larger numbers (a difference of two values carries their rounding, not its
    own). A random baseline summed per replicate over the same rows differs in its 17th digit,
    and a correlation read that as r = -1.00, p = 1e-20. True for no value."""
    v = finite(values)
    return len(v) == 0 or float(np.ptp(v)) <= rel * (float(np.abs(v).max()) if scale is None else scale)


def correlation(x, y, level: float = LEVEL) -> dict:
    """Pearson's r of the pairs where neither is NaN (n, r), scipy's Fisher-z interval of it
    (r_low, r_high; from four pairs, where its standard error 1/sqrt(n - 3) is defined) and
    its two-sided p; all NaN below three pairs or where either side is ``constant``."""
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y, n = x[ok], y[ok], int(ok.sum())
    if n < 3 or constant(x) or constant(y):
        return {"n": n, "r": NAN, "r_low": NAN, "r_high": NAN, "p_value": NAN}
    res = stats.pearsonr(x, y)
    low, high = res.confidence_interval(level) if n > 3 else (NAN, NAN)
    return {"n": n, "r": float(res.statistic), "r_low": float(low), "r_high": float(high),
            "p_value": float(res.pvalue)}


def wilson(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval of the share k / n, scipy's (NaN for n = 0). Where the shares
    are 0 or 1 of a few runs, the normal (Wald) interval shrinks to a point; Wilson's does not."""
    if n == 0:
        return NAN, NAN
    ci = stats.binomtest(int(k), int(n)).proportion_ci(level, method="wilson")
    return float(ci.low), float(ci.high)


def newcombe(k1: int, n1: int, k2: int, n2: int, level: float = LEVEL) -> tuple[float, float]:
    """Newcombe's hybrid score interval of the difference of two shares k1/n1 - k2/n2, from
    their Wilson intervals (it stays inside [-1, 1] and does not collapse at 0 or n; scipy has
    none)."""
    (l1, u1), (l2, u2) = wilson(k1, n1, level), wilson(k2, n2, level)
    p1, p2 = k1 / n1, k2 / n2
    return (p1 - p2 - float(np.hypot(p1 - l1, u2 - p2)), p1 - p2 + float(np.hypot(u1 - p1, p2 - l2)))


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p values (NaN stay NaN and do not count in the family; scipy
    has no Holm)."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full_like(p, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    order = idx[np.argsort(p[idx], kind="stable")]
    m, running = len(order), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(p_values) -> np.ndarray:
    """Benjamini-Hochberg adjusted p values, scipy's; NaN stay NaN and do not count (scipy
    refuses them)."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full_like(p, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = stats.false_discovery_control(p[ok], method="bh")
    return out


def welch(a, b):
    """Welch's t test of a against b (independent samples, unequal variances), NaN dropped:
    scipy's result, with its confidence_interval()."""
    a, b = finite(a), finite(b)
    return stats.ttest_ind(a, b, equal_var=False)


def equal_spread_p(a, b, paired: bool) -> float:
    """p of the two samples' spreads being equal: Pitman and Morgan's test for paired values
    (their variances are equal exactly where a + b and a - b do not correlate), Brown and
    Forsythe's (Levene's about the medians, robust to the replicates' shape) for independent ones."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(stats.pearsonr(a + b, a - b).pvalue if paired else stats.levene(a, b, center="median").pvalue)
