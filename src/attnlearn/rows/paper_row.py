"""Run one paper-size Table 2 row from the local data copies and keep what it made.

    python paper_rows/paper_row.py sms_spam -d /tmp/row_sms
    git add reproduction/rows/sms_spam && git commit -m "SMS spam row" -- reproduction/rows/sms_spam

A row takes hours on 2 cores, and a machine's `results/` do not outlive it: the row's tables
(its `results/tables` and `results/analyses/<dataset>`, a few hundred KB) are copied to
`reproduction/rows/<dataset>/` to be
committed, with `run.json` (command, commit, wall and CPU seconds of every invocation), so
that `paper_rows/reproduction_rows.py` (on the rows docs/reproduction.md names) rebuilds its tables
from rows run at different times. In the working directory it writes `local.yaml`
(`local_sources.py`: the config's dataset pointed at the copies in ../shared/data) and runs,
from the repository,

    snakemake --cores 2 <targets> -d <dir> --configfile <dir>/local.yaml --config 'only=[<dataset>]'

A run stopped at any point is resumed by the same command: Snakemake keeps every finished
job and a training restarts from its last checkpoint; each invocation is logged in
`<dir>/row_invocations.jsonl`, one killed outright too (invocations.py), and the kept
`run.json` sums them. A run killed outright
(SIGKILL, a machine lost) leaves Snakemake's lock on the directory: when no other run uses it,
add `--unlock` to the same command (it unlocks, then resumes).

The jobs import this checkout's `src/` (job_env), and each job reads it when it starts: a row
of hours run from the checkout you keep working in would run later jobs on later code. Run it
from a worktree of its own, which keeps the recorded commit the code that ran:

    git worktree add --detach /tmp/row_code HEAD
    python /tmp/row_code/paper_rows/paper_row.py sms_spam -d /tmp/row_sms3 --part 3 --data ../shared/data --out reproduction/rows

(from this checkout's root: the row's tables are kept in this checkout's reproduction/rows).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import platform
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

from attnlearn.rows import REPO, ledger
from attnlearn.rows.entries import (BLOCK_VARIANTS, VARIANTS, block_entry, factorial_entry, parse_block,
                                    part_entry, resolved_entry)
from attnlearn.rows.invocations import Running, settle
from attnlearn.rows.invocations import append as append_invocation
from attnlearn.rows.keeping import keep, kept_folder
from attnlearn.rows.local_sources import local_config
from attnlearn.rows.provenance import tree_hash
from attnlearn.rows.row_plan import PlanRefused, fix_plan
from attnlearn.runtime.commit import checkout_commit

# re-exported for the commands and tests that drive a row through this module
__all__ = ["VARIANTS", "block_entry", "kept_folder", "main", "part_entry", "resolved_entry", "run"]


def targets(dataset: str, config: dict) -> list[str]:
    """The row's tables, its contextualized figure, its examples page and, where the dataset
    trains them, its TanhMax runs' comparison and appendix A.1's optimal-attention table."""
    out = ["results/tables/tables.md", f"results/figures/{dataset}/contextualized.png",
           f"results/report/examples/{dataset}.html"]
    runs = config["datasets"][dataset].get("runs", {})
    if runs.get("tanhmax"):
        out.append(f"results/analyses/{dataset}/tanhmax.parquet")
    if runs.get("additive"):
        out.append("results/tables/optimal_attention.md")
    return out


def command(dataset: str, config: dict, work: Path, cores: int, dry_run: bool = False,
            until: tuple[str, ...] = ()) -> list[str]:
    """The snakemake command line, run from the repository into ``work``: targets before
    --configfile (which takes several values). On a GPU every job may share the one GPU
    (``--resources gpu=<cores>``; the default profile's gpu=1 would run the trainings one at a
    time while the GPU idles between their small LSTM kernels). ``until``: only those rules' jobs
    and what they need (snakemake --until), e.g. a row's trainings, probed later on later code."""
    gpu = ["--resources", f"gpu={cores}"] if config.get("device", "cpu") != "cpu" else []
    stop = ["--until", *until] if until else []
    return ["snakemake", "--cores", str(cores), *targets(dataset, config), *(["-n"] if dry_run else []), *gpu, *stop,
            "-d", str(work), "--configfile", str(work / "local.yaml"), "--config", f"only=[{dataset}]"]


# the rules that make a row's runs and probes: --keep-runs marks their finished outputs (the
# probes once all are made: touched_rules), and
# those of the jobs they depend on (the data's), up to date instead of rerunning them for code
# changed since (snakemake --until: those rules and their dependencies only)
RUN_RULES = ("train", "probe", "proxy")
# the training split's probes (tables.train_split, --train-split): touched too once an earlier
# invocation made every one of them; until then the row's command makes them (a touch cannot)
TRAIN_SPLIT_RULES = ("probe_train", "proxy_probe_train")


def touched_rules(config: dict, dataset: str, work: Path) -> tuple[str, ...]:
    """The rules --keep-runs touches for ``config`` (the one touched under): the trainings, and
    the probes of either split where ``work`` holds every one of them (a re-table at a later
    commit then reprobes none: 35 minutes of SST's block). A probe not made yet is made by the
    row's command: a touch cannot make it, and a row trained with ``--until train proxy`` (the
    probes run later, on later code) would otherwise stop inside Snakemake's touch."""
    entry = config["datasets"][dataset]
    runs = [f"{variant}-s{s}" for variant, seeds in entry["runs"].items() for s in seeds]
    proxies = [f"proxy-s{s}" for s in entry.get("proxy", {}).get("seeds", [])]

    def all_made(folder: Path, names: list[str]) -> bool:
        return all((folder / f"{n}.parquet").is_file() for n in names)

    # the validation probe of a proxy is the proxy rule's own output; the probe rule's are the runs'
    probed = all_made(work / "results/probes" / dataset, runs)
    rules = tuple(r for r in RUN_RULES if r != "probe" or probed)
    if config.get("tables", {}).get("train_split") and all_made(work / "results/train_split/probes" / dataset,
                                                                 runs + proxies):
        rules += TRAIN_SPLIT_RULES
    return rules


def keep_runs(cmd: list[str], configfile: Path | None = None, rules: tuple[str, ...] = RUN_RULES) -> None:
    """Mark the finished runs, probes and what they read as up to date (snakemake --touch,
    those rules only), so that the row's next invocation remakes only what reads them (the
    agreement, readings and tables of this commit's code). For code changes that leave the runs
    as they were: checked, where it matters, by retraining one run (docs/reproduction.md).
    Snakemake 9's touch under --until can stop after the trainings ("Out of jobs ready to be
    started", its issue 823): up to two more passes touch what is left, the last one showing
    Snakemake's error if it fails too. ``configfile``: the config to touch under, in place of
    the row's (``trained_only``: runs added by this invocation are trained, not touched);
    ``rules``: those touched (touched_rules)."""
    if configfile is not None:
        cmd = [*cmd[:cmd.index("--configfile") + 1], str(configfile), *cmd[cmd.index("--configfile") + 2:]]
    touch = [sys.executable, "-m", *cmd, "--touch", "--until", *rules]
    for _ in range(2):
        done = subprocess.run(touch, cwd=REPO, env=job_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if done.returncode == 0:
            return
    subprocess.run(touch, cwd=REPO, env=job_env(), check=True, stdout=subprocess.DEVNULL)


def trained_only(config: dict, dataset: str, work: Path, variants: list[str]) -> dict:
    """``config`` without the runs of ``variants`` that ``work`` has not finished training (no
    train log published yet): what --keep-runs touches when --variants adds runs to a finished
    block. Snakemake's touch cannot touch a run that was never trained, and stops short at its
    probe (its issue 823); the runs it leaves out are trained by the row's command."""
    config = copy.deepcopy(config)
    runs = config["datasets"][dataset]["runs"]
    for variant in variants:
        runs[variant] = [s for s in runs[variant]
                         if (work / "results/runs" / dataset / f"{variant}-s{s}" / "train_log.parquet").is_file()]
    return config


def on_device(config: dict, dataset: str, device: str | None, deterministic: bool) -> dict:
    """``config`` with the row's jobs on ``device`` (None: as the config says) and, with
    ``deterministic``, the dataset's training exact on a GPU (train.deterministic:
    docs/slurm.md, "What is exact on a GPU")."""
    config = copy.deepcopy(config)
    if device is not None:
        config["device"] = device
    if deterministic:
        config["datasets"][dataset].setdefault("train", {})["deterministic"] = True
    return config


def commit() -> str:
    """The checkout's short commit (+uncommitted where tracked files differ; ATTNLEARN_COMMIT
    where set: a GPU node handed the tree without git metadata)."""
    return checkout_commit(REPO, dirty=True)


def job_env() -> dict:
    """The environment of the row's jobs: this checkout's src/ first on PYTHONPATH, so that every
    job imports the code of the commit recorded for it, even where the installed package points
    at another checkout (an editable install of the main checkout, with this one a worktree)."""
    paths = [str(REPO / "src"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def unlock(cmd: list[str]) -> None:
    """Remove the lock a killed Snakemake left on the row's directory (``snakemake --unlock``
    with the row's own directory and config), before the row resumes."""
    directory_and_config = cmd[cmd.index("-d"):]  # command() puts them after the targets
    subprocess.run([sys.executable, "-m", "snakemake", "--unlock", *directory_and_config], cwd=REPO, env=job_env(),
                   check=True, stdout=subprocess.DEVNULL)


def locked(work: Path) -> bool:
    """Whether Snakemake's lock files remain in ``work`` (a run in progress, or one killed)."""
    locks = work / ".snakemake" / "locks"
    return locks.is_dir() and any(locks.iterdir())


def device_record(device: str) -> dict:
    """What the jobs computed on: the config's device and, off the CPU, the GPUs' names."""
    if device == "cpu":
        return {"device": "cpu"}
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                         text=True) if shutil.which("nvidia-smi") else None
    return {"device": device, "gpus": smi.stdout.strip().splitlines() if smi and smi.returncode == 0 else []}


def run(argv: list[str], work: Path | None = None, extra: dict | None = None) -> dict:
    """Run the snakemake command ``argv`` from the repository; wall and CPU seconds (user +
    system of every child). A job reads the checkout's code when it starts, so a commit or an
    edit made during the hours a row runs is recorded (``commit_end``) and named. With ``work``
    the invocation is on record while it runs (invocations.Running: a kill outright loses
    nothing of it but its CPU seconds); ``extra``: more of the record (the device)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start, t0, ran = datetime.now(timezone.utc), time.monotonic(), commit()  # the code that runs
    code = tree_hash(REPO)  # the files that run, checked against the commit later (provenance.py)
    record = {"start": start.isoformat(timespec="seconds"), "commit": ran, "code_sha256": code,
              "host": platform.node(), **(extra or {})}
    proc = subprocess.Popen([sys.executable, "-m", *argv], cwd=REPO, env=job_env())
    # a SIGTERM (a lease or a scheduler ending) stops Snakemake, which ends its jobs, and the
    # stopped invocation's time is still recorded: the kept run.json sums every invocation
    previous = signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        with Running(work, record, proc.pid) if work is not None else contextlib.nullcontext():
            rc = proc.wait()
    finally:
        signal.signal(signal.SIGTERM, previous)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = {**record, "wall_s": round(time.monotonic() - t0, 1), "cpu_s": round(cpu, 1), "returncode": rc}
    end = commit()
    if end != ran:
        print(f"warning: {REPO} went from {ran} to {end} while the row ran: its later jobs may have run "
              "other code (run rows from a worktree of their own, docs/reproduction.md)", file=sys.stderr)
        out["commit_end"] = end
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", help="a dataset of the config, e.g. sst, sms_spam, newsgroups, multi30k")
    ap.add_argument("-d", "--directory", type=Path, required=True, help="working directory of the run")
    ap.add_argument("--config", type=Path, default=REPO / "config/paper_cpu.yaml", help="the shipped config")
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared/data", help="the local data copies")
    ap.add_argument("--out", type=Path, default=REPO / "reproduction/rows", help="where the row's tables are kept")
    ap.add_argument("--part", type=int, help="run replicate R of the row alone, kept in <out>/<dataset>/partR "
                    "(part_entry: independent parts, each in its own directory, pooled by reproduction_rows.py)")
    ap.add_argument("--factorial", type=int, metavar="N", help="an N x N x N grid of the first N standard (A), "
                    "uniform (U) and proxy seeds, every pairing tabled (tables.design: factorial), kept in "
                    "<out>/<dataset>/factorial: table2_variance splits each column's spread over the roles")
    ap.add_argument("--parts", type=parse_block, metavar="FIRST-LAST", help="replicates FIRST..LAST past the "
                    "config's, in one directory, each on fresh A, U and proxy seeds (block_entry; B: the block's "
                    "other A runs), kept in <out>/<dataset>/partsFIRST-LAST")
    ap.add_argument("--variants", nargs="+", choices=BLOCK_VARIANTS, default=[], help="with --parts: also train "
                    "these variants, one fresh seed per replicate (frozen: Table 10 per replicate, each frozen run "
                    "against its own replicate's alpha*); added to a finished block's directory, only those runs, "
                    "their probes and what reads them run")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--device", choices=("cpu", "cuda", "auto"), help="where the jobs compute (default: the "
                    "config's); on cuda every job may share the GPU")
    ap.add_argument("--deterministic", action="store_true", help="exact GPU training (train.deterministic: "
                    "cuDNN off, deterministic kernels; slower)")
    ap.add_argument("--keep-runs", action="store_true", help="on a finished row: keep its runs and probes as they "
                    "are (snakemake --touch on the data, training and probing rules) and remake what reads them "
                    "with this commit's code (new tables); run.json records both invocations")
    ap.add_argument("--train-split", action="store_true", help="also probe every checkpoint on training examples "
                    "and write Table 2 on the training split (tables.train_split; appendix A.4): about doubles the "
                    "probing; with --keep-runs on a finished row, only those probes and what reads them run")
    ap.add_argument("--row", help="the name the row is kept under (<out>/<row>/part<R>; default: the dataset), e.g. "
                    "multi30k_epochs20 for a part of another budget that must not replace the dataset's own")
    ap.add_argument("--until", nargs="+", metavar="RULE", default=[], help="run only these rules' jobs and what "
                    "they need (snakemake --until; e.g. train proxy: the trainings, probed by a later invocation "
                    "without it) and keep nothing; the invocation is on record like any other")
    ap.add_argument("--unlock", action="store_true", help="first remove the lock a killed run left on the "
                    "directory (only when no other run uses it), then resume")
    ap.add_argument("--plan", type=Path, action="append", help="the analysis plan (docs/plans/*.yaml, committed) whose "
                    "tests this row is run to confirm (repeat it for several plans on the same replicates): its path, "
                    "sha256 and commit are fixed in <dir>/plan.json before the first job and kept in run.json; a later "
                    "invocation refuses a plan that changed (row_plan.py)")
    ap.add_argument("--drop", action="store_true", help="record the directory's row as given up (lost with a "
                    "session, discarded for a fault) in <out>/ledger.jsonl, with --why; runs nothing")
    ap.add_argument("--why", help="with --drop: why the row was given up")
    ap.add_argument("-n", "--dry-run", action="store_true", help="plan the row only; keep nothing")
    args = ap.parse_args(argv)
    if args.drop:
        if not args.why:
            ap.error("--drop: say why with --why")
        ledger.append(args.out.resolve(), {"event": "dropped", "directory": str(args.directory.resolve()),
                                           "why": args.why, "at": ledger.now()})
        print(f"recorded {args.directory} as dropped in {args.out / ledger.NAME}")
        return 0

    config = local_config(yaml.safe_load(args.config.read_text()), args.data.resolve().as_uri())
    if args.dataset not in config["datasets"]:
        ap.error(f"{args.config}: no dataset {args.dataset!r} with a local copy under {args.data} "
                 f"(have: {', '.join(config['datasets'])})")
    if sum(a is not None for a in (args.part, args.parts, args.factorial)) > 1:
        ap.error("--part, --parts and --factorial: each is a folder of its own; give one of them")
    if args.part is not None:
        try:
            entry = config["datasets"][args.dataset]
            config["datasets"][args.dataset] = part_entry(entry, resolved_entry(config, args.dataset), args.part)
        except ValueError as e:
            ap.error(f"{args.config}: datasets.{args.dataset}: {e}")
    if args.variants and args.parts is None:
        ap.error("--variants: only with --parts (a part runs the config's frozen and TanhMax seeds dealt to it)")
    if args.parts is not None:
        try:
            config["datasets"][args.dataset] = block_entry(resolved_entry(config, args.dataset), *args.parts,
                                                           tuple(args.variants))
        except ValueError as e:
            ap.error(f"{args.config}: datasets.{args.dataset}: {e}")
    if args.factorial is not None:
        try:
            config["datasets"][args.dataset] = factorial_entry(resolved_entry(config, args.dataset), args.factorial)
        except ValueError as e:
            ap.error(f"{args.config}: datasets.{args.dataset}: {e}")
        config["tables"] = {**config.get("tables", {}), "design": "factorial"}
    config = on_device(config, args.dataset, args.device, args.deterministic)
    if args.train_split:
        config["tables"] = {**config.get("tables", {}), "train_split": True}
    work = args.directory.resolve()
    if args.keep_runs and not (work / "row_invocations.jsonl").is_file():
        # touching the runs of a row that never ran fails inside Snakemake, after local.yaml and
        # the plan's record are written; say so before anything is
        ap.error(f"--keep-runs: {work} holds no earlier invocation of a row ({work / 'row_invocations.jsonl'} is "
                 "missing); it keeps the runs a finished row trained. Start the row without it")
    work.mkdir(parents=True, exist_ok=True)
    settle(work)  # an invocation killed outright goes on record before anything reads the record
    (work / "local.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    cmd = command(args.dataset, config, work, args.cores, args.dry_run, tuple(args.until))
    plan = None
    if not args.dry_run:
        try:
            plan = fix_plan(work, args.plan, args.dataset, REPO)
        except (PlanRefused, ValueError) as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
    if args.unlock:
        unlock(cmd)
    if args.keep_runs and not args.dry_run:  # a dry run then plans every job whose code changed
        touched, as_trained = None, config
        if args.variants:  # the block as it was trained: the variants' new runs are trained below
            touched, as_trained = work / "keep_runs.yaml", trained_only(config, args.dataset, work, args.variants)
            touched.write_text(yaml.safe_dump(as_trained, sort_keys=False))
        keep_runs(cmd, touched, touched_rules(as_trained, args.dataset, work))
    if not args.dry_run:  # on record before any job: a run lost before it ends is still in the ledger
        ledger.append(args.out.resolve(), {
            "event": "started", "directory": str(work), "row": args.row or args.dataset, "commit": commit(),
            "start": ledger.now(), "command": shlex.join(["python", "paper_rows/paper_row.py", *(argv or sys.argv[1:])])})
    print("$", shlex.join(cmd), flush=True)
    # keep_runs: the runs are an earlier invocation's; this one remade what reads them
    extra = {**device_record(config.get("device", "cpu")), **({"keep_runs": True} if args.keep_runs else {})}
    result = run(cmd, None if args.dry_run else work, extra)
    if args.dry_run:
        return result["returncode"]
    append_invocation(work, result)
    print(f"wall {result['wall_s']} s, CPU {result['cpu_s']} s, exit {result['returncode']}", flush=True)
    if result["returncode"] != 0:
        if locked(work):
            print(f"{work} is locked by Snakemake: another run is using it, or one was killed (SIGKILL, a "
                  "machine lost). If none runs, resume with the same command and --unlock.", file=sys.stderr)
        return result["returncode"]
    if args.until:
        print(f"ran until {' '.join(args.until)}: nothing kept; the same command without --until finishes the row")
        return 0
    kept_as = ("factorial" if args.factorial is not None else
               f"parts{args.parts[0]}-{args.parts[1]}" if args.parts is not None else args.part)
    dest = keep(work, args.dataset, args.out.resolve(), cmd, config["datasets"][args.dataset], kept_as, plan,
                config.get("tables"), args.row)
    out = args.out.resolve()
    kept = {"event": "kept", "directory": str(work), "dest": str(dest.relative_to(out) if dest.is_relative_to(out) else dest)}
    ledger.append(args.out.resolve(), {**kept, "at": ledger.now()})
    print(f"kept {dest}: commit it (git add {dest.relative_to(REPO) if dest.is_relative_to(REPO) else dest})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
