"""When a plan was committed and when the replicates it reads began training: a plan's tests
are confirmatory only if git shows the plan, with the bytes it has now, committed before the
first training of its replicates (sweep.plan_status reads the two times). ``read_plan`` is what a
rule that reads a plan does with them."""

from __future__ import annotations

import hashlib
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from attnlearn.agreement.plans import evaluate, load_plan, sha256
from attnlearn.agreement.sweep import plan_status


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
    """The earliest checkpoint file's time among the runs: each run writes its step-0 checkpoint
    as it starts (published into the output folder as a hard link, keeping its time)."""
    times = [f.stat().st_mtime for d in checkpoints for f in Path(d).rglob("*") if f.is_file()]
    return datetime.fromtimestamp(min(times), timezone.utc) if times else None


def read_plan(path: Path, repo: str, checkpoints, frame: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The plan at ``path`` read on ``frame`` (one row per independent replicate): confirmatory
    only if git shows it committed before the first of ``checkpoints`` was written. Returns its
    rows (plans.evaluate's, with ``why``) and the status as a phrase, "status: why"."""
    committed, changed = plan_record(path, repo)
    status, why = plan_status(committed, first_training(checkpoints), changed)
    print(f"plan {path.name}: {status}: {why}")
    rows = evaluate(load_plan(path), frame, confirmatory=status == "confirmatory").assign(why=why)
    return rows, f"{status}: {why}"
