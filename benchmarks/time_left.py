"""How close the console's "about X left" came to the time a run really had left (not a test).

    snakemake --cores 2 -d /tmp/tl1 2>&1 | tee /tmp/tl1.log
    python benchmarks/time_left.py /tmp/tl1.log                 # the estimates against the truth
    python benchmarks/time_left.py /tmp/tl1.log --reference src/attnlearn/runtime/default_times.tsv

Reads a run's console (the `attnlearn` logger's lines, src/attnlearn/runtime/console.py):
each finished job's line carries the clock time, the job's duration and the progress with the
time left. The truth at a line is the run's last line's clock time minus that line's. Prints,
for each line from ``--from`` (a share of the run's wall time) on, the estimate over the truth,
and the largest factor off either way (issue 64's goal: within 1.5 from 25% of the run on);
a line that gives no number ("time left not known", or rules left out of it) counts as off.

``--reference FILE`` writes each rule's jobs and mean seconds a job, from the same lines, as
the reference the console prices untimed rules of the default config from.
"""

from __future__ import annotations

import argparse
import re
import subprocess
from collections import defaultdict
from datetime import datetime
from pathlib import Path

_DONE = re.compile(r"^(?P<clock>\d\d:\d\d:\d\d)  done (?P<rule>\w+)\b.*?  \((?P<took>[^;)]+)[;)]")
_PROGRESS = re.compile(r"\| (?P<done>\d+) of (?P<total>\d+) jobs \(\d+%\)(?P<rest>.*)$")
_LEFT = re.compile(r"about (?P<left>.+?) left(?P<besides> besides .*)?$")


def seconds(text: str) -> float:
    """The console's durations ("45 s", "5 min 31 s", "2 h 4 min") as seconds."""
    units = {"s": 1, "min": 60, "h": 3600}
    return float(sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (s|min|h)\b", text)))


def parse(lines: list[str]) -> list[dict]:
    """One entry per finished job's line: clock (s since the first), rule, took, done, total,
    left (None: no number given), besides (rules left out of it)."""
    out, first, day = [], None, 0
    for line in lines:
        m = _DONE.match(line)
        p = _PROGRESS.search(line)
        if not (m and p):
            continue
        t = datetime.strptime(m["clock"], "%H:%M:%S")
        t = t.hour * 3600 + t.minute * 60 + t.second + day
        if first is not None and t < out[-1]["clock"] + first:  # past midnight
            day += 86400
            t += 86400
        first = t if first is None else first
        left = _LEFT.search(p["rest"])
        out.append({"clock": t - first, "rule": m["rule"], "took": seconds(m["took"]), "done": int(p["done"]),
                    "total": int(p["total"]), "left": seconds(left["left"]) if left else None,
                    "besides": bool(left and left["besides"])})
    return out


def accuracy(entries: list[dict], start: float, share: float) -> tuple[list[dict], float]:
    """Each entry from ``share`` of the run's wall time on, with its estimate over the truth,
    and the largest factor off (estimate/truth or truth/estimate; inf where no number was given).
    ``start``: the seconds from the run's start to the first entry (Snakemake's planning)."""
    end = entries[-1]["clock"]
    wall = end + start
    rows, worst = [], 1.0
    for e in entries[:-1]:
        truth = end - e["clock"]
        if e["clock"] + start < share * wall or truth <= 0:
            continue
        ratio = e["left"] / truth if e["left"] else None
        off = max(ratio, 1 / ratio) if ratio else float("inf")
        if e["besides"]:
            off = float("inf")  # rules left out: not an estimate of the whole
        worst = max(worst, off)
        rows.append({**e, "truth": truth, "ratio": ratio, "elapsed": (e["clock"] + start) / wall})
    return rows, worst


def reference(entries: list[dict]) -> list[tuple[str, int, float]]:
    """(rule, jobs, mean seconds a job), from the finished jobs' lines."""
    took = defaultdict(list)
    for e in entries:
        took[e["rule"]].append(e["took"])
    return sorted((r, len(ts), sum(ts) / len(ts)) for r, ts in took.items())


def write_reference(path: Path, rows, source: str, commit: str) -> None:
    lines = [f"# Seconds a job per rule of a reference run of config/config.yaml: {source}, commit {commit}.",
             "# Written by benchmarks/time_left.py --reference; read by src/attnlearn/runtime/console.py.",
             "rule\tjobs\tmean_s", *(f"{r}\t{n}\t{s:.1f}" for r, n, s in rows)]
    path.write_text("\n".join(lines) + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="a run's console output (stdout and stderr)")
    ap.add_argument("--from", dest="share", type=float, default=0.25, help="from this share of the run on")
    ap.add_argument("--start", type=float, help="seconds from the command's start to its first finished "
                    "job's line (default: that job's duration: the run began with it)")
    ap.add_argument("--reference", type=Path, help="write the rules' mean times here")
    args = ap.parse_args(argv)
    entries = parse(args.log.read_text(errors="replace").splitlines())
    if len(entries) < 2:
        raise SystemExit(f"{args.log}: fewer than two finished jobs' lines: not a console of the attnlearn logger")
    if args.reference:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        write_reference(args.reference, reference(entries), f"{args.log.name}, {len(entries)} jobs", commit)
    rows, worst = accuracy(entries, entries[0]["took"] if args.start is None else args.start, args.share)
    print("| share of the run | jobs done | estimate | truth | estimate / truth |\n|---|---|---|---|---|")
    for r in rows:
        est = "not given" if r["left"] is None else f"{r['left']:.0f} s" + (" (rules left out)" if r["besides"] else "")
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "-"
        print(f"| {r['elapsed']:.0%} | {r['done']} of {r['total']} | {est} | {r['truth']:.0f} s | {ratio} |")
    print(f"\nFrom {args.share:.0%} of the run on ({len(rows)} lines), the estimate was off by a factor of at most "
          f"{worst:.2f} (goal: 1.5).")
    return worst


if __name__ == "__main__":
    main()
