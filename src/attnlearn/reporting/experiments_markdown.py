"""The controlled experiments' tables on docs/experiments.md as Markdown (experiments_tables.py):
copying, multi-head, the keyword toy and the jobs' times, from a kept run's tables and the
intervals and tests attnlearn.experiments.summary computed over them."""

from __future__ import annotations

import pandas as pd

from attnlearn.experiments import summary as S


def value_range(values) -> str:
    """The lowest and highest of ``values`` to two decimals ('-' for none)."""
    values = [f"{v:.2f}" for v in sorted(values)]
    return "-" if not values else values[0] if values[0] == values[-1] else f"{values[0]}-{values[-1]}"


def copying_markdown(intervals: pd.DataFrame, last: pd.DataFrame, steps: pd.Series, contrast: pd.DataFrame) -> str:
    """Copying per distribution (``intervals``: summary.copying_intervals), each distribution's
    steps run (``steps``) and its runs that did not converge (``last``: each run's last
    evaluation), then the count tables' aligned cells against the others (``contrast``)."""
    text = "Copying, per distribution over its seeds:\n\n" + S.markdown(intervals, "task")
    lines = ["| task | steps run | not converged | their final token acc. |", "|---|---|---|---|"]
    for task, runs in last.groupby("task", sort=True):
        failed = runs[~runs["converged"].astype(bool)]
        lines.append(f"| {task} | {steps[task]} | {len(failed)}/{len(runs)} | {value_range(failed['token_acc'])} |")
    counts = ["| task | mean t(y\\|x), aligned | other cells | ratio |", "|---|---|---|---|"]
    counts += [f"| {r.task} | {r.t_aligned:.5f} | {r.t_other:.5f} | {r.ratio:.3f} |"
               for r in contrast.itertuples(index=False)]
    return text + "\n" + "\n".join(lines) + "\n\nCount tables:\n\n" + "\n".join(counts) + "\n"


def multihead_markdown(intervals: pd.DataFrame, tests: str, heads: pd.DataFrame, trials: pd.DataFrame) -> str:
    """Multi-head per scenario (``intervals``: summary.multihead_intervals; ``tests``: its tests as
    Markdown, summary.tests_markdown), the candidate heads (``heads``) and each scenario's trials
    that did not converge (``trials``)."""
    text = "Multi-head, per scenario over its trials:\n\n" + S.markdown(intervals, "scenario") + "\n" + tests
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
        lines.append(f"| {scenario} | {len(failed)}/{len(runs)} | {value_range(failed['final_token_acc'])} |")
    return text + "\n" + "\n".join(lines) + "\n"


def keyword_markdown(intervals: pd.DataFrame) -> str:
    """The keyword toy over seeds (summary.keyword_intervals)."""
    return ("Keyword toy, log-odds on positive sequences over seeds (last - keyword: the paired gap):\n\n"
            + S.markdown(intervals, "step"))


def benchmarks_markdown(jobs: list[tuple[str, float, float]]) -> str:
    """Each job's (name, wall seconds, CPU seconds) from its Snakemake benchmark file."""
    lines = ["| job | wall s | CPU s |", "|---|---|---|"]
    lines += [f"| {name} | {wall:.0f} | {cpu:.0f} |" for name, wall, cpu in jobs]
    return "\n".join(lines) + "\n"
