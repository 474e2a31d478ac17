"""Run several parts of paper-size rows at once on one machine (a GPU node) and keep each as it ends.

    python paper_rows/parallel_parts.py newsgroups:2 newsgroups:3 -d /tmp/parts \\
        --device cuda --cores 16 --pack /tmp/packed

Each DATASET:PART runs `paper_row.py DATASET -d <dir>/DATASET_partR --part R` in its own
directory, all at once (or `--at-once K` at a time, the next part taking the cores of one that
ends), the cores dealt out in proportion to the trainings each part runs, its proxies included
(its widest stage); on a GPU every job shares the one GPU. A part is kept in `--out` (reproduction/rows
by default) the moment it finishes, whatever the others do. With `--pack DIR` it is also written
as DIR/DATASET_partR.tar.gz (its kept folder, its jobs' logs, timings and figures), for a
machine whose files do not outlive it; a part that did not finish leaves
DIR/DATASET_partR.unfinished.tar.gz (its logs and timings: where it stood). Each part's
progress is printed every --report-every seconds. A stop (`--stop-after` seconds, SIGTERM,
SIGINT) ends the unfinished parts; the same command resumes them (paper_row.py's Snakemake
keeps finished jobs and trainings resume from their last state). After a kill outright
(SIGKILL, a machine lost) add `--unlock`: each part's directory is unlocked first.

``--by-priority`` (fewer cores than the parts want, a laptop): every part at once, each with all
the cores, the first named first served: part k runs at niceness 19 k / (n - 1), so the first
runs as if alone and each later part takes what those before it leave idle (their last
training, a proxy, a probe), and no core waits while a part has a job to run. Dealt cores
idle whenever a part has fewer jobs left than its share. A job's wall time then includes the
turns it gave up: read costs from CPU time.

How many parts fit a GPU lease is measured, not assumed: on an H200 with 16 cores, five parts
at once (20 Newsgroups 2-3, Multi30k 1-3: 19 trainings) had not finished one in 570 s; on an
H100, one 20 Newsgroups part alone took 212-385 s (docs/benchmarks.md, "Rows on a GPU").
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import signal
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import yaml

from attnlearn.rows.local_sources import local_config
from attnlearn.rows import REPO
from attnlearn.rows.entries import part_entry, resolved_entry
from attnlearn.rows.keeping import kept_folder


def parse_part(text: str) -> tuple[str, int]:
    """'newsgroups:2' -> ('newsgroups', 2)."""
    dataset, sep, part = text.partition(":")
    if not sep or not part.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r}: write DATASET:PART, e.g. newsgroups:2")
    return dataset, int(part)


def trainings(config: dict, dataset: str, part: int) -> int:
    """How many trainings the part has, its runs and its proxies (its widest stage: on fewer
    cores the proxy waited for the runs, and its probe then held up the part's tables)."""
    entry = part_entry(config["datasets"][dataset], resolved_entry(config, dataset), part)
    return sum(len(seeds) for seeds in entry["runs"].values()) + len(entry["proxy"]["seeds"])


def deal_cores(widths: list[int], cores: int) -> list[int]:
    """``cores`` dealt to parts in proportion to ``widths``, at least one each, never more than a
    part's width (a part cannot use more cores than it has jobs side by side)."""
    if cores < len(widths):
        raise ValueError(f"{cores} cores for {len(widths)} parts: each part needs one")
    share = [1] * len(widths)
    for _ in range(cores - len(widths)):
        room = [i for i, w in enumerate(widths) if share[i] < w]
        if not room:
            break
        share[max(room, key=lambda i: (widths[i] / share[i], -i))] += 1
    return share


def niceness(count: int) -> list[int]:
    """The niceness of each of ``count`` parts run --by-priority: 0 for the first, 19 for the
    last, evenly between (a higher niceness yields the cores to a lower one)."""
    return [round(19 * k / (count - 1)) if count > 1 else 0 for k in range(count)]


def lowered(nice: int):
    """A Popen ``preexec_fn`` that runs the child, and all it starts, at ``nice``. Setting the
    process's niceness is not enough on Linux with autogroups (a desktop kernel's default), where
    each session (start_new_session: a part's own) gets an equal share of the CPU whatever its
    processes' niceness: the session's autogroup is given the same niceness."""
    def lower() -> None:
        os.nice(nice)
        try:
            Path("/proc/self/autogroup").write_text(str(nice))
        except OSError:  # no autogroups (not Linux, or a kernel without them): niceness alone
            pass
    return lower


def pack(work: Path, dest: Path, kept: Path | None) -> Path:
    """One tar.gz of a part (written beside, then moved into place): its kept folder, where it
    finished, and its jobs' logs, benchmark timings and figures, finished or not (where an
    unfinished part stood when a lease ended)."""
    name = dest.name.removesuffix(".tar.gz")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    with tarfile.open(tmp, "w:gz") as tar:
        if kept is not None:
            tar.add(kept, arcname=f"{name}/{kept.name}")
        for sub in ("logs", "benchmarks", "figures"):
            if (work / "results" / sub).is_dir():
                tar.add(work / "results" / sub, arcname=f"{name}/work_{sub}")
        for sub in ("row.log", "row_invocations.jsonl", "row_invocation.running.json", "local.yaml"):
            if (work / sub).is_file():
                tar.add(work / sub, arcname=f"{name}/work_{sub}")
    tmp.rename(dest)
    return dest


JOBS = re.compile(r"\d+ of \d+ (?:jobs|steps) \(\d+%\)")  # the console's count (Snakemake's own: steps)
STEP = re.compile(r"^\s+((\S+ \(.*\)): step [\d,]+ of [\d,]+ \(\d+%\))")  # a running training's bar
DONE = re.compile(r"\sdone (\S+ \([^)]*\))")  # a finished job (a failed one ends its part)


def progress(work: Path) -> str:
    """Where a part stands, from its log: the last count of finished jobs, and the latest
    progress line of each training that has not ended ('starting' before either)."""
    log = work / "row.log"
    count, running = None, {}  # job -> its latest bar
    for line in log.read_text(errors="replace").splitlines() if log.is_file() else []:
        if m := STEP.match(line):
            running[m.group(2)] = m.group(1)
        elif m := DONE.search(line):
            running.pop(m.group(1), None)
        if m := JOBS.search(line):
            count = m.group(0)
    parts = ([count] if count else []) + list(running.values())
    return "; ".join(parts) or "starting"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("parts", nargs="+", type=parse_part, help="DATASET:PART, e.g. newsgroups:2")
    ap.add_argument("-d", "--directory", type=Path, required=True, help="one working directory per part below it")
    ap.add_argument("--config", type=Path, default=REPO / "config/paper_cpu.yaml")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared/data")
    ap.add_argument("--out", type=Path, default=REPO / "reproduction/rows")
    ap.add_argument("--cores", type=int, default=2, help="all the parts' cores together")
    ap.add_argument("--device", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--unlock", action="store_true", help="unlock each part's directory first (after a kill "
                    "outright; only when no other run uses them)")
    ap.add_argument("--pack", type=Path, help="also write each finished part as DIR/DATASET_partR.tar.gz")
    ap.add_argument("--stop-after", type=float, help="end the unfinished parts after this many seconds")
    ap.add_argument("--report-every", type=float, default=60, help="seconds between progress lines")
    order = ap.add_mutually_exclusive_group()
    order.add_argument("--at-once", type=int, help="run this many parts at a time, the next taking the cores of "
                       "one that ends (default: all): under a time limit, parts that finish beat parts that all share")
    order.add_argument("--by-priority", action="store_true", help="every part at once with all the cores, "
                       "the first named first served (niceness 0 to 19): no core idles while a part has a job")
    ap.add_argument("--dry-run", action="store_true", help="print each part's command, cores and niceness; run none")
    args = ap.parse_args(argv)

    config = local_config(yaml.safe_load(args.config.read_text()), args.data.resolve().as_uri())
    at_once = min(args.at_once or len(args.parts), len(args.parts))
    try:
        widths = [trainings(config, d, p) for d, p in args.parts]
        slots = ([min(w, args.cores) for w in widths] if args.by_priority else deal_cores(widths[:at_once], args.cores))
    except (KeyError, ValueError) as e:
        ap.error(f"{args.config}: {e}")
    nices = niceness(len(args.parts)) if args.by_priority else [0] * len(args.parts)
    if args.dry_run:
        return dry_run(args, slots, nices, widths, at_once)

    nice_of = dict(zip(args.parts, nices))

    def start(dataset: str, part: int, cores: int) -> tuple[subprocess.Popen, Path]:
        work = part_directory(args, dataset, part)
        work.mkdir(parents=True, exist_ok=True)
        cmd = part_command(args, dataset, part, work, cores)
        nice = nice_of[(dataset, part)]
        print(f"{dataset} part {part}: {cores} cores{f', nice {nice}' if args.by_priority else ''}, "
              f"log {work}/row.log", flush=True)
        with open(work / "row.log", "a") as log:  # the part's processes hold their own copy
            return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                    preexec_fn=lowered(nice) if nice else None), work

    waiting = list(zip(args.parts, widths))[at_once:]
    running = {key: (*start(*key, cores), cores) for key, cores in zip(args.parts, slots)}
    stopped = []

    def stop(*_):
        stopped.append(True)  # no waiting part starts after a stop
        for proc, _, _ in running.values():
            if proc.poll() is None:  # the part's whole group: paper_row.py, its Snakemake and their jobs
                os.killpg(proc.pid, signal.SIGTERM)  # Snakemake ends its jobs; a rerun resumes

    before = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}  # given back at the end
    t0, reported, failed = time.monotonic(), time.monotonic(), []
    try:
        while running:
            time.sleep(1)
            if args.stop_after and time.monotonic() - t0 > args.stop_after and not stopped:
                stop()
            if time.monotonic() - reported > args.report_every:
                reported = time.monotonic()
                for (dataset, part), (_, work, _) in running.items():
                    print(f"{reported - t0:.0f} s: {dataset} part {part}: {progress(work)}", flush=True)
            for key, (proc, work, cores) in list(running.items()):
                if proc.poll() is None:
                    continue
                del running[key]
                if not ended(key, proc, work, time.monotonic() - t0, args):
                    failed.append(key)
                if waiting and not stopped:  # the freed cores go to the next part
                    (dataset, part), width = waiting.pop(0)
                    running[(dataset, part)] = (*start(dataset, part, min(cores, width)), min(cores, width))
    except BaseException:  # an error, or a test's timeout: the parts (sessions of their own) must not run on unwatched
        stop()
        for proc, _, _ in running.values():
            proc.wait()
        raise
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)
    for dataset, part in [key for key, _ in waiting]:
        print(f"{dataset} part {part}: not started", flush=True)
    return 1 if failed or waiting else 0


def dry_run(args, slots: list[int], nices: list[int], widths: list[int], at_once: int) -> int:
    """What the run would start: each part's cores, niceness and paper_row.py command (a waiting
    part takes the cores of the part whose end it waits for, at most its width: C)."""
    for k, (dataset, part) in enumerate(args.parts):
        work = part_directory(args, dataset, part)
        if k < at_once:
            when, cores = f"at once on {slots[k]} core{'s' * (slots[k] > 1)}", slots[k]
        else:
            when, cores = f"when a running part ends, on its C cores (at most {widths[k]})", "C"
        print(f"{dataset} part {part}: {when}, nice {nices[k]}: "
              f"{shlex.join(part_command(args, dataset, part, work, cores))}")
    return 0


def part_directory(args, dataset: str, part: int) -> Path:
    """The working directory of one part, below --directory."""
    return args.directory.resolve() / f"{dataset}_part{part}"


def part_command(args, dataset: str, part: int, work: Path, cores: int | str) -> list[str]:
    """The paper_row.py command of one part, with this run's options."""
    return [sys.executable, str(REPO / "paper_rows/paper_row.py"), dataset, "-d", str(work), "--part", str(part),
            "--config", str(args.config), "--data", str(args.data), "--out", str(args.out), "--cores", str(cores),
            *(["--device", args.device] if args.device else []),
            *(["--deterministic"] if args.deterministic else []), *(["--unlock"] if args.unlock else [])]


def ended(key: tuple[str, int], proc: subprocess.Popen, work: Path, took: float, args) -> bool:
    """Report a part that ended and pack it (finished or not); whether it finished."""
    dataset, part = key
    kept = kept_folder(args.out.resolve(), dataset, part) if proc.returncode == 0 else None
    if kept is None:
        print(f"{dataset} part {part}: exit {proc.returncode} after {took:.0f} s at {progress(work)} "
              f"(see {work}/row.log; the same command resumes it)", flush=True)
    else:
        print(f"{dataset} part {part}: done in {took:.0f} s, kept {kept}", flush=True)
    if args.pack:
        name = f"{dataset}_part{part}"
        dest = args.pack / (f"{name}.tar.gz" if kept else f"{name}.unfinished.tar.gz")
        print(f"  packed {pack(work, dest, kept)}", flush=True)
        if kept:  # where an earlier stop left it is history now
            (args.pack / f"{name}.unfinished.tar.gz").unlink(missing_ok=True)
    return kept is not None


if __name__ == "__main__":
    sys.exit(main())
