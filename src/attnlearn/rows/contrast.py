"""Rows set against each other: one dataset's replicates against another's column by column
(--contrast: the header question), and appendix A.9's two seeds' attentions (--seed-pairs).
Exploratory readings: each p alone, no Holm and no verdict."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.agreement.compare import best_step
from attnlearn.agreement.readable import interval, percent, points
from attnlearn.agreement.replicates import shared_b
from attnlearn.agreement.tables import select_rows
from attnlearn.rows.kept import HEADERS_OF, NAMES, table_folders
from attnlearn.statistics import equal_spread_p, holm, t_intervals, welch

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


def seed_pairs_markdown(pairs: pd.DataFrame) -> list[str]:
    """Each dataset's A.9 pairs with their mean [95% t interval], then the first dataset's
    difference of means from each other's above chance (at_best - baseline; Welch's t
    interval, p alone and under Holm over those comparisons)."""
    lines = ["| dataset | pairs (A / B) | A(α\\*, α^B\\*) per pair | mean [95% CI] | above chance: mean [95% CI] | "
             "max over B's checkpoints, per pair |", "|---" * 6 + "|"]
    above = {}
    for dataset, g in pairs.groupby("dataset", sort=False):
        above[dataset] = (g["at_best"] - g["baseline"]).to_numpy()
        at, over = t_intervals(g["at_best"]), t_intervals(above[dataset])
        lines.append(f"| {NAMES.get(dataset, dataset)} | " + ", ".join(f"{a}/{b}" for a, b in zip(g["a_run"], g["b_run"]))
                     + " | " + " / ".join(percent(v) for v in g["at_best"])
                     + f" | {interval(at['mean'], at['ci_low'], at['ci_high'], mark_past=False)}"
                     f" | {interval(over['mean'], over['ci_low'], over['ci_high'], mark_past=False)} | "
                     + " / ".join(percent(v) for v in g["max_over_b"]) + " |")
    first, *others = above  # A.9's claim: the first row's seeds agree less than the others'
    lines += ["", f"{NAMES.get(first, first)} against each other row, above chance (Welch's t; Holm over these "
                  "comparisons):", ""]
    return lines + welch_lines([(f"{NAMES.get(first, first)} - {NAMES.get(b, b)}", above[first], above[b])
                                for b in others])


def welch_lines(pairs: list[tuple[str, np.ndarray, np.ndarray]], adjusted=None) -> list[str]:
    """One line per (label, a, b): mean(a) - mean(b) in points with Welch's 95% t interval
    (independent samples, NaN dropped), its p alone and under Holm: over the lines (one family),
    or ``adjusted``, Holm's p computed over a larger family the caller names."""
    pairs = [(label, a[~np.isnan(a)], b[~np.isnan(b)]) for label, a, b in pairs]
    tests = [welch(a, b) for _, a, b in pairs]
    adjusted = holm([t.pvalue for t in tests]) if adjusted is None else adjusted
    lines = []
    for (label, a, b), test, p_holm in zip(pairs, tests, adjusted):
        ci = test.confidence_interval()
        lines.append(f"- {label}: {points(a.mean() - b.mean(), ci.low, ci.high)}, "
                     f"p = {test.pvalue:.2g} (Holm {p_holm:.2g}; n = {len(a)} and {len(b)})")
    return lines


# --contrast: the agreements above chance (the rows' random baselines differ where their texts'
# lengths do; a baseline is the dataset's, not the seeds'), then the best performance as it is
CONTRASTED = {"agr_alpha_xi_uniform": True, "agr_xi_proxy_xi_uniform": True, "agr_grad_xi_uniform": True,
              "best_perf": False}


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


def contrast_markdown(reps: pd.DataFrame) -> list[str]:
    """The first dataset's replicates against each other dataset's, column by column
    (CONTRASTED): the difference of means with its 95% interval and p, paired by seed where the
    replicates pair (contrast_values: the paired t test) and otherwise Welch's, then the same
    columns' seed spreads (spread_lines). Exploratory: each p alone, no Holm and no verdict (a
    contrast's tests are confirmatory only where a plan named them before its replicates
    trained, docs/methods.md 5.5)."""
    first, *others = reps["dataset"].unique()
    if not others:
        raise ValueError("--contrast sets one dataset's replicates against another's: give folders of two or more")
    name = lambda d: NAMES.get(d, d)  # noqa: E731
    compared = [(c, other, *contrast_values(reps, first, other, c)) for other in others for c in CONTRASTED]
    paired = all(p for *_, p in compared)
    how = ("paired by seed (every replicate has its twin on the same A, U and proxy seeds): the paired t interval"
           if paired else "Welch's 95% t interval (independent samples)")
    lines = [f"{name(first)} against {', '.join(map(name, others))}, per column (difference of means in points, "
             f"{how}). Exploratory: each p alone, no Holm and no verdict. Random baselines: "
             + "; ".join(f"{name(d)} {percent(reps.loc[reps['dataset'] == d, 'random_baseline'].mean())}"
                         for d in (first, *others)) + ".", ""]
    for c, other, a, b, pair in compared:
        test = stats.ttest_rel(a, b) if pair else welch(a, b)
        ci = test.confidence_interval()
        lines.append(f"- {HEADERS_OF[c]}{' above chance' if CONTRASTED[c] else ''}, {name(first)} - {name(other)}: "
                     f"{points(a.mean() - b.mean(), ci.low, ci.high)}, p = {test.pvalue:.2g} "
                     f"({'n = ' + str(len(a)) + ' pairs' if pair else f'n = {len(a)} and {len(b)}'})")
    spreads = [(f"{HEADERS_OF[c]}, {name(first)} / {name(other)}", a, b, pair) for c, other, a, b, pair in compared]
    return lines + ["", *spread_lines(spreads)]


def spread_lines(pairs: list[tuple[str, np.ndarray, np.ndarray, bool]]) -> list[str]:
    """One table row per (label, a, b, paired), the seed spreads: each sample's sd, their ratio
    and its test of equal spreads (statistics.equal_spread_p), p alone."""
    lines = ["The seed spread of the same columns (sd over the replicates, in points; equal spreads tested by "
             "Pitman and Morgan's test where the replicates pair, Brown-Forsythe's where they do not; "
             "exploratory: p alone):", "",
             "| column, rows | sd, first row | sd, second row | sd ratio | p (equal spreads) |", "|---" * 5 + "|"]
    for label, a, b, pair in pairs:
        sd_a, sd_b = np.std(a, ddof=1), np.std(b, ddof=1)
        lines.append(f"| {label} | {100 * sd_a:.1f} | {100 * sd_b:.1f} | {sd_a / sd_b:.2f} | "
                     f"{equal_spread_p(a, b, pair):.2g} |")
    return lines
