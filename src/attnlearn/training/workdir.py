"""A training's work folder and the checkpoint folder it publishes: the protocol that lets a
job be stopped any way at all and rerun to the outputs of an uninterrupted run.

    work/lock               held (flock) by the one trainer of this run
    work/checkpoints/       every checkpoint saved so far (step{N:08d}.pt; a stack's member k in m{k}/)
    work/resume.pt          full training state: model, optimiser, RNG, step, log, checkpoint hashes
    work/done.json          the finished training: its log and checkpoint hashes (resume.pt is then gone)

The outputs (the checkpoint folder with manifest.json, the training log) are hard links to
the work folder's files, published at the end. The work folder stays: Snakemake deletes the
outputs of a job it did not see finish (a killed Snakemake, Ctrl-C to Snakemake, a kill
after the job's last write), and the rerun then restores them from here instead of
training again. It costs no space (hard links) but done.json. A state or finished training
of other settings, inputs or code (another ``fingerprint``) is discarded.

What trains is training/train.py; the probes and analyses read a finished training's
checkpoints with ``list_checkpoints``. docs/faults.md lists every way of stopping a run and
the test that survives it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import sys
import time
from pathlib import Path

import pandas as pd
import torch

from attnlearn.runtime.faults import fault
from attnlearn.runtime.io import file_sha256, link_or_copy, write_json, write_parquet

LOG_COLUMNS = ["step", "loss", "elapsed_s"]
MANIFEST = "manifest.json"
LOCK_WAIT_S = 120.0  # > NFSv4's 90 s lease: the lock of a trainer whose node died is freed by then
LOCK_WAIT_ENV = "ATTNLEARN_LOCK_WAIT_S"


class RunLocked(RuntimeError):
    """Another process is training the same run in the same work folder."""


class IncompleteCheckpoints(RuntimeError):
    """A checkpoint folder that is not the complete output of a finished training."""


def ckpt_name(step: int) -> str:
    return f"step{step:08d}.pt"


def fingerprint(params: dict, inputs: str = "") -> str:
    """Identifies the run: its settings and ``inputs``, the digest of the job's input files
    (data and code, ``inputs_digest``). A resume state or finished work from anything else
    is discarded."""
    text = json.dumps(params, sort_keys=True, default=str) + (f"\n{inputs}" if inputs else "")
    return hashlib.sha256(text.encode()).hexdigest()


def inputs_digest(files: dict) -> str:
    """Digest of a job's input files ({name: path or list of paths}) by content, not path:
    the project folder may move between attempts."""
    digests = {}
    for name, paths in sorted(files.items()):
        paths = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
        digests[name] = [file_sha256(p) for p in paths]
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()


@contextlib.contextmanager
def run_lock(work_dir, wait_s: float = LOCK_WAIT_S):
    """Hold ``work_dir/lock`` (flock: released when the process ends, however it ends).

    A second trainer of the same run waits up to ``wait_s`` seconds for the first to end
    (a requeued SLURM job may start while the old one still saves its state), then raises
    RunLocked naming the holder. On a file system without locks (e.g. Lustre mounted
    without ``flock``) it warns and goes on unprotected.
    """
    path = Path(work_dir) / "lock"
    f = open(path, "a+")
    try:
        t0, told = time.monotonic(), False
        while True:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = path.read_text().strip() or "a process that has not yet said who it is"
                if time.monotonic() - t0 >= wait_s:
                    who = re.match(r"pid (\d+) on host (\S+),", holder)
                    stop = f"stop it (kill {who[1]} on {who[2]})" if who else "stop it"
                    raise RunLocked(
                        f"{work_dir} is in use by another training of this run ({holder}); two trainers in "
                        f"one work folder would overwrite each other's checkpoints, so this one stops. Wait "
                        f"for the other to finish, or {stop}; then rerun (Snakemake then takes its outputs, "
                        f"or resumes from its saved state).") from None
                if not told:
                    print(f"waiting up to {wait_s:.0f} s for the training that holds {path} ({holder})",
                          file=sys.stderr, flush=True)
                    told = True
                time.sleep(0.2)
            except OSError as e:
                if e.errno not in (errno.ENOLCK, errno.ENOSYS, errno.EOPNOTSUPP, errno.EINVAL):
                    raise
                print(f"WARNING: cannot lock {path} ({e.strerror}): nothing keeps a second trainer out of "
                      f"this work folder", file=sys.stderr, flush=True)
                break
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()} on host {socket.gethostname()}, since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        f.flush()
        yield
    finally:
        f.close()


# -- the resume state (work/resume.pt; train.py saves it) and the finished training (work/done.json)

def saved_state(work_dir: Path, key: str) -> dict | None:
    """The training state saved in ``work_dir/resume.pt`` if it is this run's (``key``) and the
    checkpoints it lists are intact. Otherwise None, and a stale state or finished record goes
    (other settings, inputs or code: the training starts over).

    Read to the CPU, whatever device saved it: RNG states must stay CPU ByteTensors
    (torch.set_rng_state refuses others); model and optimiser states move to the model's
    device when loaded into them."""
    path = work_dir / "resume.pt"
    state = torch.load(path, map_location="cpu", weights_only=False) if path.exists() else None
    if state is not None and state["fingerprint"] == key and intact(work_dir / "checkpoints", state.get("files")):
        return state
    (work_dir / "done.json").unlink(missing_ok=True)
    path.unlink(missing_ok=True)
    return None


def intact(folder: Path, files: dict | None) -> bool:
    """Every file of ``files`` ({name: sha256}) is in ``folder`` with that content."""
    return files is not None and all((folder / name).is_file() and file_sha256(folder / name) == sha
                                     for name, sha in files.items())


def keep_only(folder: Path, names) -> None:
    """Remove every file under ``folder`` whose path relative to it is not in ``names``
    (hidden temporary files included)."""
    for p in folder.rglob("*"):
        if p.is_file() and p.relative_to(folder).as_posix() not in names:
            p.unlink()


def _read_json(path: Path):
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, json.JSONDecodeError):
        return None


def finished(work_dir: Path, key: str) -> dict | None:
    """The finished training recorded in ``work_dir`` if it is this run's and complete."""
    done = _read_json(work_dir / "done.json")
    if done and done.get("fingerprint") == key and intact(work_dir / "checkpoints", done.get("files")):
        return done
    return None


def mark_finished(work_dir: Path, done: dict) -> None:
    """Record the finished training (done.json, on disk before resume.pt goes): from here on a
    rerun publishes it instead of training again."""
    write_json(done, work_dir / "done.json", durable=True)
    fault("done")
    (work_dir / "resume.pt").unlink(missing_ok=True)


def member_prefix(k: int, members: int) -> str:
    """Member k's folder under work/checkpoints: none for a single run (its layout predates stacks)."""
    return "" if members == 1 else f"m{k}"


def member_done(done: dict, k: int, members: int) -> dict:
    """Member k's record (``total_steps``, ``files``, ``log``) from a job's done.json."""
    if members == 1:
        return done
    prefix = f"{member_prefix(k, members)}/"
    files = {name[len(prefix):]: sha for name, sha in done["files"].items() if name.startswith(prefix)}
    return {"total_steps": done["total_steps"], "files": files, "log": done["logs"][k]}


# -- the outputs: published from the work folder, read back by the probes and analyses

def publish(done: dict, work_ckpt: Path, ckpt_dir: Path, log_path: Path, save_at: list[int]) -> None:
    """The outputs, from the finished training's work folder: the log, then the checkpoint
    folder, assembled beside its place (hard links and manifest.json) and renamed into it.
    Ends with a check that the folder holds every checkpoint of the schedule."""
    want = [ckpt_name(s) for s in save_at]
    if sorted(done["files"]) != want:
        raise IncompleteCheckpoints(f"training ended with checkpoints {sorted(done['files'])}, but its schedule "
                                    f"is {want}")
    write_parquet(pd.DataFrame(done["log"], columns=LOG_COLUMNS), log_path)
    fault("log")
    stage = ckpt_dir.with_name(f".{ckpt_dir.name}.staging")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for name in want:
        link_or_copy(work_ckpt / name, stage / name)
    started = {"init": done["init"]} if "init" in done else {}  # where the run started (train.py init)
    write_json({"total_steps": done["total_steps"], "checkpoints": {name: done["files"][name] for name in want},
                **started}, stage / MANIFEST, durable=True)
    fault("staged")
    if ckpt_dir.exists():
        shutil.rmtree(ckpt_dir)
    os.rename(stage, ckpt_dir)  # all checkpoints appear at once
    fault("published")
    found = [ckpt_name(step) for step, _ in list_checkpoints(ckpt_dir, hashes=True)]
    if found != want:
        raise IncompleteCheckpoints(f"{ckpt_dir} holds {found} after publishing, expected {want}")


def list_checkpoints(ckpt_dir, hashes: bool = False) -> list[tuple[int, Path]]:
    """(step, path) of every checkpoint of a finished training, by step.

    The folder's manifest.json lists every checkpoint the training saved; a missing one
    (with ``hashes``, one whose sha256 differs), a missing manifest (the folder is not a
    finished training's output) or an unlisted checkpoint raises IncompleteCheckpoints
    naming it.
    """
    ckpt_dir = Path(ckpt_dir)
    manifest = ckpt_dir / MANIFEST
    rerun = "rerun the run's train job (snakemake --rerun-incomplete, or --forcerun train)"
    listed = _read_json(manifest)
    if not isinstance(listed, dict) or not isinstance(listed.get("checkpoints"), dict):
        what = "is missing" if not manifest.exists() else "is unreadable"
        raise IncompleteCheckpoints(f"{manifest} {what}: {ckpt_dir} is not the output of a finished "
                                    f"training; {rerun}")
    files = listed["checkpoints"]
    for name, sha in sorted(files.items()):
        path = ckpt_dir / name
        if not path.is_file():
            raise IncompleteCheckpoints(f"checkpoint {path} is missing (listed in {manifest}); {rerun}")
        if hashes and file_sha256(path) != sha:
            raise IncompleteCheckpoints(f"checkpoint {path} differs from the sha256 in {manifest}; {rerun}")
    unlisted = sorted(p.name for p in ckpt_dir.glob("step*.pt") if p.name not in files)
    if unlisted:
        raise IncompleteCheckpoints(f"{ckpt_dir}: checkpoints {unlisted} are not in {manifest}; {rerun}")
    return [(int(name[4:-3]), ckpt_dir / name) for name in sorted(files)]
