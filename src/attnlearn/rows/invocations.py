"""The record of a row's invocations (``<dir>/row_invocations.jsonl``), kept through kills.

A row of hours is stopped many times: a session ends, a lease runs out, a machine is lost. A
finished invocation appends its line (start, wall and CPU seconds, exit, commit) when Snakemake
returns; one killed outright (SIGKILL) never returns, and its line was lost with it, so a
kept run.json named only the last invocation: its start (which plan_tests.py reads to say a
plan came before the replicates) and its time were the resume's, not the row's. While an
invocation runs, ``Running`` therefore keeps ``row_invocation.running.json`` beside the log,
rewritten every minute with the time so far; ``settle`` turns one left by a killed invocation
into its line (``killed``: its wall time to the last minute seen, its CPU seconds unknown).
"""

from __future__ import annotations

import json
import os
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

LOG = "row_invocations.jsonl"
RUNNING = "row_invocation.running.json"


def _write(path: Path, record: dict) -> None:
    """Written beside, then moved: a kill mid-write leaves the last whole record."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record) + "\n")
    os.replace(tmp, path)


def append(work: Path, record: dict) -> None:
    with open(work / LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


def settle(work: Path) -> dict | None:
    """Log the invocation that a kill left running (its record, or None when there was none)."""
    running = work / RUNNING
    if not running.is_file():
        return None
    record = {**json.loads(running.read_text()), "cpu_s": None, "returncode": None, "killed": True}
    append(work, record)
    running.unlink()
    return record


def read(work: Path) -> list[dict]:
    """Every invocation of the row in ``work``, a killed one's included."""
    settle(work)
    log = work / LOG
    return [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []


def totals(invocations: list[dict]) -> dict:
    """run.json's sums: wall over every invocation, CPU over those that returned (a killed one's
    CPU seconds died with its process group), and how many were killed."""
    killed = sum(1 for i in invocations if i.get("killed"))
    out = {"wall_s": round(sum(i["wall_s"] for i in invocations), 1),
           "cpu_s": round(sum(i["cpu_s"] for i in invocations if i.get("cpu_s") is not None), 1)}
    return {**out, "killed_invocations": killed} if killed else out


class Running:
    """``with Running(work, record):`` keeps ``record`` (start, commit, code) with the wall time
    so far in ``row_invocation.running.json`` every ``every`` seconds while the invocation runs,
    and removes it on the way out (the invocation then appends its own line)."""

    def __init__(self, work: Path, record: dict, every: float = 60.0):
        self.path, self.record, self.every = work / RUNNING, dict(record), every
        self.t0, self.stop = time.monotonic(), threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _now(self) -> None:
        _write(self.path, {**self.record, "wall_s": round(time.monotonic() - self.t0, 1),
                           "last_seen": datetime.now(timezone.utc).isoformat(timespec="seconds")})

    def _beat(self) -> None:
        while not self.stop.wait(self.every):
            self._now()

    def __enter__(self) -> "Running":
        settle(self.path.parent)  # never write over the record of one killed before
        self._now()
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join()
        self.path.unlink(missing_ok=True)
