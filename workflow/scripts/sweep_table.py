"""Rule sweep_table: a sweep pooled per value (mean, 95% CI, PI, n for every Table 2 column and
alpha*'s agreement with the gold links), the trend of each column on the value over the
replicates, and the sweep's analysis plan read on them (src/attnlearn/agreement/sweep.py)."""

import hashlib
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement import sweep as S
from attnlearn.agreement.metric import load_measure, probe_measure
from attnlearn.agreement.plans import evaluate, load_plan, sha256
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


def git(repo, *args) -> str:
    try:
        return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def plan_record(path: Path, repo: str) -> tuple[datetime | None, bool]:
    """When git first shows the plan with the bytes it has now, and whether it differs from HEAD's."""
    digest = sha256(path)
    repo_path, full = Path(repo).resolve(), path.resolve()
    rel = str(full.relative_to(repo_path)) if full.is_relative_to(repo_path) else str(full)
    changed = bool(git(repo, "status", "--porcelain", "--", rel).strip())
    for line in filter(None, git(repo, "log", "--reverse", "--format=%H %cI", "--", rel).split("\n")):
        commit, when = line.split()
        blob = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=repo, capture_output=True).stdout
        if hashlib.sha256(blob).hexdigest() == digest:
            return datetime.fromisoformat(when), changed
    return None, changed


def first_training(checkpoints) -> datetime | None:
    """The earliest checkpoint file's time among the sweep's runs: each run writes its step-0
    checkpoint as it starts (published into the output folder as a hard link, keeping its time)."""
    times = [f.stat().st_mtime for d in checkpoints for f in Path(d).rglob("*") if f.is_file()]
    return datetime.fromtimestamp(min(times), timezone.utc) if times else None


def main(job):
    sweep = job.params.sweep
    reps = S.sweep_replicates(pd.read_parquet(job.input.replicates), sweep, gold_frame(job, sweep))
    table, trend = S.pooled(reps), S.trend(reps)
    plan_rows, status = pd.DataFrame(columns=PLAN_COLUMNS), ""
    if job.input.plan:
        path = Path(job.input.plan[0])
        plan = load_plan(path)
        committed, changed = plan_record(path, job.params.repo)
        status, why = S.plan_status(committed, first_training(job.input.checkpoints), changed)
        plan_rows = evaluate(plan, reps, confirmatory=status == "confirmatory").assign(why=why)
        status = f"{status}: {why}"
        print(f"plan {path.name}: {status}")
    write_parquet(reps, job.output.replicates)
    write_parquet(table, job.output.table)
    write_parquet(trend, job.output.trend)
    write_parquet(plan_rows, job.output.plan)
    table.to_csv(job.output.tsv, sep="\t", index=False)
    Path(job.output.markdown).write_text(S.markdown(sweep, table, trend, plan_rows, status))


run(main, globals().get("snakemake"))
