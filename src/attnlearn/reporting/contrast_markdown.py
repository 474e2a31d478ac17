"""Rows set against each other, as Markdown: appendix A.9's two seeds' attentions (reproduction_rows.py
--seed-pairs) and one dataset's replicates against another's column by column (--contrast), from
the intervals and tests attnlearn.rows.contrast computed. Exploratory readings: each p alone
(A.9's Welch comparisons also under Holm), no verdict."""

from __future__ import annotations

import pandas as pd

from attnlearn.agreement.readable import interval, percent, points
from attnlearn.reporting.row_markdown import HEADERS_OF, dataset_name


def seed_pairs_markdown(pairs: pd.DataFrame, at: dict[str, dict], above: dict[str, dict],
                        tests: pd.DataFrame) -> list[str]:
    """Each dataset's A.9 pairs with the mean [95% t interval] of A(alpha*, alpha^B*) (``at``) and
    of it above chance (``above``), then the first dataset's difference from each other's above
    chance (``tests``: contrast.welch_tests)."""
    lines = ["| dataset | pairs (A / B) | A(α\\*, α^B\\*) per pair | mean [95% CI] | above chance: mean [95% CI] | "
             "max over B's checkpoints, per pair |", "|---" * 6 + "|"]
    for dataset, g in pairs.groupby("dataset", sort=False):
        a, o = at[dataset], above[dataset]
        lines.append(f"| {dataset_name(dataset)} | " + ", ".join(f"{x}/{y}" for x, y in zip(g["a_run"], g["b_run"]))
                     + " | " + " / ".join(percent(v) for v in g["at_best"])
                     + f" | {interval(a['mean'], a['ci_low'], a['ci_high'], mark_past=False)}"
                     f" | {interval(o['mean'], o['ci_low'], o['ci_high'], mark_past=False)} | "
                     + " / ".join(percent(v) for v in g["max_over_b"]) + " |")
    first = dataset_name(next(iter(above)))  # A.9's claim: the first row's seeds agree less than the others'
    lines += ["", f"{first} against each other row, above chance (Welch's t; Holm over these comparisons):", ""]
    return lines + welch_lines(tests)


def welch_lines(tests: pd.DataFrame) -> list[str]:
    """One line per comparison (contrast.welch_tests): the difference of means in points with
    Welch's 95% t interval, its p alone and under Holm."""
    return [f"- {dataset_name(t.first)} - {dataset_name(t.other)}: {points(t.difference, t.ci_low, t.ci_high)}, "
            f"p = {t.p_value:.2g} (Holm {t.p_holm:.2g}; n = {t.n_first} and {t.n_other})" for t in tests.itertuples()]


def contrast_markdown(table: pd.DataFrame, baselines: dict[str, float]) -> list[str]:
    """The first dataset's replicates against each other's, column by column (contrast.contrast_table):
    the difference of means with its 95% interval and p, paired by seed or Welch's, then the same
    columns' seed spreads (spread_lines); ``baselines``: each dataset's mean random baseline, the
    first dataset's first. Exploratory: each p alone, no Holm and no verdict (a contrast's tests
    are confirmatory only where a plan named them before its replicates trained, docs/methods.md 5.5)."""
    first, *others = baselines
    how = ("paired by seed (every replicate has its twin on the same A, U and proxy seeds): the paired t interval"
           if table["paired"].all() else "Welch's 95% t interval (independent samples)")
    lines = [f"{dataset_name(first)} against {', '.join(map(dataset_name, others))}, per column (difference of "
             f"means in points, {how}). Exploratory: each p alone, no Holm and no verdict. Random baselines: "
             + "; ".join(f"{dataset_name(d)} {percent(b)}" for d, b in baselines.items()) + ".", ""]
    for t in table.itertuples():
        n = f"n = {t.n_first} pairs" if t.paired else f"n = {t.n_first} and {t.n_other}"
        read = (f"{points(t.difference, t.ci_low, t.ci_high)}, p = {t.p_value:.2g}" if pd.notna(t.p_value) else
                f"{100 * t.difference:+.1f} ({no_test_why(t)}: no interval, no test)")
        lines.append(f"- {HEADERS_OF[t.column]}{' above chance' if t.above_chance else ''}, {dataset_name(t.first)} - "
                     f"{dataset_name(t.other)}: {read} ({n})")
    return lines + ["", *spread_lines(table)]


def no_test_why(t) -> str:
    """Why a contrast (a contrast_table row) has no interval: contrast.spread_and_test's no_spread."""
    if not t.no_spread:
        return "one replicate on a side"
    return "the same difference in every pair" if t.paired else "each row the same in every replicate"


def spread_cells(t) -> list[str]:
    """A contrast's sds, their ratio and the spreads' p, each "-" where it has none: no sd with
    one replicate on a side, no ratio over an sd of 0, no p where the test reads nothing
    (contrast.spread_test)."""
    if pd.isna(t.sd_first) or pd.isna(t.sd_other):
        return ["-"] * 4
    ratio = f"{t.sd_first / t.sd_other:.2f}" if t.sd_other > 0 else "-"
    return [f"{100 * t.sd_first:.1f}", f"{100 * t.sd_other:.1f}", ratio,
            f"{t.spread_p:.2g}" if pd.notna(t.spread_p) else "-"]


def spread_lines(table: pd.DataFrame) -> list[str]:
    """One table row per contrast (contrast.contrast_table), the seed spreads: each sample's sd,
    their ratio and its test of equal spreads (statistics.equal_spread_p), p alone; one sentence
    where no contrast has a spread on both sides (one replicate on a side has no sd)."""
    if table["sd_first"].isna().all():
        return ["The seed spreads are not compared: one replicate on a side has no sd."]
    lines = ["The seed spread of the same columns (sd over the replicates, in points; equal spreads tested by "
             "Pitman and Morgan's test where the replicates pair, Brown-Forsythe's where they do not; "
             "exploratory: p alone):", "",
             "| column, rows | sd, first row | sd, second row | sd ratio | p (equal spreads) |", "|---" * 5 + "|"]
    for t in table.itertuples():
        lines.append(f"| {HEADERS_OF[t.column]}, {dataset_name(t.first)} / {dataset_name(t.other)} | "
                     + " | ".join(spread_cells(t)) + " |")
    return lines
