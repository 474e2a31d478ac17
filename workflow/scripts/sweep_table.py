"""Rule sweep_table: a sweep pooled per value (mean, 95% CI, PI, n for every Table 2 column and
alpha*'s agreement with the gold links), the trend of each column on the value over the
replicates, and the sweep's analysis plan read on them (src/attnlearn/agreement/sweep.py)."""

from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement import sweep as S
from attnlearn.agreement.metric import load_measure, probe_measure
from attnlearn.agreement.plan_record import read_plan
from attnlearn.agreement.plans import RESULT_COLUMNS as PLAN_COLUMNS
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def gold_frame(job, sweep) -> pd.DataFrame | None:
    """alpha*'s gold columns per (dataset, replicate): run A at its best step against the gold links."""
    if not job.input.gold:
        return None
    golds = {Path(p).parent.name: p for p in job.input.gold}
    runs = [(d, r) for d, design in sweep["designs"].items() for r in design if r["independent"]]
    rows = []
    for (dataset, rep), alpha_path, perf_path in zip(runs, job.input.alpha, job.input.perf):
        step = S.star(pd.read_parquet(perf_path))
        gold = load_measure(pq.read_table(golds[dataset]), "gold", 0)
        rows.append({"dataset": dataset, "replicate": rep["replicate"],
                     **S.alpha_gold(probe_measure(alpha_path, "alpha", step), gold)})
    return pd.DataFrame(rows)


def main(job):
    sweep = job.params.sweep
    reps = S.sweep_replicates(pd.read_parquet(job.input.replicates), sweep, gold_frame(job, sweep))
    table, trend = S.pooled(reps), S.trend(reps)
    plan_rows, status = pd.DataFrame(columns=PLAN_COLUMNS), ""
    if job.input.plan:
        plan_rows, status = read_plan(Path(job.input.plan[0]), job.params.repo, job.input.checkpoints, reps)
    write_parquet(reps, job.output.replicates)
    write_parquet(table, job.output.table)
    write_parquet(trend, job.output.trend)
    write_parquet(plan_rows, job.output.plan)
    table.to_csv(job.output.tsv, sep="\t", index=False)
    Path(job.output.markdown).write_text(S.markdown(sweep, table, trend, plan_rows, status))


run(main, globals().get("snakemake"))
