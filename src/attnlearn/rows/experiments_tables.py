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

TABLES = ("copying", "copy_counts_contrast", "multihead", "multihead_trials", "multihead_heads", "keyword")


def read(kept: Path, name: str) -> pd.DataFrame:
    """A kept run's table, or an error naming the file and what a kept run holds."""
    path = kept / f"{name}.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; a kept run's folder holds "
                                f"{', '.join(t + '.parquet' for t in TABLES)} and benchmarks/ (reproduction/experiments/*/README.md)")
    return pd.read_parquet(path)


def _range(values) -> str:
    """The lowest and highest of ``values`` to two decimals ('-' for none)."""
    values = [f"{v:.2f}" for v in sorted(values)]
    return "-" if not values else values[0] if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


def copying(kept: Path) -> str:
    table = read(kept, "copying")
    text = "Copying, per distribution over its seeds:\n\n" + S.markdown(S.copying_intervals(table), "task")
    last = S.last_evaluations(table, ["task", "seed"])
    # the run's length per distribution (permutation_fn trains longer), read from the curves
    steps = table.groupby("task")["step"].max()
    lines = ["| task | steps run | not converged | their final token acc. |", "|---|---|---|---|"]
    for task, runs in last.groupby("task", sort=True):
        failed = runs[~runs["converged"].astype(bool)]
        lines.append(f"| {task} | {steps[task]} | {len(failed)}/{len(runs)} | {_range(failed['token_acc'])} |")
    contrast = read(kept, "copy_counts_contrast")
    counts = ["| task | mean t(y\\|x), aligned | other cells | ratio |", "|---|---|---|---|"]
    counts += [f"| {r.task} | {r.t_aligned:.5f} | {r.t_other:.5f} | {r.ratio:.3f} |"
               for r in contrast.itertuples(index=False)]
    return text + "\n" + "\n".join(lines) + "\n\nCount tables:\n\n" + "\n".join(counts) + "\n"


def multihead(kept: Path) -> str:
    table = read(kept, "multihead")
    trials = read(kept, "multihead_trials")
    text = "Multi-head, per scenario over its trials:\n\n" + S.markdown(S.multihead_intervals(table), "scenario")
    text += "\n" + S.tests_markdown(S.multihead_tests(table), S.head_sharing(table))
    heads = read(kept, "multihead_heads")
    labels = heads["label"].value_counts()
    # a good or bad head was trained on every data seed (a mixed one stops at the first that
    # disagrees), so the longest list of final accuracies is the number of data seeds
    data_seeds = int(heads["final_token_acc"].map(len).max())
    k = trials["heads"].str.split().map(len).iloc[0]
    text += (f"\nCandidates: {len(heads)} (seeds {heads['head_seed'].min()}-{heads['head_seed'].max()}), "
             f"each classified on {data_seeds} data seed{'s' * (data_seeds != 1)}: {labels.get('good', 0)} good, "
             f"{labels.get('bad', 0)} bad, {labels.get('neither', 0)} neither; base seed "
             f"{trials['base_seed'].iloc[0]}, every {k}-head model on data seed {trials['data_seed'].iloc[0]}.\n")
    lines = ["| scenario | not converged | their final token acc. |", "|---|---|---|"]
    for scenario, runs in trials.groupby("scenario", sort=False):
        failed = runs[~runs["converged"].astype(bool)]
        lines.append(f"| {scenario} | {len(failed)}/{len(runs)} | {_range(failed['final_token_acc'])} |")
    return text + "\n" + "\n".join(lines) + "\n"


def keyword(kept: Path) -> str:
    table = read(kept, "keyword")
    return ("Keyword toy, log-odds on positive sequences over seeds (last - keyword: the paired gap):\n\n"
            + S.markdown(S.keyword_intervals(table), "step"))


def benchmarks(kept: Path) -> str:
    """Each job's wall and CPU seconds from its Snakemake benchmark file."""
    files = sorted((kept / "benchmarks").rglob("*.tsv"))
    if not files:
        raise FileNotFoundError(f"{kept / 'benchmarks'}: no benchmark files (*.tsv) in the kept run")
    lines = ["| job | wall s | CPU s |", "|---|---|---|"]
    for path in files:
        b = pd.read_csv(path, sep="\t").iloc[0]
        name = path.relative_to(kept / "benchmarks").with_suffix("").as_posix().replace("/", " ")
        lines.append(f"| {name} | {b['s']:.0f} | {b['cpu_time']:.0f} |")
    return "\n".join(lines) + "\n"


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
