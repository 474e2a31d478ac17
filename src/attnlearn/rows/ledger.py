"""Every row, block and sweep invocation that was started, kept or not (reproduction/rows/ledger.jsonl).

    python paper_rows/ledger.py reproduction/rows/ledger.jsonl reproduction/rows reproduction/sweeps

A kept folder's run.json holds the invocations that made it; a run started and then dropped
(lost with a session's /tmp, discarded for a fault, refused) kept no folder, so without a record
of its own a reader could not tell it from one never started. paper_row.py appends a line here
when an invocation starts (``started``: its directory, command, commit, start) and when its row
is kept (``kept``: the folder); ``paper_row.py --drop DIR --why TEXT`` records one given up
(``dropped``). Lines written after the fact, from logs or commit messages, carry
``reconstructed`` and their ``source``. The page prints one row per working directory: kept
(where), dropped (why), or open (started, neither kept nor dropped yet: running, or to resume).
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

from attnlearn.reporting.row_markdown import ledger_markdown

NAME = "ledger.jsonl"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def append(out: Path, record: dict) -> None:
    """One line appended to ``out``/ledger.jsonl (one write call: lines from two rows running
    at once do not interleave)."""
    out.mkdir(parents=True, exist_ok=True)
    line = (json.dumps(record, sort_keys=True) + "\n").encode()
    fd = os.open(out / NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def read(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if line.strip():
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not a JSON line ({e.msg})") from None
    return out


def from_kept(root: Path) -> list[dict]:
    """The events of every folder kept under ``root`` (reproduction/rows: each part's or block's
    run.json, its invocations killed ones included; docs/sweeps: each sweep.json), so that the
    printed ledger holds the kept runs beside the dropped ones."""
    events = []
    for run in sorted(root.glob("*/*/run.json")):
        info = json.loads(run.read_text())
        words = info.get("command", "").split()
        directory = words[words.index("-d") + 1] if "-d" in words else str(run.parent)
        for inv in info.get("invocations", []):
            events.append({"event": "started", "directory": directory, "start": inv.get("start", "?"),
                           "commit": inv.get("commit", "?"), "command": info.get("command", "")})
        events.append({"event": "kept", "directory": directory, "dest": str(run.parent.relative_to(root))})
    for sweep in sorted(root.glob("*/sweep.json")):
        info = json.loads(sweep.read_text()).get("run", {})
        directory = f"sweep {sweep.parent.name}"
        events += [{"event": "started", "directory": directory, "start": info.get("started", "?"),
                    "commit": info.get("commit", "?"), "command": info.get("command", "")},
                   {"event": "kept", "directory": directory, "dest": str(sweep.parent.relative_to(root))}]
    return events


def by_directory(records: list[dict]) -> list[dict]:
    """One entry per working directory, in order of first start: its invocations' starts and
    commits, its command, and its status (kept, dropped, open) with where or why."""
    dirs: dict[str, dict] = {}
    for r in records:
        d = dirs.setdefault(r["directory"], {"directory": r["directory"], "starts": [], "commits": [],
                                              "command": "", "status": "open", "note": "",
                                              "reconstructed": 0})
        if r["event"] == "started" and r.get("start") in d["starts"]:
            continue  # one invocation twice: in its kept run.json and in the line the ledger got as it started
        d["reconstructed"] += int(bool(r.get("reconstructed")) and r["event"] == "started")
        if r["event"] == "started":
            d["starts"].append(r.get("start", "?"))
            d["commits"].append(r.get("commit", "?"))
            d["command"] = d["command"] or r.get("command", "")
        elif r["event"] == "kept":
            d["status"], d["note"] = "kept", r.get("dest", "")
        elif r["event"] == "dropped":
            d["status"], d["note"] = "dropped", r.get("why", "")
    return list(dirs.values())


def markdown(records: list[dict]) -> list[str]:
    """The ledger's page: one table row per working directory (by_directory)."""
    return ledger_markdown(by_directory(records))


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv:
        print("usage: python paper_rows/ledger.py reproduction/rows/ledger.jsonl [KEPT_ROOT ...]", file=sys.stderr)
        return 2
    try:
        records = read(Path(argv[0]))
        kept = [e for root in argv[1:] for e in from_kept(Path(root))]
        # a directory's kept events first, then the ledger's own (dropped, or started and open)
        print("\n".join(markdown(kept + records)))
    except (ValueError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
