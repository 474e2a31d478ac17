"""Exploratory: what the transfer test's reference is on a dataset. Its curves read run A's
attention against its U run's xi at one checkpoint of U, U's best validation step (fixed by the
plan); Table 2 reads A(alpha*, xi^uf) as the best of U's checkpoints. Here each run A's attention
at its best step against its U run's xi at every checkpoint of U, per start, mean [95% CI] over
the seeds: where a start's runs agree with U's xi, and whether U's best validation step is
among those checkpoints.

    python paper_rows/transfer_reference.py reproduction/transfer/sst --results /root/transfer_sst/run/results
    python paper_rows/transfer_reference.py reproduction/transfer/sst

The first reads the run's probe tables (which a kept test does not hold) and keeps what it finds
as `transfer_reference.parquet` in the folder; the second prints it from there.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement import transfer as T
from attnlearn.agreement.readable import PAST, points, to_markdown
from attnlearn.reporting.transfer_page import doses_then_control, mean_ci_cell
from attnlearn.runtime.io import write_parquet
from attnlearn.statistics import t_intervals

NAME = "transfer_reference.parquet"
KEYS = ["dataset", "arm", "dose", "parts", "seed", "a_run", "u_run"]


def _probe(results: Path, dataset: str, first: str, run: str) -> tuple[Path, Path]:
    """A run's probe and performance tables: its dataset's, else the sweep's first value's (which
    trains and probes the runs the values share)."""
    for d in (dataset, first):
        path = results / "probes" / d / f"{run}.parquet"
        if path.exists():
            return path, path.with_suffix(".perf.parquet")
    raise FileNotFoundError(f"no probe table of {run} under {results / 'probes'} ({dataset} or {first})")


def compute(curves: pd.DataFrame, results: Path, first: str) -> pd.DataFrame:
    """Every run A of the curves against its U run at every checkpoint of U."""
    out = []
    for key, _ in curves.groupby(KEYS, sort=True):
        base = dict(zip(KEYS, key))
        a, a_perf = _probe(results, base["dataset"], first, base["a_run"])
        u, u_perf = _probe(results, base["dataset"], first, base["u_run"])
        out.append(T.against_u_steps(base, pq.read_table(a), pd.read_parquet(a_perf), pq.read_table(u),
                                     pd.read_parquet(u_perf)))
    return pd.concat(out, ignore_index=True)


def _cell(values) -> str:
    """The seeds' mean [95% CI] in percent, as the transfer page prints its responses."""
    return mean_ci_cell(t_intervals(pd.Series(values, dtype=float).to_numpy()))


def markdown(ref: pd.DataFrame, steps: list[int]) -> str:
    """Per start: the seeds' agreement at U's best validation step, at each of ``steps``, and
    the best of U's checkpoints per seed (Table 2's reading), with the U step where it peaks."""
    rows = []
    for (arm, dose, parts), g in ref.groupby(["arm", "dose", "parts"]):
        peaks = g.loc[g.groupby("seed")["value"].idxmax()]
        rows.append({"arm": arm, "parts": parts, "dose": dose, "n": g["seed"].nunique(),
                     "at U's best validation step": _cell(g.loc[g["u_best"], "value"]),
                     **{f"U step {s}": _cell(g.loc[g["u_step"] == s, "value"]) for s in steps},
                     "best of U's steps (Table 2's)": _cell(peaks["value"]),
                     "U step of the best (per seed)": ", ".join(str(s) for s in peaks["u_step"])})
    table = doses_then_control(pd.DataFrame(rows)).rename(columns={"dose": "k (donor step)"})
    baseline = _cell(ref.loc[ref["u_best"], "baseline"])
    return (to_markdown(table) + f"\nThe random baseline at U's best validation step: {baseline}.\n\n"
            "Paired within the seed, in points, mean [95% CI] of the differences: the agreement at U's best "
            "validation step minus the random baseline, and each of U's steps (and the best of them) minus "
            "the agreement at U's best validation step.\n\n" + to_markdown(_differences(ref, steps)))


def _differences(ref: pd.DataFrame, steps: list[int]) -> pd.DataFrame:
    """Per start, the seed-paired differences the first table's columns are read by."""
    rows = []
    for (arm, dose, parts), g in ref.groupby(["arm", "dose", "parts"]):
        at_best = g[g["u_best"]].set_index("seed")
        row = {"arm": arm, "parts": parts, "dose": dose, "n": len(at_best),
               "at U's best validation step minus the baseline": _points(at_best["value"] - at_best["baseline"])}
        for s in steps:
            row[f"U step {s} minus"] = _points(g[g["u_step"] == s].set_index("seed")["value"] - at_best["value"])
        row["best of U's steps minus"] = _points(g.groupby("seed")["value"].max() - at_best["value"])
        rows.append(row)
    return doses_then_control(pd.DataFrame(rows)).rename(columns={"dose": "k (donor step)"})


def _points(diff: pd.Series) -> str:
    iv = t_intervals(diff.to_numpy(dtype=float))
    return points(iv["mean"], iv["ci_low"], iv["ci_high"])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a kept transfer test (transfer.json, transfer_curves.parquet)")
    ap.add_argument("--results", type=Path, help="the run's results/ folder: compute and keep the table")
    ap.add_argument("--steps", type=int, nargs="*", default=[100, 250, 500, 1000], help="U's steps to print")
    args = ap.parse_args(argv)
    if args.results:
        info = json.loads((args.folder / "transfer.json").read_text())
        curves = pd.read_parquet(args.folder / "transfer_curves.parquet")
        write_parquet(compute(curves, args.results, f"{info['sweep']}_0"), args.folder / NAME)
    path = args.folder / NAME
    if not path.exists():
        ap.error(f"{path} is not there: compute it first with --results RUN/results")
    print("Exploratory (found by looking, no plan tested it): run A's attention at its best step against its "
          f"U run's xi at U's checkpoints, agreement in percent, mean [95% CI] over the seeds (a bound marked {PAST} "
          "is past 0 or 100: a bound of the t interval, not a possible value).\n")
    print(markdown(pd.read_parquet(path), args.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
