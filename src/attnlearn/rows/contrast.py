"""Rows set against each other: one dataset's replicates against another's column by column
(--contrast: the header question), and appendix A.9's two seeds' attentions (--seed-pairs).
Exploratory readings, without a verdict: each p is printed alone and beside Holm's adjustment over
the comparisons printed with it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.agreement.compare import best_step
from attnlearn.agreement.replicates import shared_b
from attnlearn.agreement.tables import select_rows
from attnlearn.reporting.contrast_markdown import contrast_markdown, seed_pairs_markdown
from attnlearn.rows.kept import table_folders
from attnlearn.statistics import constant, equal_spread_p, holm, t_intervals, welch


def seed_pairs(folder: Path) -> pd.DataFrame:
    """Appendix A.9's "two seeds' attentions" per replicate that owns its B run (a part): A's
    attention at its best checkpoint against B's at B's best checkpoint (``at_best``), and its
    largest agreement over B's checkpoints (``max_over_b``); each with the random baseline."""
    rows = []
    for tables in table_folders(folder):
        reps = pd.read_parquet(tables / "table2_replicates.parquet")
        agr, perf = pd.read_parquet(tables / "agreement.parquet"), pd.read_parquet(tables / "performance.parquet")
        for rep in reps[~shared_b(reps)].itertuples():
            b = rep.b_runs[0]
            pair = select_rows(agr, a_measure="alpha", b_measure="alpha", a_run=rep.a_run, b_run=b).set_index("b_step")
            b_star = best_step(perf[perf["run"] == b])
            rows.append({"dataset": rep.dataset, "a_run": rep.a_run, "b_run": b, "b_step": b_star,
                         "at_best": float(pair.loc[b_star, "value"]), "max_over_b": float(pair["value"].max()),
                         "baseline": float(pair.loc[b_star, "baseline"])})
    return pd.DataFrame(rows)


def seed_pairs_lines(pairs: pd.DataFrame) -> list[str]:
    """Each dataset's A.9 pairs with their mean [95% t interval], then the first dataset's
    difference of means from each other's above chance (at_best - baseline; Welch's t
    interval, p alone and under Holm over those comparisons), as Markdown."""
    groups = dict(tuple(pairs.groupby("dataset", sort=False)))
    above = {d: (g["at_best"] - g["baseline"]).to_numpy() for d, g in groups.items()}
    first, *others = above  # A.9's claim: the first row's seeds agree less than the others'
    return seed_pairs_markdown(pairs, {d: t_intervals(g["at_best"]) for d, g in groups.items()},
                               {d: t_intervals(a) for d, a in above.items()},
                               welch_tests([(first, b, above[first], above[b]) for b in others]))


def welch_tests(pairs: list[tuple[str, str, np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """One row per (first, other, a, b): mean(a) - mean(b) with Welch's 95% t interval
    (independent samples, NaN dropped), its p alone and under Holm over the rows (one family)."""
    pairs = [(first, other, a[~np.isnan(a)], b[~np.isnan(b)]) for first, other, a, b in pairs]
    tests = [welch(a, b) for *_, a, b in pairs]
    rows = []
    for (first, other, a, b), test, p_holm in zip(pairs, tests, holm([t.pvalue for t in tests])):
        ci = test.confidence_interval()
        rows.append({"first": first, "other": other, "difference": a.mean() - b.mean(), "ci_low": ci.low,
                     "ci_high": ci.high, "p_value": test.pvalue, "p_holm": p_holm, "n_first": len(a),
                     "n_other": len(b)})
    return pd.DataFrame(rows, columns=["first", "other", "difference", "ci_low", "ci_high", "p_value", "p_holm",
                                       "n_first", "n_other"])


# --contrast: every column of Table 2's row, in its order: the agreements above chance (the rows'
# random baselines differ where their texts' lengths do; a baseline is the dataset's, not the
# seeds'), then the baseline, the contextualized performances and the best performance as they are
CONTRASTED = {"agr_alpha_xi_uniform": True, "agr_xi_proxy_xi_uniform": True, "agr_grad_xi_uniform": True,
              "agr_alpha_xi_standard": True, "random_baseline": False, "ctx_perf_xi_uniform": False,
              "ctx_perf_xi_standard": False, "best_perf": False}


SEEDS = ["a_run", "u_run", "p_run"]  # a replicate's seeds, by its runs' names


def contrast_values(reps: pd.DataFrame, first: str, other: str, column: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """The column (above chance where CONTRASTED says) of ``first``'s and ``other``'s replicates,
    and whether they pair by seed: every replicate of each has a twin with the same A, U and
    proxy seeds in the other (then in the same order, twin by twin; a pair missing a value
    dropped); otherwise all of each, as independent samples."""
    def col(g):
        return (g[column] - g["random_baseline"] if CONTRASTED[column] else g[column]).to_numpy(dtype=float)
    a, b = reps[reps["dataset"] == first], reps[reps["dataset"] == other]
    keys = lambda g: [tuple(r) for r in g[SEEDS].itertuples(index=False)]  # noqa: E731
    if len(a) == len(b) and sorted(keys(a)) == sorted(keys(b)) and len(set(keys(a))) == len(a):
        b = b.set_index(SEEDS).loc[keys(a)].reset_index()
        x, y = col(a), col(b)
        ok = ~(np.isnan(x) | np.isnan(y))
        return x[ok], y[ok], True
    x, y = col(a), col(b)
    return x[~np.isnan(x)], y[~np.isnan(y)], False


def contrast_table(reps: pd.DataFrame) -> pd.DataFrame:
    """The first dataset's replicates against each other dataset's, column by column
    (CONTRASTED, those the replicate tables hold; run B's over the replicates that own it, as
    pooling.pool leaves them): the difference of means with its 95% interval and p, paired by seed where the
    replicates pair (contrast_values: the paired t test) and otherwise Welch's; and each
    sample's sd with the test of equal spreads (statistics.equal_spread_p). Each p alone; a
    column defined on no replicate of a side is left out."""
    first, *others = reps["dataset"].unique()
    if not others:
        raise ValueError("--contrast sets one dataset's replicates against another's: give folders of two or more")
    rows = []
    for other in others:
        for c in (c for c in CONTRASTED if c in reps):
            a, b, pair = contrast_values(reps, first, other, c)
            if min(len(a), len(b)) == 0:
                continue
            rows.append({"first": first, "other": other, "column": c, "above_chance": CONTRASTED[c], "paired": pair,
                         "difference": a.mean() - b.mean(), "n_first": len(a), "n_other": len(b),
                         **spread_and_test(a, b, pair)})
    return pd.DataFrame(rows)


# a side with one replicate (a row's first part kept, the rest training) has no spread, so the
# difference has no interval and no test: printed alone, not as NaN; likewise a difference the
# same in every pair, or two samples each the same throughout (two rows' baselines, each the
# same in every replicate): scipy's t would divide by zero
NO_TEST = dict.fromkeys(["ci_low", "ci_high", "p_value", "sd_first", "sd_other", "spread_p"], np.nan)


def spread_and_test(a: np.ndarray, b: np.ndarray, pair: bool) -> dict:
    """The difference's 95% interval and p (paired t, or Welch's), each side's sd and the test
    of equal spreads; no interval and no p where either side has one value or the difference no
    spread (``no_spread`` says which)."""
    if min(len(a), len(b)) < 2:
        return {**NO_TEST, "no_spread": False}
    sds = {"sd_first": sd(a), "sd_other": sd(b)}
    if no_spread(a, b, pair):  # the spreads' test too: a - b, or each side, has no spread to correlate
        return {**NO_TEST, **sds, "no_spread": True}
    test = stats.ttest_rel(a, b) if pair else welch(a, b)
    ci = test.confidence_interval()
    return {"ci_low": ci.low, "ci_high": ci.high, "p_value": test.pvalue, **sds,
            "spread_p": spread_test(a, b, pair), "no_spread": False}


def sd(values: np.ndarray) -> float:
    """The sample sd, 0 where the values differ by rounding alone (statistics.constant)."""
    return 0.0 if constant(values) else float(np.std(values, ddof=1))


def no_spread(a: np.ndarray, b: np.ndarray, pair: bool) -> bool:
    """Whether the difference has no spread to test: each side the same throughout, or, paired,
    the differences varying by no more than rounding of the values themselves (rounding in a
    difference near 0 is large against the difference alone)."""
    if constant(a) and constant(b):
        return True
    return pair and constant(a - b, scale=max(float(np.abs(a).max()), float(np.abs(b).max())))


def spread_test(a: np.ndarray, b: np.ndarray, pair: bool) -> float:
    """statistics.equal_spread_p, or NaN where it reads nothing: a side without spread (its sd
    0: a ratio of infinity), or two pairs (Pitman and Morgan's correlation of two points is
    +-1 whatever the spreads) or a + b without spread (no correlation to read)."""
    if constant(a) or constant(b) or (pair and (len(a) < 3 or constant(a + b))):
        return np.nan
    return equal_spread_p(a, b, pair)


def contrast_lines(reps: pd.DataFrame) -> list[str]:
    """contrast_table as Markdown, with each dataset's mean random baseline (the agreements are
    read above chance because the rows' baselines differ where their texts' lengths do)."""
    table = contrast_table(reps)
    datasets = reps["dataset"].unique()
    return contrast_markdown(table, {d: reps.loc[reps["dataset"] == d, "random_baseline"].mean() for d in datasets})
