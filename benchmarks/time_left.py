"""How close the console's "about X left" came to the time a run really had left (not a test).

    snakemake --cores 2 -d /tmp/tl1 2>&1 | tee /tmp/tl1.log
    python benchmarks/time_left.py /tmp/tl1.log                 # the estimates against the truth
    python benchmarks/time_left.py /tmp/tl1.log --replay --times /tmp/tl0.log   # today's estimator on it
    python benchmarks/time_left.py /tmp/tl1.log --reference src/attnlearn/cost/default_times.tsv

Reads a run's console (the `attnlearn` logger's lines, src/attnlearn/runtime/console.py):
each finished job's line carries the clock time, the job's duration and the progress with the
time left. The truth at a line is the run's last line's clock time minus that line's. Prints,
for each line from ``--from`` (a share of the run's wall time) on, the estimate over the truth,
and the largest factor off either way (the goal: within 1.5 from 25% of the run on);
a line that gives no number ("time left not known", or rules left out of it) counts as off.

``--replay`` re-runs the console's estimator (attnlearn.runtime.console's Console, its time left
attnlearn.cost.time_left's, as they are on the Python path) at each finished job of the saved console as it stood then: the finished
jobs with their durations, the running ones (each job's start is its end less its duration,
to the second), and the progress bars the console printed for them (``--no-bars``: none),
each aged by the time since the finished job's line before it. What it omits: a bar the console
read but did not print (it prints every 30 s), and a bar's own rate (its "left" is taken as
printed). ``--times`` is the reference run (a console log, or a table as default_times.tsv;
default: that table), ``--records`` an earlier run's console in the same directory, whose
jobs' times stand in for its benchmark records (for the rules that have records). Take both
from runs other than the one replayed: its own times would be the truth it is measured by.

``--reference FILE`` writes each job's seconds (rule, wildcards, s), from the same lines, as
the reference the console prices jobs of the default config from.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
from collections import defaultdict
from datetime import datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# "08:05:54  done copying (perm40of60) -> results/...  (36 s)  | 1 of 114 jobs (0%), about ..."
_DONE = re.compile(r"^(?P<clock>\d\d:\d\d:\d\d)  done (?P<rule>\w+)(?: \((?P<values>[^()]*)\))?(?= |$)"
                   r".*?  \((?P<took>[^;)]+)[;)]")
# "    train (synthetic_mt, uniform-s1): step 1,127 of 2,000 (56%), 23 s left" (Console.follow)
_BAR = re.compile(r"^    (?P<rule>\w+)(?: \((?P<values>[^()]*)\))?: step [\d,]+ of [\d,]+ \(\d+%\)"
                  r"(?:, (?P<left>.+) left)?$")
_PROGRESS = re.compile(r"\| (?P<done>\d+) of (?P<total>\d+) jobs \(\d+%\)(?P<rest>.*)$")
_LEFT = re.compile(r"about (?P<left>.+?) left(?P<besides> besides .*)?$")


def seconds(text: str) -> float:
    """The console's durations ("45 s", "5 min 31 s", "2 h 4 min") as seconds."""
    units = {"s": 1, "min": 60, "h": 3600}
    return float(sum(int(n) * units[u] for n, u in re.findall(r"(\d+) (s|min|h)\b", text)))


def parse(lines: list[str]) -> list[dict]:
    """One entry per finished job's line: clock (s since the first), rule, values (its
    wildcards'), took, done, total, left (None: no number given), besides (rules left out of
    it), bars (the progress bars printed since the line before: (rule, values, seconds left))."""
    out, first, day, bars = [], None, 0, []
    for line in lines:
        b = _BAR.match(line)
        if b and b["left"]:
            bars.append((b["rule"], _values(b["values"]), seconds(b["left"])))
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
        out.append({"clock": t - first, "rule": m["rule"], "values": _values(m["values"]), "took": seconds(m["took"]),
                    "done": int(p["done"]), "total": int(p["total"]), "left": seconds(left["left"]) if left else None,
                    "besides": bool(left and left["besides"]), "bars": bars})
        bars = []
    return out


def _values(text: str | None) -> tuple[str, ...]:
    """A job's wildcard values as its label names them: "synthetic_mt, standard-s1"."""
    return tuple(text.split(", ")) if text else ()


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


def within(rows: list[dict], factor: float = 1.5) -> int:
    """How many of ``rows`` (accuracy's) gave a number within ``factor`` of the truth."""
    return sum(1 for r in rows if r["ratio"] and not r["besides"] and 1 / factor <= r["ratio"] <= factor)


def reference(entries: list[dict]) -> list[tuple[str, tuple[str, ...], float]]:
    """(rule, wildcard values, seconds) of each finished job's line."""
    return sorted((e["rule"], e["values"], e["took"]) for e in entries)


def write_reference(path: Path, rows, source: str, commit: str) -> None:
    lines = [f"# Seconds each job of a reference run of config/config.yaml took: {source}, commit {commit}.",
             "# Written by benchmarks/time_left.py --reference; read by src/attnlearn/cost/time_left.py.",
             "rule\twildcards\ts", *(f"{r}\t{', '.join(v)}\t{s:.1f}" for r, v, s in rows)]
    path.write_text("\n".join(lines) + "\n")


def times_of(path: Path) -> list[tuple[str, tuple[str, ...], float]]:
    """Each job's (rule, values, seconds) of a console log, or of a table of one row a job."""
    text = Path(path).read_text(errors="replace")
    entries = parse(text.splitlines())
    if entries:
        return reference(entries)
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    header, *rows = rows
    if "wildcards" not in header:
        raise SystemExit(f"{path}: a table of one row a rule: a replay needs each job's time")
    rule, values, s = (header.index(c) for c in ("rule", "wildcards", "s"))
    return [(row[rule], _values(row[values]), float(row[s])) for row in rows]


def workflow_benchmarks() -> dict[str, str]:
    """rule -> its benchmark records' glob, as the Snakefile gives the console (remember_benchmarks)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    from attnlearn.cost import time_left

    with tempfile.TemporaryDirectory() as tmp, SnakemakeApi(OutputSettings()) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=REPO / "Snakefile",
                          config_settings=ConfigSettings(configfiles=[REPO / "config/config.yaml"]), workdir=Path(tmp))
        wf._workflow  # the Snakefile is read on first use: it calls remember_benchmarks
        return dict(time_left.BENCHMARKS)


def replay(entries: list[dict], times=(), records=(), benchmarks=None, bars: bool = True) -> list[dict]:
    """The console's estimates at each finished job of a saved console (``parse``'s entries),
    re-made by attnlearn.runtime.console as it is now: entries as ``parse`` gives them, with
    the replayed estimate as left and besides. ``times``: the reference run's jobs (rule,
    values, seconds); ``records``: an earlier run's, written as benchmark records at
    ``benchmarks``' globs (rule -> glob), which the console reads from the working directory."""
    from attnlearn.runtime import console

    # the tables of earlier times: in the console's module before they moved to attnlearn.cost
    try:
        from attnlearn.cost import time_left as tables
    except ImportError:
        tables = console
    kept = (tables.REFERENCE.copy(), getattr(tables, "REFERENCE_JOBS", {}).copy(), tables.BENCHMARKS.copy())
    by_rule = defaultdict(dict)
    for rule, values, s in times:
        by_rule[rule][values] = s
    here = os.getcwd()
    try:
        tables.REFERENCE.clear()
        tables.REFERENCE.update({r: sum(j.values()) / len(j) for r, j in by_rule.items()})
        if hasattr(tables, "REFERENCE_JOBS"):  # per job where this estimator has it; an older one: a rule's mean only
            tables.REFERENCE_JOBS.clear()
            tables.REFERENCE_JOBS.update({r: {tables.job_key(v): s for v, s in jobs.items()}
                                          for r, jobs in by_rule.items()})
        tables.BENCHMARKS.clear()
        tables.BENCHMARKS.update(benchmarks or {})
        if hasattr(tables, "PENDING"):  # the run's jobs, as its onstart: kept them: the log's
            tables.PENDING.clear()
            for e in entries:
                tables.PENDING.setdefault(e["rule"], []).append(tables.job_key(e["values"]))
        with tempfile.TemporaryDirectory() as tmp:
            for rule, values, s in records:
                glob = tables.BENCHMARKS.get(rule)
                if glob is not None and glob.count("*") == len(values):
                    path = Path(tmp, glob.replace("*", "{}").format(*values))
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(f"s\n{s}\n")
            os.chdir(tmp)  # where the console reads the records from
            try:
                return _replay(console.Console, entries, bars)
            finally:
                os.chdir(here)
    finally:
        for table, was in zip((tables.REFERENCE, getattr(tables, "REFERENCE_JOBS", {}), tables.BENCHMARKS), kept):
            table.clear()
            table.update(was)
        getattr(tables, "PENDING", {}).clear()


def _replay(base, entries: list[dict], bars: bool) -> list[dict]:
    class Replayed(base):
        now = 0.0

        def __init__(self):
            super().__init__()
            self.printed = {}  # (rule, values) -> (seconds left, when printed)

        def _bar(self, job):  # the bar last printed for it, aged since; the log is not there
            left, at = self.printed.get((job["rule_name"], tuple((job.get("wildcards") or {}).values())), (None, 0))
            return None if left is None else {"left": max(0.0, left - (self.now - at))}

    t0 = 1e6  # an epoch: only differences count
    starts = [e["clock"] - e["took"] for e in entries]
    events = sorted([(s, i, 0) for i, s in enumerate(starts)] + [(e["clock"], i, 1) for i, e in enumerate(entries)])
    c = Replayed()
    rules = [e["rule"] for e in entries]
    c.record({"event": "run_info", "stats": {**{r: rules.count(r) for r in rules}, "total": entries[-1]["total"]},
              "created": t0 + min(starts)})
    out, last = [], min(starts)
    for t, i, finish in events:
        e = entries[i]
        if not finish:
            c.record({"event": "job_info", "jobid": i, "rule_name": e["rule"], "output": [], "created": t0 + t,
                      "wildcards": {f"w{k}": v for k, v in enumerate(e["values"])}})
            continue
        if bars:
            c.printed.update({(r, v): (left, last) for r, v, left in e["bars"]})
        c.record({"event": "job_finished", "job_id": i, "created": t0 + t})
        c.now = t
        [line] = c.record({"event": "progress", "done": e["done"], "total": e["total"], "created": t0 + t})
        rest = _PROGRESS.search(line)["rest"]
        left = _LEFT.search(rest)
        out.append({**e, "left": seconds(left["left"]) if left else None, "besides": bool(left and left["besides"])})
        last = t
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="a run's console output (stdout and stderr)")
    ap.add_argument("--from", dest="share", type=float, default=0.25, help="from this share of the run on")
    ap.add_argument("--start", type=float, help="seconds from the command's start to its first finished "
                    "job's line (default: that job's duration: the run began with it)")
    ap.add_argument("--reference", type=Path, help="write each job's time here")
    ap.add_argument("--commit", help="--reference: the commit the run was of (default: this checkout's)")
    ap.add_argument("--replay", action="store_true", help="the estimates the console makes now, not those printed")
    ap.add_argument("--times", type=Path, help="replay: the reference run's console or table (default: "
                    "the one a default run reads, src/attnlearn/cost/default_times.tsv)")
    ap.add_argument("--records", type=Path, help="replay: an earlier run's console in the same directory")
    ap.add_argument("--no-bars", dest="bars", action="store_false", help="replay: without the printed bars")
    args = ap.parse_args(argv)
    entries = parse(args.log.read_text(errors="replace").splitlines())
    if len(entries) < 2:
        raise SystemExit(f"{args.log}: fewer than two finished jobs' lines: not a console of the attnlearn logger")
    if args.reference:
        from attnlearn.runtime.commit import checkout_commit
        commit = args.commit or checkout_commit(REPO)
        write_reference(args.reference, reference(entries), f"{args.log.name}, {len(entries)} jobs", commit)
    if args.replay:
        times = times_of(args.times or REPO / "src/attnlearn/cost/default_times.tsv")
        records = times_of(args.records) if args.records else ()
        entries = replay(entries, times, records, workflow_benchmarks() if records else None, args.bars)
    rows, worst = accuracy(entries, entries[0]["took"] if args.start is None else args.start, args.share)
    print("| share of the run | jobs done | estimate | truth | estimate / truth |\n|---|---|---|---|---|")
    for r in rows:
        est = "not given" if r["left"] is None else f"{r['left']:.0f} s" + (" (rules left out)" if r["besides"] else "")
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "-"
        print(f"| {r['elapsed']:.0%} | {r['done']} of {r['total']} | {est} | {r['truth']:.0f} s | {ratio} |")
    late = max([max(r["ratio"], 1 / r["ratio"]) if r["ratio"] and not r["besides"] else float("inf")
                for r in rows if r["truth"] >= 30] or [1.0])
    print(f"\nFrom {args.share:.0%} of the run on ({len(rows)} lines), {within(rows)} estimates were within a factor "
          f"of 1.5 of the truth (the goal: all); the estimate was off by a factor of at most {worst:.2f}, "
          f"and by at most {late:.2f} while 30 s or more were left.")
    return worst


if __name__ == "__main__":
    main()
