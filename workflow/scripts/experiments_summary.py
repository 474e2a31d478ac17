"""Rule experiments_summary: the controlled experiments' tables as a Markdown summary."""

from pathlib import Path

import pandas as pd

from attnlearn import derivative_plots as D
from attnlearn.io import atomic_path
from attnlearn.jobs import run
from attnlearn.toy import experiments as E
from attnlearn.toy import multihead as M


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub Markdown table with values as they are (fractions, steps, log-odds)."""
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in df.itertuples(index=False)]) + "\n"


def keyword_summary(keyword: pd.DataFrame) -> pd.DataFrame:
    """Log-odds on positives at a few steps (first ones, middle, last), mean over seeds."""
    kw = keyword.groupby("step")[["accuracy", "keyword", "after", "uniform", "last"]].mean()
    picks = sorted({kw.index[min(i, len(kw) - 1)] for i in (0, 1, 2, 4, len(kw) // 2, len(kw) - 1)})
    return kw.loc[picks].reset_index()


def sections(tables: dict) -> list:
    out = []
    if "copying" in tables:
        out.append(("Copying (paper 3.3, A.3, 6.2): per distribution", E.summarize_copying(tables["copying"])))
        out.append(("Count tables: mean t(y|x) on aligned cells vs others", E.count_contrast(tables["copy_counts"])))
    if "multihead" in tables:
        out.append(("Multi-head (paper 5.2): per scenario", M.summarize_multihead(tables["multihead"])))
    if "keyword" in tables:
        out.append(("Keyword toy (paper 6.1): log-odds on positives, mean over seeds",
                    keyword_summary(tables["keyword"])))
    if "derivative" in tables:
        out.append(("Derivative at initialisation (paper 4.1, eq. 15): gradient flow, r with each expression "
                    "and eq. 15's slope, mean over seeds", D.flow_summary(tables["derivative"])))
        out.append(("Derivative at initialisation: one gradient step / step size at the largest embedding, "
                    "eq. 15's r and slope", D.step_summary(tables["derivative"])))
    return out


def main(job):
    tables = {Path(p).stem: pd.read_parquet(p) for p in job.input.tables}
    text = "# Controlled experiments (accuracies and shares as fractions)\n\n"
    text += "\n".join(f"## {title}\n\n{to_markdown(df)}" for title, df in sections(tables))
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(text)


run(main, globals().get("snakemake"))
