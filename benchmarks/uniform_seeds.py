"""Table 2's row once per (run A, uniform run), from a finished run's probes, through the
pipeline's own replicate code (src/attnlearn/agreement/compare.py, replicates.py).

    python benchmarks/uniform_seeds.py results sst
    python benchmarks/uniform_seeds.py results newsgroups --every-a

The pipeline's tables (results/tables/table2_replicates.parquet) give Table 2 per replicate as
the config's `tables.design` asks (rotate, or crossed: every A with every U). This script is
for a results folder made before that, or to look at one dataset's crossed grid without
rerunning the agreement job: run A as the pipeline chose it (or, with --every-a, every
standard run in turn) with each uniform run, the first proxy seed throughout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement.compare import performance_frame, replicate_design, replicate_frame
from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
from attnlearn.agreement.replicates import replicate_table
from attnlearn.agreement.tables import table11

COLUMNS = TABLE2_VALUE_COLUMNS  # Table 2's value columns, as the paper prints them
LOGREG = "agr_xi_logreg_xi_uniform"  # Table 11: the logistic regression's words against the U probe


def run_a(results: Path, dataset: str) -> str:
    """Run A as the pipeline chose it (the first standard run in the config's order)."""
    agr = pd.read_parquet(results / "agreement" / f"{dataset}.parquet", columns=["a_run", "a_role"])
    return agr.loc[agr["a_role"] == "A", "a_run"].iloc[0]


def seeded_runs(probes: Path, variant: str) -> list[str]:
    """The probed runs of one variant, by seed (standard-s2 before standard-s10)."""
    runs = [p.stem for p in probes.glob(f"{variant}-s*.parquet") if not p.stem.endswith(".perf")]
    return sorted(runs, key=lambda run: int(run.rsplit("-s", 1)[1]))


def per_seed(results: Path, dataset: str, every_a: bool = False, xi_standard: str = "first") -> pd.DataFrame:
    """One row per (run A, uniform run). A(alpha*, xi^B) reads the first B run (the one after A),
    or the B runs' mean (``tables.xi_standard``)."""
    probes_dir = results / "probes" / dataset
    standard, uniform = seeded_runs(probes_dir, "standard"), seeded_runs(probes_dir, "uniform")
    proxy = (seeded_runs(probes_dir, "proxy") or ["proxy"])[0]  # results made before proxy seeds: proxy.parquet
    i = standard.index(run_a(results, dataset))
    standard = standard[i:] + standard[:i]  # the pipeline's run A first
    design = replicate_design(standard, uniform, [proxy], "crossed", xi_standard)
    if not every_a:
        design = [rep for rep in design if rep["a_run"] == standard[0]]
    names = [*standard, *uniform]
    probes = {r: pq.read_table(probes_dir / f"{r}.parquet") for r in [*names, proxy]}
    perf = {r: pd.read_parquet(probes_dir / f"{r}.perf.parquet") for r in names}
    frame = replicate_frame(dataset, probes, perf, design)
    reps = replicate_table(frame, performance_frame(dataset, perf), {dataset: ""}, {dataset: design})
    logreg = [table11(frame[frame["replicate"] == r])[LOGREG] for r in reps["replicate"]]
    return reps[["a_run", "u_run", *COLUMNS]].rename(columns={"u_run": "uniform_run"}).assign(
        **{LOGREG: [v.iloc[0] if len(v) else float("nan") for v in logreg]})


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("dataset")
    parser.add_argument("--every-a", action="store_true", help="pair every standard run as run A")
    parser.add_argument("--xi-standard", choices=["first", "mean"], default="first",
                        help="A(alpha*, xi^B) from the first B run or the B runs' mean, as the config's "
                             "tables.xi_standard (default: first)")
    args = parser.parse_args(argv)
    df = per_seed(args.results, args.dataset, args.every_a, args.xi_standard)
    pct = lambda v: f"{100 * v:.1f}"  # noqa: E731
    print(df.to_string(index=False, float_format=pct))
    print(df[[*COLUMNS, LOGREG]].agg(["mean", "std", "min", "max"]).to_string(float_format=pct))


if __name__ == "__main__":
    main(sys.argv[1:])
