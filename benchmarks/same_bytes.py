"""Same bytes, less CPU: jobs rerun under two code trees, their outputs compared byte for byte.

    python benchmarks/same_bytes.py DIR TARGET... --tree before=/tmp/base --tree after=. [--repeats 3]

DIR is a Snakemake working directory whose jobs' inputs are already made (for a training:
``snakemake --cores 1 -d DIR results/tokenized/synthetic_mt/train.parquet`` and its tokenizer).
Each repeat runs every tree once in turn (before, after, before, ...: a load that drifts
weighs on both), each run ``snakemake --cores 1 -d DIR -s TREE/Snakefile TARGET...`` with
``PYTHONPATH=TREE/src`` and ``--allowed-rules`` the targets' rules (another tree's code files
are other inputs, which would rerun the data jobs), after removing what the targets' jobs
made: a training's whole run folder (its work folder too, else the rerun publishes the
finished training), any other target's file. A tree is a checkout of the code:
``git archive COMMIT | tar -x -C /tmp/base`` gives one of an earlier commit.

Per run it records the CPU seconds of the snakemake process and its children (getrusage:
exact, Snakemake's own ~3 s included, the same in every tree) and each job's benchmark file's
``cpu_time`` (sampled) and ``s``, and a sha256 of every output: each file of a training's
checkpoint folder (manifest.json included) and its train_log's columns but ``elapsed_s``
(a clock reading, different in every run), a summary table less the workflow's stamp
(reporting/made_for.py: it names the tree's config file), each other target's file whole. It prints a table
per tree and whether every run of every tree made the same bytes, and writes it all to
DIR/same_bytes.json (--out). Exit status 1 when any output differs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

RUN = re.compile(r"^results/runs/(?P<dataset>[^/]+)/(?P<run>[^/]+)/")


def rule_of(target: str) -> str:
    """The rule that makes ``target`` (else name them with --rules): ``train`` for a run's files,
    ``proxy`` for a proxy's, the folder under results/experiments, else the file's stem's first
    word (results/tables/multihead_trials.parquet -> multihead)."""
    if RUN.match(target):
        return "train"
    parts = Path(target).parts
    if parts[:2] == ("results", "proxy"):
        return "proxy"
    if parts[:2] == ("results", "experiments"):
        return parts[2]
    return re.split(r"[_.]", Path(target).name)[0]


def clean(workdir: Path, targets: list[str]) -> None:
    """Remove what the targets' jobs made, so that they run again from scratch."""
    for target in targets:
        m = RUN.match(target)
        path = workdir / (m[0] if m else target)
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()


def digest(workdir: Path, targets: list[str]) -> dict[str, str]:
    """sha256 per output: a training's checkpoint files and its log less elapsed_s, else the file."""
    out = {}
    for target in targets:
        path = workdir / target
        m = RUN.match(target)
        if m and path.name == "train_log.parquet":
            log = pd.read_parquet(path).drop(columns="elapsed_s")
            out[f"{target} (less elapsed_s)"] = hashlib.sha256(log.to_csv(index=False).encode()).hexdigest()
            for f in sorted((path.parent / "checkpoints").iterdir()):
                out[str(f.relative_to(workdir))] = hashlib.sha256(f.read_bytes()).hexdigest()
        elif path.suffix == ".parquet" and b"made_for" in (pq.read_schema(path).metadata or {}):
            out[f"{target} (less made_for)"] = hashlib.sha256(unstamped(path)).hexdigest()
        else:
            out[target] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def unstamped(path: Path) -> bytes:
    """A summary table as its job wrote it, less the stamp the workflow adds when the run ends
    (reporting/made_for.py), which names the config file by its path: another tree's."""
    table = pq.read_table(path)
    meta = {k: v for k, v in (table.schema.metadata or {}).items() if k != b"made_for"}
    sink = pa.BufferOutputStream()
    pq.write_table(table.replace_schema_metadata(meta), sink)
    return sink.getvalue().to_pybytes()


def benchmark_files(workdir: Path, since: float) -> dict[str, dict]:
    """The benchmark files the run wrote: cpu_time and s of each."""
    out = {}
    for path in sorted((workdir / "results" / "benchmarks").rglob("*.tsv")):
        if path.stat().st_mtime >= since:
            row = pd.read_csv(path, sep="\t").iloc[-1]
            out[str(path.relative_to(workdir))] = {"cpu_time": float(row["cpu_time"]), "s": float(row["s"])}
    return out


def run_once(tree: Path, workdir: Path, targets: list[str], rules: list[str]) -> dict:
    clean(workdir, targets)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tree / "src"), os.environ.get("PYTHONPATH")]))}
    cmd = [sys.executable, "-m", "snakemake", "--cores", "1", "-d", str(workdir), "-s", str(tree / "Snakefile"),
           "--allowed-rules", *rules, "--", *targets]
    before, start = resource.getrusage(resource.RUSAGE_CHILDREN), time.time()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return {"cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "user_s": after.ru_utime - before.ru_utime, "sys_s": after.ru_stime - before.ru_stime,
            "wall_s": time.time() - start, "jobs": benchmark_files(workdir, start),
            "sha256": digest(workdir, targets)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workdir", type=Path)
    ap.add_argument("targets", nargs="+")
    ap.add_argument("--tree", action="append", required=True, metavar="NAME=PATH",
                    help="a code tree to run (repeatable; the first is the reference)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, help="where the record goes (default: DIR/same_bytes.json)")
    ap.add_argument("--rules", nargs="+", help="the rules of the targets' jobs (default: read from their paths)")
    args = ap.parse_args(argv)
    rules = args.rules or sorted({rule_of(t) for t in args.targets})
    trees = {name: Path(path).resolve() for name, path in (t.split("=", 1) for t in args.tree)}
    runs = {name: [] for name in trees}
    for r in range(args.repeats):
        for name, tree in trees.items():
            runs[name].append(run_once(tree, args.workdir, args.targets, rules))
            last = runs[name][-1]
            print(f"repeat {r + 1} {name}: {last['cpu_s']:.1f} CPU-s ({last['user_s']:.1f} user, "
                  f"{last['sys_s']:.1f} sys), {last['wall_s']:.1f} s wall", flush=True)
    reference = runs[next(iter(trees))][0]["sha256"]
    same = True
    print("\n| tree | CPU-s per run (median) | runs | job cpu_time (median) | same bytes as the first tree's first run |")
    print("|---|---|---|---|---|")
    for name, rs in runs.items():
        identical = all(r["sha256"] == reference for r in rs)
        same &= identical
        job_cpu = statistics.median(sum(j["cpu_time"] for j in r["jobs"].values()) for r in rs)
        each = ", ".join(f"{r['cpu_s']:.1f}" for r in rs)
        print(f"| {name} | {statistics.median(r['cpu_s'] for r in rs):.1f} | {each} | {job_cpu:.1f} | "
              f"{'yes' if identical else 'NO'} |")
    if not same:
        for name, rs in runs.items():
            for i, r in enumerate(rs):
                for key in sorted(set(reference) | set(r["sha256"])):
                    if reference.get(key) != r["sha256"].get(key):
                        print(f"differs: {name} run {i + 1}: {key}")
    record = {"targets": args.targets, "trees": {k: str(v) for k, v in trees.items()}, "runs": runs,
              "same_bytes": same}
    (args.out or args.workdir / "same_bytes.json").write_text(json.dumps(record, indent=1))
    print(f"\n{len(reference)} outputs; every run of every tree made the same bytes: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
