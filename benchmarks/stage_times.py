"""Wall and CPU time per stage and per job of a finished run, from Snakemake's benchmark files.

    python benchmarks/stage_times.py [RESULTS_DIR]     # default: results
    python benchmarks/stage_times.py RESULTS_DIR --against OTHER_RESULTS [--rules train proxy]

Prints Markdown tables: wall and CPU seconds per rule and dataset (sums over the rule's
jobs), and every training and probing job's wall and CPU seconds; where probes computed BLEU, what beam
search and BLEU took of them (the probe logs' line, probing/probes.py BLEU_TIME). Jobs of one rule may have
run side by side, so sums are CPU-side costs, not the run's wall time.

``--against``: how much faster or slower the machine ran in RESULTS_DIR than in
OTHER_RESULTS, from the jobs of ``--rules`` present in both: each job's time ratio, their
geometric mean and its 95% t interval. Name rules whose jobs did the same work in both
runs (same code and parameters); the ratio then separates a machine's drift, or a
machine's speed, from the work a change removed (docs/benchmarks.md, "Default run").
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.probing.probes import BLEU_TIME
from attnlearn.statistics import t_intervals


BLEU_LINE = re.compile(re.escape(BLEU_TIME) + r" ([0-9.]+) s of ([0-9.]+) s")
GROUPS = ("analyses", "experiments")  # folders that group several rules' benchmark files


def job_times(results: Path) -> pd.DataFrame:
    """One row per benchmark file: rule, dataset, job (run or file), seconds (wall) and
    cpu_seconds (Snakemake's cpu_time: what the job cost where others ran beside it; NaN where
    the file has none)."""
    rows = []
    for path in sorted((results / "benchmarks").rglob("*.tsv")):
        parts = path.relative_to(results / "benchmarks").with_suffix("").parts
        if parts[0] in GROUPS and len(parts) > 2:  # benchmarks/analyses/{analysis}/{dataset}.tsv
            parts = parts[1:]
        rule, rest = parts[0], parts[1:]
        last = pd.read_csv(path, sep="\t").iloc[-1]
        rows.append({"rule": rule, "dataset": rest[0] if rest else "-", "job": "/".join(rest[1:]) or "-",
                     "seconds": float(last["s"]), "cpu_seconds": float(last.get("cpu_time", np.nan))})
    return pd.DataFrame(rows, columns=["rule", "dataset", "job", "seconds", "cpu_seconds"])


def bleu_times(results: Path) -> pd.DataFrame:
    """One row per probe log that says what beam search and BLEU took: dataset, job, the
    seconds of BLEU and of the probing they were part of, summed over the job's attempts that
    finished their checkpoints (a log is appended to; a killed attempt writes no line, so its
    checkpoints' time is not counted, while the benchmark record holds the last attempt alone)."""
    rows = []
    for path in sorted((results / "logs" / "probe").rglob("*.log")):
        lines = [m for m in map(BLEU_LINE.search, path.read_text(errors="replace").splitlines()) if m]
        if lines:
            bleu, probe = (sum(float(m[k]) for m in lines) for k in (1, 2))
            rows.append({"dataset": path.parent.name, "job": path.stem, "bleu_s": bleu, "probe_s": probe})
    return pd.DataFrame(rows, columns=["dataset", "job", "bleu_s", "probe_s"])


def markdown(df: pd.DataFrame) -> str:
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(("-" if np.isnan(v) else f"{v:,.0f}") if isinstance(v, float) else str(v) for v in row)
              + " |"
              for row in df.itertuples(index=False)]
    return "\n".join(lines)


def same_jobs(jobs: pd.DataFrame, other: pd.DataFrame, rules) -> tuple[pd.DataFrame, tuple[float, float, float]]:
    """Per job of ``rules`` found in both runs: seconds in each and their ratio; and the
    geometric mean ratio with its 95% t interval (over the jobs, on the log scale)."""
    both = jobs.merge(other, on=["rule", "dataset", "job"], suffixes=("", "_other"))
    both = both[both["rule"].isin(rules)].reset_index(drop=True)
    both["ratio"] = both["seconds"] / both["seconds_other"]
    if len(both) < 2:
        raise ValueError(f"fewer than two jobs of rules {list(rules)} in both runs: no interval")
    iv = t_intervals(np.log(both["ratio"]))  # Table 2's interval, on the log scale
    return both, tuple(float(np.exp(iv[k])) for k in ("mean", "ci_low", "ci_high"))


def _load(results: Path) -> pd.DataFrame:
    jobs = job_times(results)
    if jobs.empty:
        sys.exit(f"no benchmark files under {results / 'benchmarks'}")
    return jobs


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", nargs="?", default="results", type=Path)
    parser.add_argument("--against", type=Path, help="another run's results folder")
    parser.add_argument("--rules", nargs="+", default=["train", "proxy"],
                        help="rules whose jobs did the same work in both runs (default: train proxy)")
    args = parser.parse_args(argv)
    jobs = _load(args.results)
    if args.against is not None:
        both, (mean, low, high) = same_jobs(jobs, _load(args.against), args.rules)
        shown = both.assign(ratio=both["ratio"].map("{:.3f}".format))
        print(markdown(shown[["rule", "dataset", "job", "seconds_other", "seconds", "ratio"]]
                       .rename(columns={"seconds_other": f"s in {args.against}", "seconds": f"s in {args.results}"})))
        print(f"\n{len(both)} jobs; time ratio {args.results} / {args.against}: geometric mean {mean:.3f}, "
              f"95% t interval [{low:.3f}, {high:.3f}]")
        return
    for values, what in (("seconds", "Wall seconds"), ("cpu_seconds", "CPU seconds")):
        per_stage = jobs.pivot_table(index="dataset", columns="rule", values=values, aggfunc="sum").fillna(0)
        print(f"{what} per stage (sum over the stage's jobs):\n")
        print(markdown(per_stage.reset_index()) + "\n")
    heavy = jobs[jobs["rule"].isin(["train", "probe", "probe_train"])].sort_values(["dataset", "rule", "job"])
    print("Seconds per training and probing job (wall, and CPU: Snakemake's cpu_time of the last attempt):\n")
    print(markdown(heavy.rename(columns={"seconds": "wall s", "cpu_seconds": "CPU s"})))
    bleu = bleu_times(args.results)
    if not bleu.empty:
        probing = bleu["probe_s"].sum()  # 0 where the probes' logged times round to nothing (tiny runs)
        share = f"{bleu['bleu_s'].sum() / probing:.0%}" if probing > 0 else "an unmeasurable share"
        print(f"\nBeam search and BLEU in the probes (their logs): {share} of the probing they were part of\n")
        print(markdown(bleu))


if __name__ == "__main__":
    main(sys.argv[1:])
