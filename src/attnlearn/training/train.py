"""Training one run: a variant (standard / uniform / frozen) and a seed.

Checkpoints (state dicts) are saved on the configured schedule. The full
training state is kept in ``work_dir/resume.pt`` so that a killed or
preempted job continues where it stopped when rerun, with the same numbers
as an uninterrupted run: the data order is a pure function of (seed, epoch)
and the RNG state is saved with the model and optimiser. How every way of
stopping a run is survived (the work folder, the lock, publishing the
outputs): below, and docs/faults.md.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import hashlib
import json
import math
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from attnlearn.runtime.device import resolve_device, run_precision  # noqa: F401  (resolve_device: imported from here by the scripts)
from attnlearn.runtime.faults import fault
from attnlearn.runtime.io import file_sha256, save_torch, write_json, write_parquet
from attnlearn.models.tasks import stacked
from attnlearn.training.variants import SEEDING, VARIANT_MODEL, VARIANTS


def checkpoint_steps(schedule: dict, total: int) -> list[int]:
    """Steps from the explicit list, every ``every`` steps, and the last step."""
    steps = {s for s in schedule.get("steps", []) if s <= total}
    every = schedule.get("every")
    if every:
        steps.update(range(every, total + 1, every))
    if schedule.get("last", True):
        steps.add(total)
    return sorted(steps)


def total_steps(train: dict, n_examples: int) -> int:
    if train.get("steps"):
        return int(train["steps"])
    if not train.get("epochs"):
        raise ValueError("train: neither steps nor epochs is set (config: datasets.<dataset>.train.steps or "
                         ".epochs)")
    return int(train["epochs"]) * math.ceil(n_examples / train["batch_size"])


def batch_indices(step: int, n: int, batch_size: int, seed: int) -> np.ndarray:
    """Example indices of the batch at ``step``: data reshuffled every epoch."""
    per_epoch = math.ceil(n / batch_size)
    epoch, b = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return order[b * batch_size:(b + 1) * batch_size]


def train_step(task, model, optim, b: dict, **loss_kw) -> torch.Tensor:
    """One optimiser step on batch ``b``, as every training takes it (and as the cost
    estimate times it, runtime/cost.py); returns the loss."""
    return members_step(task, [model], optim, [b], **loss_kw)[0]




def members_step(task, models, optim, batches: list[dict], rngs: list | None = None, **loss_kw) -> list[torch.Tensor]:
    """``train_step`` of several models at once, each on its own batch, with one optimiser over
    all of them (Adam is elementwise: K Adams); one member's forward and backward, then the next.
    ``rngs``: each member's generator states (``_rng_state``), swapped in around its forward and
    backward and updated, so that its dropout draws what its separate run draws."""
    optim.zero_grad(set_to_none=True)
    losses = []
    for k, (model, b) in enumerate(zip(models, batches)):
        if rngs:
            _set_rng_state(rngs[k])
        loss = task.loss(model, b, **loss_kw)
        loss.backward()
        losses.append(loss.detach())
        if rngs:
            rngs[k] = _rng_state()
    optim.step()
    return losses


def run_seed(params: dict) -> int:
    """The seed of a run's initial weights, batch order and dropout stream.

    Every role is its own model (docs/methods.md 2): standard runs use their seed as
    given, the other variants one derived from (variant, seed), so that uniform-s1
    never starts from standard-s1's weights or sees its batches. ``train.seeding:
    shared`` gives every variant the seed as given (the "same start" ablation).
    """
    variant, seed = params["variant"], int(params["seed"])
    seeding = params.get("train", {}).get("seeding", "independent")
    if seeding not in SEEDING:
        raise ValueError(f"train.seeding: unknown value {seeding!r}; expected one of {SEEDING}")
    if variant == "standard" or seeding == "shared":
        return seed
    digest = hashlib.sha256(f"{variant}-s{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def build_model(task, params: dict, embeddings: np.ndarray | None = None):
    """Model initialised from the run's seed (``run_seed``); frozen trains attention only.

    ``embeddings`` [V, E] (NaN rows = unknown) replaces the initial embedding rows it has.
    """
    torch.manual_seed(run_seed(params))
    variant = params["variant"]
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    model_cfg = {**params["model"], **VARIANT_MODEL.get(variant, {})}
    model = task.build(model_cfg, "uniform" if variant == "uniform" else "standard")
    if embeddings is not None:
        known = torch.from_numpy(~np.isnan(embeddings).any(1))
        with torch.no_grad():
            model.embed.weight[known] = torch.from_numpy(embeddings[known.numpy()])
    if variant == "frozen":
        for name, p in model.named_parameters():  # any module on the path is an attention module
            p.requires_grad = not model.attention_params.isdisjoint(name.split("."))
    return model


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


class _Preempted:
    """Turns SIGTERM (preemption, scancel, a time limit), SIGINT (Ctrl-C) and SIGHUP (a closed
    terminal) into a clean stop at the end of the current step: the state is saved and the
    job exits with an error, so Snakemake keeps the run incomplete and a rerun resumes. Once
    training has ended, publishing the outputs (a second or so) goes on and the job succeeds.
    A second signal stops at once (from the last saved state). Nested uses share the
    outermost one's state."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    ECHO_S = 10.0  # the same signal again within this time: one stop (a terminal's Ctrl-C, and
    # Snakemake forwarding it to a job still running: runtime/interrupt.py), not a second
    _outermost = None

    def __init__(self):
        self.signum, self._old, self._at = None, {}, 0.0

    @property
    def flag(self) -> bool:
        return self.signum is not None

    def __enter__(self):
        if _Preempted._outermost is not None:
            return _Preempted._outermost
        if threading.current_thread() is threading.main_thread():  # signal.signal works there only
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        _Preempted._outermost = self
        return self

    def _handle(self, signum, _frame):
        if self.signum is not None:
            if signum == self.signum and time.monotonic() - self._at < self.ECHO_S:
                return
            raise SystemExit(f"training stopped by a second {signal.Signals(signum).name}")
        self.signum, self._at = signum, time.monotonic()

    def __exit__(self, *exc):
        if _Preempted._outermost is self:
            _Preempted._outermost = None
            for s, handler in self._old.items():
                signal.signal(s, handler)


def _rng_state():
    """The CPU generator's state and, on a GPU, the current GPU's only (the one the run uses),
    so that a job resumes on a machine with another number of GPUs."""
    state = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()
    return state


def _set_rng_state(state):
    torch.set_rng_state(state["torch"].cpu())
    cuda = state.get("cuda")
    if isinstance(cuda, list):  # saved by earlier versions: every visible GPU's; the first is the run's
        cuda = cuda[0] if cuda else None
    if cuda is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state(cuda.cpu())


def _load_resume(path):
    """resume.pt on the CPU, whatever device saved it: RNG states must stay CPU ByteTensors
    (torch.set_rng_state refuses others); model and optimiser states move to the model's device
    when loaded into them."""
    return torch.load(path, map_location="cpu", weights_only=False)


def _precision_as_asked(train_run):
    """train.deterministic and train.tf32: the whole run under ``device.run_precision``, which
    the job log names on a GPU (docs/slurm.md); a missing device fails here, before any write."""
    @functools.wraps(train_run)
    def run(task, table, params, *args, **kwargs):
        first = params[0] if isinstance(params, list) else params  # a stack's members share their settings
        with run_precision(first["train"], resolve_device(first.get("device", "cpu"))):
            return train_run(task, table, params, *args, **kwargs)
    return run


# --- the work folder: resume state, lock, checkpoints until the training's outputs are published
#
# work/lock               held (flock) by the one trainer of this run
# work/checkpoints/       every checkpoint saved so far (step{N:08d}.pt)
# work/resume.pt          full training state: model, optimiser, RNG, step, log, checkpoint hashes
# work/done.json          the finished training: its log and checkpoint hashes (resume.pt is then gone)
#
# The outputs (the checkpoint folder with manifest.json, the training log) are hard links to
# the work folder's files, published at the end. The work folder stays: Snakemake deletes the
# outputs of a job it did not see finish (a killed Snakemake, Ctrl-C to Snakemake, a kill
# after the job's last write), and the rerun then restores them from here instead of
# training again. It costs no space (hard links) but done.json.

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


def _intact(folder: Path, files: dict | None) -> bool:
    """Every file of ``files`` ({name: sha256}) is in ``folder`` with that content."""
    return files is not None and all((folder / name).is_file() and file_sha256(folder / name) == sha
                                     for name, sha in files.items())


def _keep_only(folder: Path, names) -> None:
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


def _finished(work_dir: Path, key: str) -> dict | None:
    """The finished training recorded in ``work_dir`` if it is this run's and complete."""
    done = _read_json(work_dir / "done.json")
    if done and done.get("fingerprint") == key and _intact(work_dir / "checkpoints", done.get("files")):
        return done
    return None


def _link(src: Path, dst: Path) -> None:
    """Hard link (no space, no copy time); a copy where the file system has none."""
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        shutil.copyfile(src, dst)


def _cpu_state(model) -> dict:
    """A model's state dict on the CPU, detached (a checkpoint's content)."""
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


class _Single:
    """One run's model and optimiser: a step is one batch of its own data order."""

    def __init__(self, task, table, params: dict, embeddings, device):
        self._setup(task, table, device, build_model(task, params, embeddings), [params])

    def _setup(self, task, table, device, model, params: list[dict]):
        """The model on ``device``, Adam over its trainable weights, and each member's seed."""
        self.task, self.table, self.device = task, table, device
        self.model = model.to(device)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optim = torch.optim.Adam(trainable, lr=params[0]["train"]["lr"])
        self.seeds = [run_seed(p) for p in params]

    def step(self, step: int, batch_size: int, loss_kw: dict) -> list:
        b = self.task.batch(self.table, batch_indices(step, len(self.table), batch_size, self.seeds[0]), self.device)
        return [train_step(self.task, self.model, self.optim, b, **loss_kw)]

    def member_states(self) -> list[dict]:
        return [_cpu_state(self.model)]

    def rng_state(self):
        """What a resume state keeps of the generators (dropout draws from them)."""
        return _rng_state()

    def set_rng_state(self, state) -> None:
        _set_rng_state(state)


class _Stack(_Single):
    """K runs as one batched model (models/stacked.py): member k starts from its separate run's
    initial weights and reads its batches in its own order."""

    def __init__(self, task, table, params: list[dict], embeddings, device):
        stack_task = stacked(task)
        model = stack_task.build([build_model(task, p, embeddings) for p in params])
        self._setup(stack_task, table, device, model, params)

    def step(self, step: int, batch_size: int, loss_kw: dict) -> list:
        idx = [batch_indices(step, len(self.table), batch_size, seed) for seed in self.seeds]
        b = self.task.batch(self.table, idx, self.device)
        self.optim.zero_grad(set_to_none=True)
        losses = self.task.member_losses(self.model, b, **loss_kw)
        losses.sum().backward()
        self.optim.step()
        return list(losses.detach())

    def member_states(self) -> list[dict]:
        return [self.model.member_state(k) for k in range(len(self.seeds))]


class _Members(_Single):
    """K runs in one process, each its own model stepped in turn on its own batch with its own
    generators (dropout): the computation of its separate run, exactly (one Adam over all members
    is K Adams, elementwise). A CPU's stacks, and a GPU's where the task has no batched model.
    A batched stack is slower on a CPU: each member's LSTM kernels run anyway, and its backward
    pass comes after every member's forward, when the member's activations have left the cache
    (0.85-0.90x, docs/benchmarks.md). What the stack saves here is K-1 jobs and processes."""

    def __init__(self, task, table, params: list[dict], embeddings, device):
        if device.type == "cuda":  # build_model's torch.manual_seed then seeds the GPU's generator now
            torch.cuda.init()
        models, self.rngs = torch.nn.ModuleList(), []
        for p in params:  # each member's generators as its separate run's are when its training starts
            models.append(build_model(task, p, embeddings))
            self.rngs.append(_rng_state())
        self._setup(task, table, device, models, params)

    def step(self, step: int, batch_size: int, loss_kw: dict) -> list:
        batches = [self.task.batch(self.table, batch_indices(step, len(self.table), batch_size, seed), self.device)
                   for seed in self.seeds]
        return members_step(self.task, self.model, self.optim, batches, self.rngs, **loss_kw)

    def member_states(self) -> list[dict]:
        return [_cpu_state(m) for m in self.model]

    def rng_state(self):
        return {"members": list(self.rngs)}

    def set_rng_state(self, state) -> None:
        self.rngs = list(state["members"])


def _batched(task, params: list[dict]) -> bool:
    """Whether a stack trains as one batched model (off the CPU, where the task has one) or as
    members in turn (_Members)."""
    return resolve_device(params[0].get("device", "cpu")).type != "cpu" and stacked(task) is not None


@_precision_as_asked
def train_run(task, table: pd.DataFrame, params: dict, ckpt_dir, log_path, work_dir, **kw) -> None:
    """Train and write ``ckpt_dir/step{N}.pt`` (with ``manifest.json``) and the loss log ``log_path``.

    Every way the job can stop leaves what a rerun needs to end with the checkpoints of an
    uninterrupted run, byte for byte: the work folder (above) is only ever added to
    atomically, under a lock. Keywords: ``inputs``, the digest of the job's input files
    (``inputs_digest``): a state saved from other inputs or code is discarded; ``stop_after``
    ends the job after that many steps as if stopped by a signal (for tests); ``lock_wait_s``,
    how long to wait for another trainer of the run (default ``$ATTNLEARN_LOCK_WAIT_S`` or
    120 s); ``resume_every_s``, ``progress``, ``embeddings``.
    """
    _run_job(task, table, [params], [ckpt_dir], [log_path], work_dir, **kw)


@_precision_as_asked
def train_stack(task, table: pd.DataFrame, params: list[dict], ckpt_dirs, log_paths, work_dir, **kw) -> None:
    """``train_run`` for K runs of one dataset and variant trained in one job (``train.stack``):
    on a GPU as one batched model where the task has one (_Stack), else each member in turn with
    its own generators (_Members: on a CPU each member is exactly its separate run). Member k writes ``ckpt_dirs[k]`` and ``log_paths[k]`` as its separate
    run would, from the one work folder ``work_dir`` (member k's checkpoints in m{k}/)."""
    if len({json.dumps({k: v for k, v in p.items() if k not in ("name", "seed")}, sort_keys=True, default=str)
            for p in params}) != 1:
        raise ValueError("train.stack: the members of a stack must differ in their seed only")
    _run_job(task, table, params, ckpt_dirs, log_paths, work_dir, **kw)


def _run_job(task, table, params: list[dict], ckpt_dirs, log_paths, work_dir, resume_every_s: float = 60.0,
             progress: bool = True, stop_after: int | None = None, embeddings: np.ndarray | None = None,
             inputs: str = "", lock_wait_s: float | None = None) -> None:
    """The job of one run (one ``params``) or of a stack: lock, train or take the finished
    training, publish every member's outputs."""
    for p in params:
        resolve_device(p.get("device", "cpu"))  # a device that is not there: an error before anything is written
    work_dir = Path(work_dir)
    (work_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    train = params[0]["train"]
    total = total_steps(train, len(table))
    save_at = checkpoint_steps(train["checkpoints"], total)
    beyond = sorted(s for s in train["checkpoints"].get("steps", []) if s > total)
    if beyond:
        print(f"WARNING: checkpoint steps {beyond} are beyond the run's {total} steps: not saved",
              file=sys.stderr, flush=True)
    # a stack's saved state is its batched model's or its members': which one is in the key
    key = fingerprint(params[0] if len(params) == 1 else {"stack": params, "batched": _batched(task, params)}, inputs)
    if lock_wait_s is None:
        lock_wait_s = float(os.environ.get(LOCK_WAIT_ENV, LOCK_WAIT_S))
    with run_lock(work_dir, lock_wait_s), _Preempted():  # a signal from here on: see _Preempted
        done = _finished(work_dir, key)
        if done is None:
            done = _train(task, table, params, work_dir, key, save_at, resume_every_s, progress, stop_after,
                          embeddings)
            write_json(done, work_dir / "done.json", durable=True)
            fault("done")
            (work_dir / "resume.pt").unlink(missing_ok=True)
        else:
            print(f"{_job_name(params)}: training finished in an earlier attempt; publishing its "
                  f"checkpoints from {work_dir}", file=sys.stderr, flush=True)
        for k, (ckpt_dir, log_path) in enumerate(zip(ckpt_dirs, log_paths)):
            _publish(_member_done(done, k, len(params)), work_dir / "checkpoints" / _member_prefix(k, len(params)),
                     Path(ckpt_dir), Path(log_path), save_at)


def _job_name(params: list[dict]) -> str:
    names = [p.get("name", "run") for p in params]
    return names[0] if len(names) == 1 else f"stack of {len(names)} ({', '.join(names)})"


def _member_prefix(k: int, members: int) -> str:
    """Member k's folder under work/checkpoints: none for a single run (its layout predates stacks)."""
    return "" if members == 1 else f"m{k}"


def _member_done(done: dict, k: int, members: int) -> dict:
    """Member k's record (``total_steps``, ``files``, ``log``) from a job's done.json."""
    if members == 1:
        return done
    prefix = f"{_member_prefix(k, members)}/"
    files = {name[len(prefix):]: sha for name, sha in done["files"].items() if name.startswith(prefix)}
    return {"total_steps": done["total_steps"], "files": files, "log": done["logs"][k]}


def _train(task, table, params: list[dict], work_dir: Path, key: str, save_at: list[int], resume_every_s, progress,
           stop_after, embeddings) -> dict:
    """The training, from the last saved state in ``work_dir`` if there is one of this job.
    Returns the finished training's record (done.json): a single run's ``log``, a stack's
    ``logs`` (one per member)."""
    work_ckpt = work_dir / "checkpoints"
    resume_path = work_dir / "resume.pt"
    device = resolve_device(params[0].get("device", "cpu"))
    train = params[0]["train"]
    total = total_steps(train, len(table))
    save_at = set(save_at)
    loss_kw = {"reduction": train["loss"]} if train.get("loss") else {}  # else the task's own
    single = len(params) == 1
    learner = (_Single(task, table, params[0], embeddings, device) if single
               else (_Stack if _batched(task, params) else _Members)(task, table, params, embeddings, device))
    step, logs, elapsed, files = 0, [[] for _ in params], 0.0, {}
    state = _load_resume(resume_path) if resume_path.exists() else None
    if state is not None and state["fingerprint"] == key and _intact(work_ckpt, state.get("files")):
        learner.model.load_state_dict(state["model"])
        learner.optim.load_state_dict(state["optim"])
        learner.set_rng_state(state["rng"])
        step, elapsed, files = state["step"], state["elapsed_s"], state["files"]
        logs = [state["log"]] if single else state["logs"]
        print(f"{_job_name(params)}: resumed from step {step} of {total} (the state saved in {resume_path})",
              file=sys.stderr, flush=True)
    else:  # no state, or a stale one from other settings, inputs or code: start over
        (work_dir / "done.json").unlink(missing_ok=True)
        resume_path.unlink(missing_ok=True)
    _keep_only(work_ckpt, files)  # checkpoints saved after the state, and temporary files, go

    def record(**fields):
        return {**fields, **({"log": logs[0]} if single else {"logs": logs})}

    def save_resume():
        save_torch(record(fingerprint=key, step=step, model=learner.model.state_dict(),
                          optim=learner.optim.state_dict(), rng=learner.rng_state(),
                          elapsed_s=elapsed + time.monotonic() - start, files=files), resume_path)

    def save_checkpoint():
        for k, member in enumerate(learner.member_states()):
            name = "/".join(filter(None, [_member_prefix(k, len(params)), ckpt_name(step)]))
            (work_ckpt / name).parent.mkdir(exist_ok=True)
            files[name] = save_torch(member, work_ckpt / name)
        fault("checkpoint", step)

    if step == 0 and 0 in save_at:
        save_checkpoint()
    learner.model.train()
    start = last_save = time.monotonic()
    bar = tqdm(total=total, initial=step, disable=not progress, mininterval=5, desc=_job_name(params))
    with _Preempted() as preempt:
        while step < total:
            losses = learner.step(step, train["batch_size"], loss_kw)
            step += 1
            bar.update(1)
            if step % train.get("log_every", 50) == 0 or step == total:
                now = elapsed + time.monotonic() - start
                for log, loss in zip(logs, losses):
                    log.append({"step": step, "loss": loss.item(), "elapsed_s": now})
            if step in save_at:
                save_checkpoint()
            if step in save_at or time.monotonic() - last_save > resume_every_s:
                save_resume()
                fault("resume", step)
                last_save = time.monotonic()  # elapsed_s runs on from `start`: continuous over saves
            if preempt.flag or (stop_after is not None and step >= stop_after):
                save_resume()
                bar.close()
                why = signal.Signals(preempt.signum).name if preempt.flag else f"stop_after={stop_after}"
                raise SystemExit(f"training stopped at step {step} ({why}); rerun to resume from there")
    bar.close()
    return record(fingerprint=key, total_steps=total, files=files, elapsed_s=elapsed + time.monotonic() - start)


def _publish(done: dict, work_ckpt: Path, ckpt_dir: Path, log_path: Path, save_at: list[int]) -> None:
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
        _link(work_ckpt / name, stage / name)
    write_json({"total_steps": done["total_steps"], "checkpoints": {name: done["files"][name] for name in want}},
               stage / MANIFEST, durable=True)
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
