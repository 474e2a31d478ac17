"""The record of a row's invocations (``<dir>/row_invocations.jsonl``), kept through kills.

A row of hours is stopped many times: a session ends, a lease runs out, a machine is lost. A
finished invocation appends its line (start, wall and CPU seconds, exit, commit) when Snakemake
returns; one killed outright (SIGKILL) never returns, and its line was lost with it, so a
kept run.json named only the last invocation: its start (which plan_tests.py reads to say a
plan came before the replicates) and its time were the resume's, not the row's. While an
invocation runs, ``Running`` therefore keeps ``row_invocation.running.json`` beside the log,
rewritten every minute with the time so far; ``settle`` turns one left by a killed invocation
into its line (``killed``: its wall time to the last minute seen; its CPU seconds, which died
with its process group, as ``cpu_s_seen``: what its process tree had used at that minute, read
from /proc where there is one).
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


def tree_cpu_s(pid: int) -> float | None:
    """CPU seconds (user + system) used so far by process ``pid`` and its descendants, those
    already reaped included (in their parents' ``cutime``/``cstime``); None without /proc (macOS)
    or once ``pid`` has gone. One pass over /proc/*/stat: fields after the command's closing
    parenthesis, which may itself hold spaces."""
    stats = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # a process that ended while read
            continue
        stats[int(stat.parent.name)] = (int(fields[1]), sum(int(f) for f in fields[11:15]))
    if pid not in stats:
        return None
    children: dict[int, list[int]] = {}
    for p, (ppid, _) in stats.items():
        children.setdefault(ppid, []).append(p)
    ticks, todo = 0, [pid]
    while todo:
        p = todo.pop()
        ticks += stats[p][1]
        todo.extend(children.get(p, []))
    return round(ticks / os.sysconf("SC_CLK_TCK"), 1)


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
    CPU seconds died with its process group), how many were killed and, where their records
    have it, the CPU seconds the killed ones had used by their last minute seen."""
    killed = [i for i in invocations if i.get("killed")]
    out = {"wall_s": round(sum(i["wall_s"] for i in invocations), 1),
           "cpu_s": round(sum(i["cpu_s"] for i in invocations if i.get("cpu_s") is not None), 1)}
    if not killed:
        return out
    seen = [i["cpu_s_seen"] for i in killed if i.get("cpu_s_seen") is not None]
    return {**out, "killed_invocations": len(killed), **({"killed_cpu_s_seen": round(sum(seen), 1)} if seen else {})}


class Running:
    """``with Running(work, record, pid):`` keeps ``record`` (start, commit, code) with the wall
    time so far and the CPU time of process ``pid``'s tree so far in
    ``row_invocation.running.json`` every ``every`` seconds while the invocation runs, and
    removes it on the way out (the invocation then appends its own line)."""

    def __init__(self, work: Path, record: dict, pid: int | None = None, every: float = 60.0):
        self.path, self.record, self.pid, self.every = work / RUNNING, dict(record), pid, every
        self.t0, self.stop = time.monotonic(), threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True)

    def _now(self) -> None:
        cpu = tree_cpu_s(self.pid) if self.pid is not None else None
        _write(self.path, {**self.record, "wall_s": round(time.monotonic() - self.t0, 1),
                           **({"cpu_s_seen": cpu} if cpu is not None else {}),
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
