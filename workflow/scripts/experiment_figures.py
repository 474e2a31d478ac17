"""Rule experiment_figures: the controlled experiments' figures and a Markdown summary."""

from pathlib import Path

import pandas as pd

from attnlearn.io import atomic_path
from attnlearn.jobs import run
from attnlearn.toy import experiments as E
from attnlearn.toy import multihead as M
from attnlearn.toy import plots


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub Markdown table with values as they are (fractions, steps, log-odds)."""
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in df.itertuples(index=False)]) + "\n"


def main(job):
    tables = {Path(p).stem: pd.read_parquet(p) for p in job.input.tables}
    figures = {Path(p).stem: p for p in job.output.figures}
    sections = []
    if "copying" in tables:
        plots.copying_figure(tables["copying"], figures["copying"])
        plots.counts_figure(tables["copy_counts"], figures["copy_counts"])
        sections.append(("Copying (paper 3.3, A.3, 6.2): per distribution", E.summarize_copying(tables["copying"])))
        sections.append(("Count tables: mean t(y|x) on aligned cells vs others",
                         E.count_contrast(tables["copy_counts"])))
    if "multihead" in tables:
        plots.multihead_figure(tables["multihead"], figures["multihead"])
        sections.append(("Multi-head (paper 5.2): per scenario", M.summarize_multihead(tables["multihead"])))
    if "keyword" in tables:
        plots.keyword_figure(tables["keyword"], figures["keyword"])
        kw = tables["keyword"].groupby("step")[["accuracy", "keyword", "after", "uniform", "last"]].mean()
        picks = sorted({kw.index[min(i, len(kw) - 1)] for i in (0, 1, 2, 4, len(kw) // 2, len(kw) - 1)})
        sections.append(("Keyword toy (paper 6.1): log-odds on positives, mean over seeds",
                         kw.loc[picks].reset_index()))
    text = "# Controlled experiments (accuracies and shares as fractions)\n\n"
    text += "\n".join(f"## {title}\n\n{to_markdown(df)}" for title, df in sections)
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(text)


run(main, globals().get("snakemake"))
