"""The controlled experiments' tables on docs/experiments.md, printed from a kept run.

    python paper_rows/experiments_tables.py reproduction/experiments/paper_counts
    python paper_rows/experiments_tables.py reproduction/experiments/default --section multihead

A kept run is the results/tables/*.parquet (and results/benchmarks/experiments/) of one
`snakemake ... results/tables/experiments.md` run, copied under reproduction/experiments/ with a README
naming the command and commit: copying.parquet, copy_counts_contrast.parquet, multihead.parquet,
multihead_trials.parquet (one row per trial), multihead_heads.parquet, keyword.parquet and
benchmarks/. Every result number of the page comes from here: docs/experiments.md marks each
block for paper_rows/printed.py (tests/test_printed.py reruns them), and
tests/test_experiments_docs.py checks that the bullets of "Against the paper's expectations"
quote only numbers these blocks print. The intervals are this commit's summary code's
(attnlearn.experiments.summary), not the run's: the multi-head ones with the head as the unit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from attnlearn.experiments import summary as S
from attnlearn.reporting.experiments_markdown import (benchmarks_markdown, copying_markdown, keyword_markdown,
                                                      multihead_markdown)

TABLES = ("copying", "copy_counts_contrast", "multihead", "multihead_trials", "multihead_heads", "keyword")


def read(kept: Path, name: str) -> pd.DataFrame:
    """A kept run's table, or an error naming the file and what a kept run holds."""
    path = kept / f"{name}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; a kept run's folder holds "
                                f"{', '.join(t + '.parquet' for t in TABLES)} and benchmarks/ (reproduction/experiments/*/README.md)")
    return pd.read_parquet(path)


def copying(kept: Path) -> str:
    table = read(kept, "copying")
    steps = table.groupby("task")["step"].max()  # the run's length per distribution (permutation_fn trains longer)
    return copying_markdown(S.copying_intervals(table), S.last_evaluations(table, ["task", "seed"]), steps,
                            read(kept, "copy_counts_contrast"))


def multihead(kept: Path) -> str:
    table, trials = read(kept, "multihead"), read(kept, "multihead_trials")
    tests = S.tests_markdown(S.multihead_tests(table), S.head_sharing(table))
    return multihead_markdown(S.multihead_intervals(table), tests, read(kept, "multihead_heads"), trials)


def keyword(kept: Path) -> str:
    return keyword_markdown(S.keyword_intervals(read(kept, "keyword")))


def benchmarks(kept: Path) -> str:
    """Each job's wall and CPU seconds from its Snakemake benchmark file."""
    files = sorted((kept / "benchmarks").rglob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"{kept / 'benchmarks'}: no benchmark files (*.tsv) in the kept run")
    jobs = []
    for path in files:
        b = pd.read_csv(path, sep="\t").iloc[0]
        jobs.append((path.relative_to(kept / "benchmarks").with_suffix("").as_posix().replace("/", " "), b["s"],
                     b["cpu_time"]))
    return benchmarks_markdown(jobs)


SECTIONS = {"copying": copying, "multihead": multihead, "keyword": keyword, "benchmarks": benchmarks}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kept", type=Path, help="a kept run's folder (reproduction/experiments/...)")
    ap.add_argument("--section", choices=list(SECTIONS), action="append",
                    help="print only these (default: all, in this order)")
    args = ap.parse_args(argv)
    if not args.kept.is_dir():
        ap.error(f"{args.kept}: no such folder (a kept run is a folder under reproduction/experiments/)")
    try:
        text = "\n".join(SECTIONS[s](args.kept) for s in args.section or SECTIONS)
    except FileNotFoundError as e:
        print(f"experiments_tables.py: {e}", file=sys.stderr)
        return 1
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
