"""A row's analysis plan, fixed before its first job (paper_row.py --plan).

The plan's path (relative to the repository), sha256 and the commit that last wrote it are
written to ``<dir>/plan.json`` before the row's first invocation runs a job, and copied to the
kept run.json. Every later invocation of the same directory re-reads the file and refuses to
run where its bytes changed: a plan rewritten after the replicates were seen is not the plan
they were trained under. A directory whose row already ran without a plan gets none: a plan
added then would be written after the replicates, which is what the record is there to rule
out (docs/methods.md 5.5).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from attnlearn.agreement.plans import load_plan, sha256

RECORD = "plan.json"
INVOCATIONS = "row_invocations.jsonl"


class PlanRefused(RuntimeError):
    """The plan cannot be fixed for this directory: the message says why and what to do."""


def git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)


def plan_record(path: Path, repo: Path) -> dict:
    """What run.json keeps of the plan at ``path``: its path in the repository, sha256 and the
    commit that last wrote it (with that commit's time). The plan must be committed as it is:
    an uncommitted plan has no date that git can show."""
    path = path.resolve()
    try:
        rel = path.relative_to(repo)
    except ValueError:
        raise PlanRefused(f"{path}: a plan lives in the repository ({repo}), where git dates it") from None
    if git(repo, "ls-files", "--error-unmatch", str(rel)).returncode != 0:
        raise PlanRefused(f"{rel}: not committed; commit the plan before the row's first job (git add {rel} "
                          "&& git commit)")
    if git(repo, "diff", "--quiet", "HEAD", "--", str(rel)).returncode != 0:
        raise PlanRefused(f"{rel}: differs from its committed version; commit it (or restore it) first")
    last = git(repo, "log", "-1", "--format=%H %cI", "--", str(rel)).stdout.split()
    return {"path": str(rel), "sha256": sha256(path), "commit": last[0], "committed_at": last[1]}


def records(plan) -> list[dict]:
    """The plan records of a run.json or plan.json: one plan is kept as a dict (as every row
    kept before a row could carry several), several as a list."""
    return [] if not plan else list(plan) if isinstance(plan, list) else [plan]


def fix_plan(work: Path, plans, dataset: str, repo: Path):
    """Record ``plans`` (a path, or several: a block can be run for more than one plan, each
    reading its own table of the same replicates) for the row in ``work`` before its first
    job, or check them against the record of an earlier invocation. Without plans: the
    recorded ones, if any, are checked as they stand. Returns the record as plan.json keeps it
    (a dict for one plan, a list for several; None: the row has no plan)."""
    plans = [] if plans is None else [plans] if isinstance(plans, (str, Path)) else list(plans)
    recorded = work / RECORD
    old = json.loads(recorded.read_text()) if recorded.is_file() else None
    if not plans and old is None:
        return None
    paths = [Path(p) for p in plans] or [repo / r["path"] for r in records(old)]
    for path in paths:
        loaded = load_plan(path)
        if loaded["dataset"] != dataset:
            raise PlanRefused(f"{path}: dataset {loaded['dataset']!r}, but the row is {dataset!r}")
    new = [plan_record(path, repo) for path in paths]
    if old is not None:
        before = {(r["path"], r["sha256"]) for r in records(old)}
        if before != {(r["path"], r["sha256"]) for r in new}:
            said = ", ".join(f"{r['path']} (sha256 {r['sha256'][:12]})" for r in records(old))
            now = ", ".join(f"{r['path']} reads {r['sha256'][:12]}" for r in new)
            raise PlanRefused(f"{work / RECORD}: the row was started under {said}; {now}. A plan changed (or "
                              "added, or dropped) after the row began cannot be confirmatory: restore the "
                              "files, or start a fresh row in a new directory")
        return old
    if (work / INVOCATIONS).is_file():
        raise PlanRefused(f"{work}: the row already ran without a plan ({work / INVOCATIONS}); a plan fixed now "
                          "would be written after its replicates. Start the row in a new directory")
    record = new[0] if len(new) == 1 else new
    recorded.write_text(json.dumps(record, indent=1) + "\n")
    return record
