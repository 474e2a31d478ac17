"""The seeded rows of docs/reproduction.md as Markdown: Table 2's columns as mean [95%
prediction interval] beside the paper's value, then the claims table, from the replicate
tables of one or more finished runs.

    python paper_rows/reproduction_rows.py reproduction/rows/*
    python paper_rows/reproduction_rows.py reproduction/rows/* --figure docs/figures/table2_replicates.png
    python paper_rows/reproduction_rows.py saved/sst/tables rows/results/tables
    python paper_rows/reproduction_rows.py --variance reproduction/rows/sms_spam/factorial
    python paper_rows/reproduction_rows.py --contrast reproduction/rows/newsgroups reproduction/rows/sms_spam

Each argument is a folder holding a run's `table2_replicates.parquet` (its `results/tables`,
or a copy kept before another `only=[...]` command rewrote it), or a row kept by
paper_rows/paper_row.py (`reproduction/rows/<dataset>`: its `tables`, or its parts' `part*/tables`).
The parts of a row (paper_row.py --part) share no run: their replicates are pooled, and so
are the additive runs of appendix A.1 (a kept row's `analyses/optimal_attention.parquet`),
whose summary over seeds follows the claims where a row has them, and so are its TanhMax runs
(`analyses/tanhmax.parquet`): each TanhMax run's best performance against the prediction interval
of the row's standard runs, and its agreement with xi^uf against the replicates' A(alpha*, xi^uf)
(docs/analyses.md). The rows of config/paper_cpu.yaml
are run one dataset at a time, and may come from different commits; the intervals and claims are
recomputed here with this commit's code (replicates.interval_table, claims.claims_table), so
every row is read the same way.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.agreement.claims import claims_table
from attnlearn.agreement.compare import primary
from attnlearn.agreement.optimal_attention import markdown as optimal_markdown
from attnlearn.agreement.optimal_attention import summary as optimal_summary
from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
from attnlearn.agreement.readable import interval, modes_frame, paper_mark, percent, points, readings_tests_frame
from attnlearn.agreement.pooling import pool
from attnlearn.agreement.readings import CENTRAL, READING_COLUMNS, boundary_split, modes_table, readings_tests
from attnlearn.agreement.replicates import boot_variance, column_interval, interval_table, variance_table
from attnlearn.rows.contrast import contrast_markdown, seed_pairs, seed_pairs_markdown
from attnlearn.rows.family import claims_markdown, in_family
from attnlearn.rows.kept import (HEADERS, HEADERS_OF, NAMES, blind_performance, optimal_folders, probed_examples,
                                 read_kept, readings_folders, table_folders, tanhmax_folders)
from attnlearn.statistics import holm

CTX_CONV = {"ctx_perf_xi_uniform": "ctx_perf_xi_uniform_conv", "ctx_perf_xi_standard": "ctx_perf_xi_standard_conv"}


def interval_cell(iv: pd.Series) -> str:
    """mean [PI], with n where a contextualized value is undefined in some replicates; to as many
    decimals as it takes to read the paper's value inside or outside (readable.decimals_against)."""
    if iv["n"] == 0:
        return "undefined"
    cell = interval(iv["mean"], iv["pi_low"], iv["pi_high"], mark_past=False, against=iv["paper"])
    return cell if iv["n"] == iv["n_replicates"] else f"{cell} (n = {iv['n']} of {iv['n_replicates']})"


def paper_cell(iv: pd.Series) -> str:
    if np.isnan(iv["paper"]):
        return "-"
    if paper_mark(iv["paper_in_pi"]):
        return f"{100 * iv['paper']:.2f} ({paper_mark(iv['paper_in_pi'])})"
    # an interval without the examples' error reads no paper value (replicates.column_interval)
    return f"{100 * iv['paper']:.2f} ({'no interval' if pd.isna(iv['pi_low']) else 'no verdict: examples unknown'})"


def rows_markdown(intervals: pd.DataFrame) -> list[str]:
    lines = ["| dataset | " + " | ".join(HEADERS) + " |", "|---" * (len(HEADERS) + 1) + "|"]
    for dataset, g in intervals.groupby("dataset", sort=False):
        by_col = g.set_index("column")
        n = int(by_col.loc["agr_alpha_xi_uniform", "n"])
        ours = [interval_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        lines.append(f"| {NAMES.get(dataset, dataset)}, ours (n = {n}) | " + " | ".join(ours) + " |")
        papers = [paper_cell(by_col.loc[c]) for c in TABLE2_VALUE_COLUMNS]
        if any(p != "-" for p in papers):
            lines.append(f"| {NAMES.get(dataset, dataset)}, paper | " + " | ".join(papers) + " |")
    return lines


ROLES = {"a": "A seed", "u": "U seed", "p": "proxy seed"}


def variance_markdown(reps: pd.DataFrame) -> list[str]:
    """A crossed or factorial grid's split (replicates.variance_table, recomputed here): per
    agreement column the roles it reads, each role's sd and the residual's in points, and each
    role's F test, alone and under Holm's correction over the table's tests (one family)."""
    table = variance_table(reps)
    if table.empty:
        return []
    tests = [(i, f) for i, r in table.iterrows() for f in "aup" if not np.isnan(r[f"p_{f}"])]
    adjusted = dict(zip(tests, holm([table.loc[i, f"p_{f}"] for i, f in tests])))
    lines = ["| dataset | column | reads | sd: A seed | sd: U seed | sd: proxy seed | sd: residual | "
             "F test p (Holm) |", "|---" * 8 + "|"]
    for i, r in table.iterrows():
        alone = len(r["reads"]) < 2  # one role read: no residual to estimate, nothing to test against
        sd = lambda f: "-" if np.isnan(r[f"var_{f}"]) or (f == "residual" and alone) else \
            f"{100 * np.sqrt(r[f'var_{f}']):.1f}"  # noqa: E731
        p = "; ".join(f"{ROLES[f]} {r[f'p_{f}']:.2g} ({adjusted[(i, f)]:.2g})" for f in "aup" if (i, f) in adjusted)
        header = HEADERS[TABLE2_VALUE_COLUMNS.index(r["column"])]
        reads = ", ".join(ROLES[f] for f in r["reads"]) or "none (constant)"
        lines.append(f"| {NAMES.get(r['dataset'], r['dataset'])} | {header} | {reads} | {sd('a')} | {sd('u')} | "
                     f"{sd('p')} | {sd('residual')} | {p or '-'} |")
    return lines


def optimal_lines(folders: list[Path]) -> list[str]:
    """Appendix A.1's summary over every additive run of the folders (each run in one folder)."""
    rows = read_kept(folders, "optimal_attention.parquet", "additive")
    perf = pd.concat([pd.read_parquet(f / "optimal_performance.parquet") for f in folders], ignore_index=True)
    # under the page's own Table 2 heading: the summary's headings one level down (#### and below)
    lines = optimal_markdown(optimal_summary(rows, perf)).splitlines()
    return ["", *(f"###{line}" if line.startswith("#") else line for line in lines)]


def standard_best(perf: pd.DataFrame) -> pd.DataFrame:
    """Each standard run's best performance by the task's own metric (dataset, run, value)."""
    own = primary(perf)
    return own[own["run"].str.startswith("standard-")].groupby(["dataset", "run"], as_index=False)["value"].max()


def tanhmax_table(tanhmax: pd.DataFrame, perf: pd.DataFrame, reps: pd.DataFrame,
                  probed: dict[str, int] | None = None) -> pd.DataFrame:
    """Each TanhMax run beside the softmax draws it is one more of: its best performance
    against the standard runs' (every standard run of the row, pooled over its parts), its
    agreement with xi^uf (positions ranked by |w|) against the replicates' A(alpha*, xi^uf).
    Rows: dataset, measure, run, value, the softmax draws' n, mean, 95% prediction interval
    of one more draw with the examples' error (replicates.column_interval, as Table 2's: the
    TanhMax value holds its own examples' error too), and whether the TanhMax value lies inside
    it (None where the examples' error is not known: no verdict)."""
    best = standard_best(perf)
    rows = []
    for (dataset, run), t in tanhmax[tanhmax["activation"] == "tanhmax"].groupby(["dataset", "run"], sort=False):
        metric = reps.loc[reps["dataset"] == dataset, "perf_metric"].iloc[0]
        softmax = {f"best {metric}": best.loc[best["dataset"] == dataset, "value"],
                   "A(|w|, xi^uf)": reps.loc[reps["dataset"] == dataset, "agr_alpha_xi_uniform"]}
        ours = {f"best {metric}": t.loc[t["metric"] == metric, "value"],
                "A(|w|, xi^uf)": t.loc[t["metric"] == "agreement_alpha_xi_uniform", "value"]}
        boot_var = {f"best {metric}": float("nan"),
                    "A(|w|, xi^uf)": boot_variance(reps[reps["dataset"] == dataset], "agr_alpha_xi_uniform")}
        for measure, values in softmax.items():
            (value,) = ours[measure]
            iv = column_interval(dataset, values, boot_var[measure], (probed or {}).get(dataset), float(value))
            rows.append({"dataset": dataset, "measure": measure, "run": run, "value": float(value),
                         **{k: iv[k] for k in ("n", "mean", "pi_low", "pi_high")}, "inside": iv["paper_in_pi"]})
    return pd.DataFrame(rows, columns=["dataset", "measure", "run", "value", "n", "mean", "pi_low", "pi_high",
                                       "inside"])


def tanhmax_lines(folders: list[Path], perf_folders: list[Path], reps: pd.DataFrame,
                  probed: dict[str, int] | None = None) -> list[str]:
    """The TanhMax table as Markdown, from every kept TanhMax comparison (each run in one folder)
    and the performance of every standard run in ``perf_folders``."""
    tanhmax = read_kept(folders, "tanhmax.parquet", "TanhMax")
    perf = pd.concat([pd.read_parquet(f / "performance.parquet") for f in perf_folders], ignore_index=True)
    table = tanhmax_table(tanhmax, perf, reps, probed)
    lines = ["", "| dataset | TanhMax run | measure | TanhMax | softmax: mean [95% PI, seeds and examples] (n) | inside |", "|---" * 6 + "|"]
    for r in table.itertuples():
        where = "-" if r.inside is None else ("inside" if r.inside else "**outside**")
        measure = r.measure.replace("|", "\\|")  # |w| inside a Markdown cell
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.run} | {measure} | {percent(r.value)} | "
                     f"{interval(r.mean, r.pi_low, r.pi_high, mark_past=False)} ({r.n}) | {where} |")
    return lines


def attach_readings(reps: pd.DataFrame, readings: pd.DataFrame) -> pd.DataFrame:
    """The pooled replicates with the readings of their own A and U runs, wherever a kept folder
    read that pair, and only where it read the same A(alpha*, xi^uf) (the same runs, not a
    rerun of the same seeds that came out otherwise). ``has_readings`` marks them."""
    # best_perf is Table 2's own (A's best performance): the replicate's row keeps it
    cols = ["dataset", "a_run", "u_run", *[c for c in READING_COLUMNS if c not in
                                           ("dataset", "replicate", "a_run", "u_run", "independent", "best_perf")]]
    # a folder kept before a reading existed lacks its column: a later folder's reading of the
    # same runs is taken first
    readings = readings.reindex(columns=cols)
    readings = readings.iloc[np.argsort(readings["agr_without_boundary"].isna().to_numpy(), kind="stable")]
    readings = readings.drop_duplicates(["dataset", "a_run", "u_run"])
    out = reps.merge(readings, on=["dataset", "a_run", "u_run"], how="left", suffixes=("", "_read"))
    same = np.isclose(out[f"{CENTRAL}_read"], out[CENTRAL], rtol=0, atol=1e-9)
    out["has_readings"] = same
    out["independent"] = out["independent"].astype(bool) & same
    return out


def readings_markdown(reps: pd.DataFrame, readings: pd.DataFrame | None, figure: Path | None = None) -> list[str]:
    """Whether A(alpha*, xi^uf) is one mode or two over the pooled replicates; each replicate's
    readings (where a kept folder has them), and whether the column follows any of them (r
    with its interval, p alone and under Holm)."""
    lines = []
    modes = modes_frame(modes_table(reps)).assign(dataset=lambda f: f["dataset"].map(lambda d: NAMES.get(d, d)),
                                                   column=lambda f: f["column"].map(HEADERS_OF))
    if len(modes):
        lines += ["", "| dataset | column | n | likelihood ratio | p | normal samples |", "|---" * 6 + "|"]
        lines += ["| " + " | ".join(map(str, row)) + " |" for row in modes.itertuples(index=False)]
    if readings is None:
        return lines
    total = int(reps["independent"].astype(bool).sum())
    reps = attach_readings(reps, readings)
    read = reps[reps["independent"]]  # independent, with readings of their own runs
    if figure is not None:
        from attnlearn.reporting.readings_figure import readings_figure

        readings_figure(read, figure)
    lines += ["", f"Readings of {len(read)} of {total} independent replicates:", "",
             "| dataset | A run | U run | A(α\\*, ξ^uf) | A's best step | best | α\\* entropy | `<s>`/`</s>` first: α\\*, ξ^uf | "
             "A(α\\*, ξ^uf) where α\\* puts `<s>`/`</s>` first, a word first | A(α\\*, ξ^uf) without `<s>`/`</s>` | "
             "α\\* puts first | ξ^uf puts first |",
             "|---" * 12 + "|"]
    for r in read.itertuples():
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.a_run} | {r.u_run} | {percent(getattr(r, CENTRAL))} | "
                     f"{int(r.a_step)} | {percent(r.best_perf)} | {r.alpha_entropy:.3f} | "
                     f"{percent(r.alpha_boundary_share)}, {percent(r.xi_boundary_share)} | "
                     f"{percent(r.agr_boundary_rows)}, {percent(r.agr_word_rows)} | {percent(r.agr_without_boundary)} | "
                     f"`{r.alpha_words}` | `{r.xi_words}` |")
    for dataset, g in read.groupby("dataset", sort=False):
        lines += ["", boundary_sentence(NAMES.get(dataset, dataset), boundary_split(g))]
    tests = readings_tests(reps)
    lines += ["", "| dataset | reading | n | r [95% CI] | p | p, Holm |", "|---" * 6 + "|"]
    lines += ["| " + " | ".join(map(str, row)) + " |" for row in readings_tests_frame(tests)
              .assign(dataset=lambda f: f["dataset"].map(lambda d: NAMES.get(d, d))).itertuples(index=False)]
    return lines


def boundary_sentence(name: str, b: dict) -> str:
    """boundary_split in words: how often alpha* puts a boundary token first; the column on those
    rows against word rows (where both kinds occur); the column without the boundary tokens."""
    text = (f"Exploratory (a split chosen after these replicates were seen; no verdict): {name}, over the "
            f"{b['share_n']} replicates: α\\* puts a boundary token (`<s>`, `</s>`) first in "
            f"{interval(b['share'], b['share_low'], b['share_high'])} percent of rows (mean [95% CI])")
    if b["n"] >= 2:
        text += ("; A(α\\*, ξ^uf) on those rows minus on the rows where it puts a word first: "
                 f"{points(b['gap'], b['gap_low'], b['gap_high'])} points (paired t, p = {b['gap_p']:.2g}).")
    elif b["n"] == 1:  # one difference has no spread, so no interval and no test
        text += (", and only one replicate has both kinds of row, too few for an interval (there A(α\\*, ξ^uf) "
                 f"on those rows minus on the word rows is {100 * b['gap']:+.1f} points).")
    else:
        text += ", so no replicate has both kinds of row to set against each other."
    if b["without_n"]:
        text += (f" With `<s>` and `</s>` left out of both measures ({b['without_n']} replicates), A(α\\*, ξ^uf) is "
                 f"{interval(b['without'], b['without_low'], b['without_high'])}; the column minus it: "
                 f"{points(b['loss'], b['loss_low'], b['loss_high'])} points (paired t, p = {b['loss_p']:.2g}).")
    return text


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path, help="folders holding table2_replicates.parquet")
    ap.add_argument("--variance", action="store_true", help="the folders hold a crossed or factorial grid "
                    "(paper_row.py --factorial): print how each column's spread splits over the roles")
    ap.add_argument("--readings", action="store_true", help="also print what each replicate's A(alpha*, xi^uf) "
                    "reads (the kept folders' replicate_readings, a grid's included), whether the column follows "
                    "a reading, and whether it is one mode or two")
    ap.add_argument("--readings-figure", type=Path, help="with --readings: also draw A(alpha*, xi^uf) against each "
                    "reading, a dot per replicate, into this PNG")
    ap.add_argument("--seed-pairs", action="store_true", help="print appendix A.9's two seeds' attentions instead: "
                    "each part's A against its own B, both at their best checkpoints, per dataset, and the first "
                    "folder's dataset against each other's")
    ap.add_argument("--contrast", action="store_true", help="print the first folder's dataset against each other "
                    "dataset instead (e.g. newsgroups against newsgroups_no_headers): per column the difference of "
                    "the replicates' means, paired by seed where the replicates pair and Welch's otherwise, each p "
                    "alone (exploratory)")
    ap.add_argument("--figure", type=Path, help="also draw the rows as distributions (every replicate's value "
                    "per column, the interval, the paper's value) into this PNG")
    args = ap.parse_args(argv)
    folders = [f for t in args.tables for f in table_folders(t)]
    missing = [t for t in folders if not (t / "table2_replicates.parquet").is_file()]
    if missing:
        print(f"no table2_replicates.parquet in {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    optimal = [f for t in args.tables for f in optimal_folders(t)]
    tanhmax = [f for t in args.tables for f in tanhmax_folders(t)]
    try:
        reps = pool([pd.read_parquet(t / "table2_replicates.parquet") for t in folders], grid=args.variance)
        appendix = optimal_lines(optimal) if optimal else []
        appendix += tanhmax_lines(tanhmax, folders, reps, probed_examples(folders)) if tanhmax else []
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if args.seed_pairs:
        print("\n".join(seed_pairs_markdown(pd.concat([seed_pairs(t) for t in args.tables], ignore_index=True))))
        return 0
    if args.contrast:
        try:
            print("\n".join(contrast_markdown(reps)))
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    if args.variance:
        lines = variance_markdown(reps)
        print("\n".join(lines) if lines else "no crossed or factorial grid in these replicates")
        return 0 if lines else 2
    blind, probed = blind_performance(folders), probed_examples(folders)
    intervals = interval_table(reps, probed)
    claims = in_family(claims_table(reps, blind=blind), folders)
    lines = rows_markdown(intervals) + [""] + claims_markdown(claims) + appendix
    if args.readings:
        read = [f for t in args.tables for f in readings_folders(t)]
        readings = pd.concat([pd.read_parquet(f / "replicate_readings.parquet") for f in read]) if read else None
        lines += readings_markdown(reps, readings, args.readings_figure)
    if args.figure:
        from attnlearn.reporting.replicates_figure import replicates_figure

        replicates_figure(reps, intervals, args.figure)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
