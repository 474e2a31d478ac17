"""What a kept row cost, read from its parts' run.json: every invocation, the killed ones too.

    python paper_rows/row_costs.py reproduction/rows/multi30k_epochs20

One line per kept part (or block, or row kept whole): its invocations and how many a session's
or lease's end killed, the first start and the last invocation's end, wall hours summed over
its invocations, CPU hours of those that returned (a killed one's exact CPU died with it; where
its record has it, what its process tree had used by its last minute seen is the next column),
and where it ran. Parts that ran side by side overlap in wall time: their sum is the machine
time the row held, not how long it took.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta
from pathlib import Path

from attnlearn.rows.invocations import totals


def run_files(folder: Path) -> list[Path]:
    """The row's run.json files: its own (a row kept whole) or its parts' and blocks'."""
    own = folder / "run.json"
    return [own] if own.is_file() else sorted(folder.glob("part*/run.json"))


def _end(invocation: dict) -> datetime:
    return datetime.fromisoformat(invocation["start"]) + timedelta(seconds=invocation["wall_s"])


def cost(run: Path, label: str) -> dict:
    """One kept folder's invocations summed (invocations.totals, recomputed: a run.json kept
    before a killed invocation's CPU was recorded has no killed_cpu_s_seen of its own)."""
    calls = json.loads(run.read_text())["invocations"]
    sums = totals(calls)
    seen = sums.get("killed_cpu_s_seen")
    return {"folder": label, "invocations": len(calls), "killed": sums.get("killed_invocations", 0),
            "first_start": min(i["start"] for i in calls), "last_end": max(map(_end, calls)),
            "wall_h": sums["wall_s"] / 3600, "cpu_h": sums["cpu_s"] / 3600,
            "killed_cpu_h_seen": seen / 3600 if seen is not None else None,
            "where": ", ".join(dict.fromkeys(i.get("device", "?") for i in calls)),
            "commits": ", ".join(dict.fromkeys(f"`{i['commit']}`" for i in calls))}


def _hours(h: float | None) -> str:
    return "-" if h is None else f"{h:.2f}"


def cost_lines(costs: list[dict]) -> list[str]:
    lines = ["| kept | invocations (killed) | first start | last end | wall h | CPU h, returned | "
             "CPU h seen in killed | on | commits |", "|---" * 9 + "|"]
    lines += [f"| {c['folder']} | {c['invocations']} ({c['killed']}) | {c['first_start'][:16].replace('T', ' ')} | "
              f"{c['last_end'].isoformat()[:16].replace('T', ' ')} | {_hours(c['wall_h'])} | {_hours(c['cpu_h'])} | "
              f"{_hours(c['killed_cpu_h_seen'])} | {c['where']} | {c['commits']} |" for c in costs]
    killed = sum(c["killed"] for c in costs)
    lines += ["", f"{len(costs)} kept: {sum(c['wall_h'] for c in costs):.2f} h of wall summed over "
              f"{sum(c['invocations'] for c in costs)} invocations ({killed} killed), "
              f"{sum(c['cpu_h'] for c in costs):.2f} CPU-hours measured over those that returned."]
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path, help="kept rows' folders (reproduction/rows/<row>)")
    args = ap.parse_args(argv)
    runs = {r: row.name if r.parent == row else f"{row.name}/{r.parent.name}" for row in args.rows
            for r in run_files(row)}
    if not runs:
        print(f"no run.json in {', '.join(map(str, args.rows))} or their part*/ folders", file=sys.stderr)
        return 2
    try:
        costs = [cost(r, label) for r, label in runs.items()]
    except (KeyError, ValueError) as e:
        print(f"a run.json without its invocations' start and wall: {e!r}", file=sys.stderr)
        return 2
    print("\n".join(cost_lines(costs)))
    return 0
