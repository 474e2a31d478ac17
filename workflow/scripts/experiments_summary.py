"""Rule experiments_summary: the controlled experiments' numbers with their 95% intervals,
as one long table (experiment, group, quantity, value, low, high, n, interval) and as a
Markdown summary."""

from pathlib import Path

import pandas as pd

from attnlearn.experiments import derivative_plots as D
from attnlearn.runtime.io import atomic_path, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.experiments import copying as E
from attnlearn.experiments import summary as S

# table -> (its summary with intervals, the column that names a group, the section's title)
INTERVALS = {
    "copying": (S.copying_intervals, "task", "Copying (paper 3.3, A.3, 6.2): per distribution, over seeds"),
    "multihead": (S.multihead_intervals, "scenario", "Multi-head (paper 5.2): per scenario, over trials"),
    "keyword": (S.keyword_intervals, "step", "Keyword toy (paper 6.1): accuracy and log-odds on positives, "
                                             "over seeds"),
}
NOTE = ("Each cell: value [95% interval]; a converged share as k/n = share with its Wilson interval, "
        "means with the t interval over the runs (steps to converge: over the converged runs); "
        "no interval below two runs. Multi-head all_bad and one_good: their trials share the found heads, "
        "so their intervals have the head as the unit (docs/experiments.md).\n\n")


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub Markdown table with values as they are (fractions, steps, log-odds)."""
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else str(v)  # noqa: E731
    lines = ["| " + " | ".join(df.columns) + " |", "|" + "---|" * len(df.columns)]
    return "\n".join(lines + ["| " + " | ".join(map(cell, row)) + " |" for row in df.itertuples(index=False)]) + "\n"


def intervals(tables: dict) -> dict:
    """Experiment -> its long interval frame, for the experiments the config ran."""
    return {name: summarize(tables[name]) for name, (summarize, _, _) in INTERVALS.items() if name in tables}


def long_table(frames: dict) -> pd.DataFrame:
    """Every experiment's intervals in one frame, its group as text in ``group``."""
    parts = [f.rename(columns={INTERVALS[name][1]: "group"}).astype({"group": str}).assign(experiment=name)
             for name, f in frames.items()]
    columns = ["experiment", "group", *S.COLUMNS]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def sections(tables: dict, frames: dict) -> list:
    """(title, Markdown table) of each experiment the config ran, in the order of the docs."""
    out = []
    if "copying" in frames:
        out.append((INTERVALS["copying"][2], S.markdown(frames["copying"], "task")))
        out.append(("Count tables: mean t(y|x) on aligned cells vs others",
                    to_markdown(E.count_contrast(tables["copy_counts"]))))
    for name in ("multihead", "keyword"):
        if name in frames:
            out.append((INTERVALS[name][2], S.markdown(frames[name], INTERVALS[name][1])))
        if name == "multihead" and name in frames:
            out.append(("Multi-head contrasts: converged shares, the head as the unit, Holm over the two",
                        S.tests_markdown(S.multihead_tests(tables[name]), S.head_sharing(tables[name]))))
    if "derivative" in tables:
        out.append(("Derivative at initialisation (paper 4.1, eq. 15): gradient flow, r with each expression "
                    "and eq. 15's slope, mean over seeds", to_markdown(D.flow_summary(tables["derivative"]))))
        out.append(("Derivative at initialisation: one gradient step / step size at the largest embedding, "
                    "eq. 15's r and slope", to_markdown(D.step_summary(tables["derivative"]))))
    return out


def main(job):
    tables = {Path(p).stem: pd.read_parquet(p) for p in job.input.tables}
    frames = intervals(tables)
    write_parquet(long_table(frames), job.output.intervals)
    tests = S.multihead_tests(tables["multihead"]) if "multihead" in tables else pd.DataFrame(columns=S.TEST_COLUMNS)
    write_parquet(tests, job.output.tests)
    text = "# Controlled experiments (accuracies and shares as fractions)\n\n" + NOTE
    text += "\n".join(f"## {title}\n\n{body}" for title, body in sections(tables, frames))
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(text)


run(main, globals().get("snakemake"))
