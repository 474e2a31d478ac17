"""The seeded rows of docs/reproduction.md as Markdown: Table 2's columns as mean [95%
prediction interval] beside the paper's value, then the claims table, from the replicate
tables of one or more finished runs.

    python paper_rows/reproduction_rows.py reproduction/rows/sms_spam
    python paper_rows/reproduction_rows.py reproduction/rows/sms_spam reproduction/rows/sst --figure rows.png
    python paper_rows/reproduction_rows.py saved/sst/tables rows/results/tables
    python paper_rows/reproduction_rows.py --variance reproduction/rows/sms_spam/factorial
    python paper_rows/reproduction_rows.py --contrast reproduction/rows/newsgroups reproduction/rows/sms_spam
    python paper_rows/reproduction_rows.py --contrast reproduction/rows/multi30k_epochs20 reproduction/rows/multi30k

Each argument is a folder holding a run's `table2_replicates.parquet` (its `results/tables`,
or a copy kept before another `only=[...]` command rewrote it), or a row kept by
paper_rows/paper_row.py (`reproduction/rows/<dataset>`: its `tables`, or its parts' `part*/tables`).
The parts of a row (paper_row.py --part) share no run: their replicates are pooled (two rows of
one dataset, the same seeds at two budgets, are never pooled: --contrast sets them against each
other), and so
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
from attnlearn.agreement.optimal_attention import summary as optimal_summary
from attnlearn.agreement.pooling import pool
from attnlearn.agreement.readings import CENTRAL, READING_COLUMNS, boundary_split, modes_table, readings_tests
from attnlearn.agreement.replicates import boot_variance, column_interval, interval_table, variance_table
from attnlearn.reporting.row_markdown import (claims_markdown, modes_markdown, optimal_section, readings_markdown,
                                              rows_markdown, tanhmax_markdown, variance_markdown)
from attnlearn.rows.contrast import contrast_lines, seed_pairs, seed_pairs_lines
from attnlearn.rows.family import family_sentence, in_family
from attnlearn.rows.kept import (blind_performance, optimal_folders, probed_examples, read_kept, readings_folders,
                                 replicate_tables, table_folders, tanhmax_folders)
from attnlearn.statistics import holm


def variance_tests(table: pd.DataFrame) -> dict[tuple, float]:
    """Holm's p of each role's F test in a grid's split (replicates.variance_table), over the
    table's tests as one family, keyed by (the table's row, the role's letter)."""
    tests = [(i, f) for i, r in table.iterrows() for f in "aup" if not np.isnan(r[f"p_{f}"])]
    return dict(zip(tests, holm([table.loc[i, f"p_{f}"] for i, f in tests])))


def variance_lines(reps: pd.DataFrame) -> list[str]:
    """A crossed or factorial grid's split, recomputed here, as Markdown; none without a grid."""
    table = variance_table(reps)
    return [] if table.empty else variance_markdown(table, variance_tests(table))


def optimal_lines(folders: list[Path]) -> list[str]:
    """Appendix A.1's summary over every additive run of the folders (each run in one folder)."""
    rows = read_kept(folders, "optimal_attention.parquet", "additive")
    perf = pd.concat([pd.read_parquet(f / "optimal_performance.parquet") for f in folders], ignore_index=True)
    return optimal_section(optimal_summary(rows, perf))


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
    return tanhmax_markdown(tanhmax_table(tanhmax, perf, reps, probed))


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


def readings_lines(reps: pd.DataFrame, readings: pd.DataFrame | None, figure: Path | None = None) -> list[str]:
    """Whether A(alpha*, xi^uf) is one mode or two over the pooled replicates; each replicate's
    readings (where a kept folder has them), and whether the column follows any of them (r
    with its interval, p alone and under Holm), as Markdown."""
    modes = modes_markdown(modes_table(reps))
    if readings is None:
        return modes
    total = int(reps["independent"].astype(bool).sum())
    reps = attach_readings(reps, readings)
    read = reps[reps["independent"]]  # independent, with readings of their own runs
    if figure is not None:
        from attnlearn.reporting.readings_figure import readings_figure

        readings_figure(read, figure)
    splits = {dataset: boundary_split(g) for dataset, g in read.groupby("dataset", sort=False)}
    return modes + readings_markdown(read, total, splits, readings_tests(reps))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="+", type=Path, help="folders holding table2_replicates.parquet")
    ap.add_argument("--variance", action="store_true", help="the folders hold a crossed or factorial grid "
                    "(paper_row.py --factorial): print how each column's spread splits over the roles")
    ap.add_argument("--readings", action="store_true", help="print what each replicate's A(alpha*, xi^uf) "
                    "reads (the kept folders' replicate_readings, a grid's included), whether the column follows "
                    "a reading, and whether it is one mode or two, instead of the row (which the command prints without it)")
    ap.add_argument("--readings-figure", type=Path, help="with --readings: also draw A(alpha*, xi^uf) against each "
                    "reading, a dot per replicate, into this PNG")
    ap.add_argument("--seed-pairs", action="store_true", help="print appendix A.9's two seeds' attentions instead: "
                    "each part's A against its own B, both at their best checkpoints, per dataset, and the first "
                    "folder's dataset against each other's")
    ap.add_argument("--contrast", action="store_true", help="print the first folder's dataset against each other "
                    "dataset instead (e.g. newsgroups against newsgroups_no_headers): per column the difference of "
                    "the replicates' means, paired by seed where the replicates pair and Welch's otherwise, each p "
                    "alone (exploratory)")
    ap.add_argument("--appendix", action="store_true", help="print the rows' appendix tables alone: appendix A.1's "
                    "optimal attention (additive runs) and each TanhMax run against its row's softmax runs")
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
        reps = pool(replicate_tables(folders, by_row=args.contrast), grid=args.variance)
        appendix = [] if args.contrast or args.seed_pairs or args.variance or args.readings else (
            (optimal_lines(optimal) if optimal else [])
            + (tanhmax_lines(tanhmax, folders, reps, probed_examples(folders)) if tanhmax else []))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    if args.appendix:
        if not appendix:
            print(f"no additive or TanhMax runs kept in {', '.join(map(str, args.tables))}", file=sys.stderr)
            return 2
        print("\n".join(appendix).strip("\n"))
        return 0
    if args.seed_pairs:
        print("\n".join(seed_pairs_lines(pd.concat([seed_pairs(t) for t in args.tables], ignore_index=True))))
        return 0
    if args.contrast:
        try:
            print("\n".join(contrast_lines(reps)))
        except ValueError as e:
            print(e, file=sys.stderr)
            return 2
        return 0
    if args.variance:
        lines = variance_lines(reps)
        print("\n".join(lines) if lines else "no crossed or factorial grid in these replicates")
        return 0 if lines else 2
    if args.readings:  # alone: a page prints the row itself in a block of its own
        read = [f for t in args.tables for f in readings_folders(t)]
        readings = pd.concat([pd.read_parquet(f / "replicate_readings.parquet") for f in read]) if read else None
        print("\n".join(readings_lines(reps, readings, args.readings_figure)).lstrip("\n"))
        return 0
    blind, probed = blind_performance(folders), probed_examples(folders)
    intervals = interval_table(reps, probed)
    claims = in_family(claims_table(reps, blind=blind), folders)
    lines = rows_markdown(intervals) + [""] + claims_markdown(claims, family_sentence()) + appendix
    if args.figure:
        from attnlearn.reporting.replicates_figure import replicates_figure

        replicates_figure(reps, intervals, args.figure)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
