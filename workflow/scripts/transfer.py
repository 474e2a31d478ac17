"""Rule transfer: the transfer test's curves, responses, per-seed table and plan
(src/attnlearn/agreement/transfer.py), its page and its figure."""

from pathlib import Path

import pandas as pd

from attnlearn.agreement import transfer as T
from attnlearn.agreement.metric import read_probe
from attnlearn.agreement.plan_record import read_plan
from attnlearn.agreement.plans import RESULT_COLUMNS as PLAN_COLUMNS
from attnlearn.reporting.transfer_figure import figure
from attnlearn.reporting.transfer_page import markdown
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def dataset_curves(entry: dict) -> pd.DataFrame:
    """One sweep value's curves: each replicate's A run and U run, read from the paths the rule names."""
    probes, perf = {}, {}
    for rep in entry["replicates"]:
        probes[rep["a_run"]] = read_probe(rep["a_probe"], ["alpha"])
        probes[rep["u_run"]] = read_probe(rep["u_probe"], ["xi"])
        perf[rep["u_run"]] = pd.read_parquet(rep["u_perf"])
    gold = read_probe(entry["gold"], ["gold"]) if entry["gold"] else None
    return T.curves(entry["dataset"], entry["init"], entry["replicates"], probes, perf, gold)


def plan_rows(job, seeds: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    if not job.input.plan:
        return pd.DataFrame(columns=PLAN_COLUMNS), ""
    return read_plan(Path(job.input.plan[0]), job.params.repo, job.input.checkpoints, seeds)


def main(job):
    window = job.params.window
    curves = pd.concat([dataset_curves(e) for e in job.params.entries], ignore_index=True)
    responses = T.responses(curves, window)
    seeds = T.seed_table(responses)
    plan, status = plan_rows(job, seeds)
    write_parquet(curves, job.output.curves)
    write_parquet(responses, job.output.responses)
    write_parquet(seeds, job.output.seeds)
    write_parquet(plan, job.output.plan)
    Path(job.output.markdown).write_text(markdown(T.pooled(responses), plan, status, job.params.sweep, window))
    figure(curves, window, job.output.figure)


run(main, globals().get("snakemake"))
