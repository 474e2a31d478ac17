"""Wall time per stage and per job of a finished run, from Snakemake's benchmark files.

    python benchmarks/stage_times.py [RESULTS_DIR]     # default: results

Prints two Markdown tables: seconds per rule and dataset (sum over the rule's
jobs), and every training and probing job's seconds. Jobs of one rule may have
run side by side, so sums are CPU-side costs, not the run's wall time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd


GROUPS = ("analyses", "experiments")  # folders that group several rules' benchmark files


def job_times(results: Path) -> pd.DataFrame:
    """One row per benchmark file: rule, dataset, job (run or file), seconds."""
    rows = []
    for path in sorted((results / "benchmarks").rglob("*.tsv")):
        parts = path.relative_to(results / "benchmarks").with_suffix("").parts
        if parts[0] in GROUPS and len(parts) > 2:  # benchmarks/analyses/{analysis}/{dataset}.tsv
            parts = parts[1:]
        rule, rest = parts[0], parts[1:]
        seconds = float(pd.read_csv(path, sep="\t")["s"].iloc[-1])
        rows.append({"rule": rule, "dataset": rest[0] if rest else "-", "job": "/".join(rest[1:]) or "-",
                     "seconds": seconds})
    return pd.DataFrame(rows, columns=["rule", "dataset", "job", "seconds"])


def markdown(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(f"{v:,.0f}" if isinstance(v, float) else str(v) for v in row) + " |"
              for row in df.itertuples(index=False)]
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    results = Path(argv[0] if argv else "results")
    jobs = job_times(results)
    if jobs.empty:
        sys.exit(f"no benchmark files under {results / 'benchmarks'}")
    per_stage = jobs.pivot_table(index="dataset", columns="rule", values="seconds", aggfunc="sum").fillna(0)
    print("Seconds per stage (sum over the stage's jobs):\n")
    print(markdown(per_stage.reset_index()))
    heavy = jobs[jobs["rule"].isin(["train", "probe", "probe_train"])].sort_values(["dataset", "rule", "job"])
    print("\nSeconds per training and probing job:\n")
    print(markdown(heavy))


if __name__ == "__main__":
    main(sys.argv[1:])
