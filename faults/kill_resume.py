"""Kill a training job at random instants, rerun it, and compare every checkpoint file
with an uninterrupted run's (sha256), the training log too (less its wall times).

    nice -n 19 python faults/kill_resume.py [--trials 20] [--seed 0] [--folder DIR]
        [--config tests/slurm/faults.yaml] [--run tiny_mt/standard-s1]

First an uninterrupted Snakemake run of the run's train job (which also prepares its
data) gives the reference files and two durations: the training process's life (T_job)
and the Snakemake run's (T_run). Then each trial, in a fresh folder holding the
reference's prepared data, starts the same Snakemake command and stops it once, at a
random instant, in one of four ways (taken in turn):

- ``job-SIGKILL``: the training process, U(0, T_job) after it started (the OOM killer,
  a failed node, a hard time limit);
- ``job-SIGTERM``: the same with SIGTERM (preemption, scancel, a time limit's warning);
- ``all-SIGKILL``: Snakemake and its job together, U(0, T_run) after Snakemake started
  (the machine running both goes down);
- ``snakemake-SIGINT``: Snakemake alone, U(0, T_job) after the training process started
  (SIGINT to Snakemake's pid: it waits for the running job, then marks its outputs
  incomplete).

(an instant after the job's end counts for nothing: trials go on until ``--trials`` stops
landed mid-run; the estimate T_job shrinks to what a faster job took), then reruns it as a
user would (``snakemake --unlock``, then the same command; again if
it fails, at most 3 times) and compares. One line per trial, then a summary; exits 1 if
any checkpoint differs. docs/faults.md has the recorded result.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
WAYS = ("job-SIGKILL", "job-SIGTERM", "all-SIGKILL", "snakemake-SIGINT")


def sha256s(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if not p.name.startswith(".")}


def training_pid(folder: Path) -> int | None:
    """The process running the train script with ``folder`` as working directory."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            if any(a.endswith(b".train.py") for a in argv) and Path(os.readlink(proc / "cwd")) == folder:
                return int(proc.name)
        except OSError:
            continue
    return None


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


class Job:
    """One Snakemake run of the train job in ``folder``, in its own process group."""

    def __init__(self, folder: Path, args, log: Path):
        self.folder = folder
        self.out = open(log, "w")
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen([*SNAKEMAKE, "-d", str(folder), "--cores", "1", target(args), "--configfile",
                                      str(args.config)], stdout=self.out, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def wait_training(self, timeout=600) -> tuple[int | None, float]:
        """(pid, start time) of the training process, once it appears; (None, now) if Snakemake ends first."""
        while time.monotonic() - self.t0 < timeout:
            pid = training_pid(self.folder)
            if pid is not None:
                return pid, time.monotonic()
            if self.proc.poll() is not None:
                return None, time.monotonic()
            time.sleep(0.005)
        raise TimeoutError("no training process appeared")

    def wait(self, timeout=900) -> int:
        rc = self.proc.wait(timeout=timeout)
        self.out.close()
        return rc


def target(args) -> str:
    return f"results/runs/{args.run}/train_log.parquet"


def snakemake(folder: Path, args, *extra) -> subprocess.CompletedProcess:
    return subprocess.run([*SNAKEMAKE, "-d", str(folder), "--cores", "1", *extra, target(args), "--configfile",
                           str(args.config)], capture_output=True, text=True)


def reference(args, folder: Path) -> dict:
    data = [f"results/tokenized/{args.run.split('/')[0]}/{f}" for f in ("train.parquet", "tokenizer.json")]
    prep = subprocess.run([*SNAKEMAKE, "-d", str(folder), "--cores", "2", *data, "--configfile", str(args.config)],
                          capture_output=True, text=True)
    if prep.returncode != 0:
        sys.exit(f"preparing the data failed:\n{prep.stdout[-3000:]}{prep.stderr[-3000:]}")
    job = Job(folder, args, folder.parent / "reference.out")
    pid, started = job.wait_training()
    while pid is not None and alive(pid):
        time.sleep(0.005)
    t_job = time.monotonic() - started
    if job.wait() != 0:
        sys.exit(f"the reference run failed: see {folder.parent / 'reference.out'}")
    return {"t_job": t_job, "t_run": time.monotonic() - job.t0,
            "checkpoints": sha256s(folder / f"results/runs/{args.run}/checkpoints"),
            "log": pd.read_parquet(folder / target(args)).drop(columns="elapsed_s")}


def what_the_rerun_did(folder: Path, args, output: str) -> str:
    if "Nothing to be done" in output:
        return "nothing to do"
    log = folder / f"results/logs/train/{args.run}.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    if "training finished in an earlier attempt" in text:
        return "published the finished training"
    start = re.search(r"\b(\d+)/(\d+) \[", text)
    if start:
        return "trained from step 0" if start.group(1) == "0" else f"resumed at step {start.group(1)}"
    return "?"


def trial(i: int, way: str, rng: random.Random, ref: dict, args, base: Path) -> dict:
    folder = base / f"trial{i:02d}"
    for sub in ("results/data", "results/tokenized"):
        shutil.copytree(base / "reference" / sub, folder / sub, copy_function=shutil.copy)
    job = Job(folder, args, base / f"trial{i:02d}.out")
    if way == "all-SIGKILL":
        at = rng.uniform(0, ref["t_run"])
        while job.proc.poll() is None and time.monotonic() < job.t0 + at:
            time.sleep(0.005)
        hit = job.proc.poll() is None
        if not hit:
            ref["t_run"] = min(ref["t_run"], time.monotonic() - job.t0)
        if hit:
            os.killpg(job.proc.pid, signal.SIGKILL)
    else:
        pid, started = job.wait_training()
        at = rng.uniform(0, ref["t_job"])
        while pid is not None and alive(pid) and time.monotonic() < started + at:
            time.sleep(0.005)
        hit = pid is not None and alive(pid)
        if not hit and pid is not None:  # the job ran faster than the estimate: use what it took
            ref["t_job"] = min(ref["t_job"], time.monotonic() - started)
        if hit and way == "snakemake-SIGINT":
            job.proc.send_signal(signal.SIGINT)
        elif hit:
            os.kill(pid, signal.SIGKILL if way == "job-SIGKILL" else signal.SIGTERM)
    first_rc = job.wait()
    # the run's processes all gone (a job outlives a killed Snakemake only if it is not in its group)
    deadline = time.monotonic() + 60
    while training_pid(folder) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    snakemake(folder, args, "--unlock")
    reruns = []
    for _ in range(3):
        proc = snakemake(folder, args)
        reruns.append(proc.returncode)
        if proc.returncode == 0:
            break
    did = what_the_rerun_did(folder, args, proc.stdout + proc.stderr)
    got = sha256s(folder / f"results/runs/{args.run}/checkpoints")
    log_path = folder / target(args)
    same_log = log_path.exists() and pd.read_parquet(log_path).drop(columns="elapsed_s").equals(ref["log"])
    return {"trial": i, "way": way, "at_s": round(at, 2), "hit": hit, "first_rc": first_rc, "reruns": reruns,
            "rerun": did, "identical": got == ref["checkpoints"] and same_log, "files": len(got)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20, help="stops that land while the job runs")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", type=Path, default=REPO / "tests" / "slurm" / "faults.yaml")
    ap.add_argument("--run", default="tiny_mt/standard-s1")
    ap.add_argument("--folder", type=Path, default=None, help="work here (default: a fresh temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the trial folders")
    args = ap.parse_args(argv)
    args.config = args.config.resolve()
    import tempfile

    base = (args.folder or Path(tempfile.mkdtemp(prefix="kill_resume-"))).resolve()
    base.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    t0 = time.monotonic()
    ref = reference(args, base / "reference")
    print(f"reference: training process {ref['t_job']:.1f} s, Snakemake run {ref['t_run']:.1f} s, "
          f"{len(ref['checkpoints'])} files", flush=True)
    results, i = [], 0
    while sum(r["hit"] for r in results) < args.trials and i < 3 * args.trials:  # instants after the end don't count
        r = trial(i, WAYS[sum(r["hit"] for r in results) % len(WAYS)], rng, ref, args, base)
        results.append(r)
        i += 1
        print(f"trial {r['trial']:2d} {r['way']:17s} at {r['at_s']:5.2f} s  {'killed' if r['hit'] else 'after the end'}"
              f"  first rc {r['first_rc']:>4}  reruns {r['reruns']}  {r['rerun']:32s}"
              f"  {'identical' if r['identical'] else 'DIFFERENT'} ({r['files']} files)", flush=True)
        if not args.keep and r["identical"]:
            shutil.rmtree(base / f"trial{i - 1:02d}")
    bad = [r for r in results if not r["identical"]]
    print(f"\n{len(results) - len(bad)} of {len(results)} trials byte-identical to the uninterrupted run "
          f"({sum(r['hit'] for r in results)} stopped mid-run); {time.monotonic() - t0:.0f} s; folder {base}")
    if not args.keep and not bad:
        shutil.rmtree(base)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
