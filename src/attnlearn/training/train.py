"""Training one run (a variant and a seed) or a stack of runs: the learning.

The schedule (total steps, checkpoint steps), the batch order, each step and the loop that
saves checkpoints on the schedule and the full training state (``work_dir/resume.pt``)
along the way, so that a killed or preempted job continues where it stopped when rerun,
with the same numbers as an uninterrupted run: the data order is a pure function of
(seed, epoch) and the generators' states are saved with the model and optimiser.

The model and its seed: training/model.py. The work folder around the loop (the lock, the
resume state, the finished record, publishing the outputs) follows training/workdir.py's
protocol; a signal stops the loop at the end of a step (runtime/interrupt.py's
``StopAtStepEnd``). Every way of stopping a run and how it is survived: docs/faults.md.
"""

from __future__ import annotations

import json
import math
import os
import signal
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from attnlearn.models.tasks import Rows, stacked
from attnlearn.runtime.device import resolve_device, run_precision
from attnlearn.runtime.faults import fault
from attnlearn.runtime.interrupt import StopAtStepEnd
from attnlearn.runtime.io import save_torch
from attnlearn.training.adam import Adam
from attnlearn.training.model import build_model, run_seed, start_from
from attnlearn.training.schedule import checkpoint_steps, total_steps
from attnlearn.training.workdir import (LOCK_WAIT_ENV, LOCK_WAIT_S, ckpt_name, fingerprint, finished, keep_only,
                                        mark_finished, member_done, member_prefix, publish, run_lock, saved_state)


def batch_indices(step: int, n: int, batch_size: int, seed: int) -> np.ndarray:
    """Example indices of the batch at ``step``: data reshuffled every epoch."""
    per_epoch = math.ceil(n / batch_size)
    epoch, b = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return order[b * batch_size:(b + 1) * batch_size]


def train_step(task, model, optim, b: dict, **loss_kw) -> torch.Tensor:
    """One optimiser step on batch ``b``, as every training takes it (and as the cost
    estimate times it, probing/timing.py); returns the loss."""
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


def _cpu_state(model) -> dict:
    """A model's state dict on the CPU, detached (a checkpoint's content)."""
    return {k: v.detach().cpu() for k, v in model.state_dict().items()}


class _Single:
    """One run's model and optimiser: a step is one batch of its own data order."""

    def __init__(self, task, table, params: dict, embeddings, device, init: dict | None = None):
        model = build_model(task, params, embeddings)
        if init is not None:  # after the seeding: the run's dropout stream is as without it
            init["parts"] = start_from(model, init["state"], init["params"], init["run"])
        self._setup(task, table, device, model, [params])

    def _setup(self, task, table, device, model, params: list[dict]):
        """The model on ``device``, Adam over its trainable weights, and each member's seed."""
        self.task, self.table, self.device = task, table, device
        self.model = model.to(device)
        trainable = [p for p in self.model.parameters() if p.requires_grad]
        self.optim = Adam(trainable, params[0]["train"]["lr"])
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


def _built_members(task, params: list[dict], embeddings, device):
    """Each member's model, and its generators' states (``_rng_state``) as its separate run's are
    when its training starts."""
    if device.type == "cuda":  # build_model's torch.manual_seed then seeds the GPU's generator now
        torch.cuda.init()
    models, rngs = torch.nn.ModuleList(), []
    for p in params:
        models.append(build_model(task, p, embeddings))
        rngs.append(_rng_state())
    return models, rngs


class _Stack(_Single):
    """K runs as one batched model (models/stacked.py, stacked_seq2seq.py): member k starts from its
    separate run's initial weights, reads its batches in its own order and draws its dropout
    from its own generator."""

    def __init__(self, task, table, params: list[dict], embeddings, device):
        stack_task = stacked(task, params[0]["model"])
        models, rngs = _built_members(task, params, embeddings, device)
        self._setup(stack_task, table, device, stack_task.build(list(models)), params)
        self.model.start_generators(self.seeds, [r["torch"] for r in rngs])

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

    def rng_state(self):
        return {"process": _rng_state(), "members": [g.get_state() for g in self.model.generators]}

    def set_rng_state(self, state) -> None:
        _set_rng_state(state["process"])
        for g, member in zip(self.model.generators, state["members"]):
            g.set_state(member)


class _Members(_Single):
    """K runs in one process, each its own model stepped in turn on its own batch with its own
    generators (dropout): the computation of its separate run, exactly (one Adam over all members
    is K Adams, elementwise). A CPU's stacks, and a GPU's where the task has no batched model.
    A batched stack is slower on a CPU: each member's LSTM kernels run anyway, and its backward
    pass comes after every member's forward, when the member's activations have left the cache
    (0.85-0.90x, docs/benchmarks.md). What the stack saves here is K-1 jobs and processes."""

    def __init__(self, task, table, params: list[dict], embeddings, device):
        models, self.rngs = _built_members(task, params, embeddings, device)
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


def _batched(task, params: list[dict], device) -> bool:
    """Whether a stack trains as one batched model (off the CPU, where its models have one) or as
    members in turn (_Members)."""
    return device.type != "cpu" and stacked(task, params[0]["model"]) is not None


def train_run(task, table: pd.DataFrame, params: dict, ckpt_dir, log_path, work_dir, **kw) -> None:
    """Train and write ``ckpt_dir/step{N}.pt`` (with ``manifest.json``) and the loss log ``log_path``.

    Every way the job can stop leaves what a rerun needs to end with the checkpoints of an
    uninterrupted run, byte for byte: the work folder (training/workdir.py) is only ever added
    to atomically, under a lock. Keywords: ``inputs``, the digest of the job's input files
    (``inputs_digest``): a state saved from other inputs or code is discarded; ``stop_after``
    ends the job after that many steps as if stopped by a signal (for tests); ``lock_wait_s``,
    how long to wait for another trainer of the run (default ``$ATTNLEARN_LOCK_WAIT_S`` or
    120 s); ``init``, where the run starts (``start_from``: the source's ``state``, its ``run``,
    ``step``, ``params`` and ``sha256``; recorded in the manifest); ``resume_every_s``,
    ``progress``, ``embeddings``.
    """
    _run_job(task, table, [params], [ckpt_dir], [log_path], work_dir, **kw)


def train_stack(task, table: pd.DataFrame, params: list[dict], ckpt_dirs, log_paths, work_dir, **kw) -> None:
    """``train_run`` for K runs of one dataset and variant trained in one job (``train.stack``):
    on a GPU as one batched model where the task has one (_Stack), else each member in turn with
    its own generators (_Members: on a CPU each member is exactly its separate run). Member k
    writes ``ckpt_dirs[k]`` and ``log_paths[k]`` as its separate run would, from the one work
    folder ``work_dir`` (member k's checkpoints in m{k}/)."""
    if len({json.dumps({k: v for k, v in p.items() if k not in ("name", "seed")}, sort_keys=True, default=str)
            for p in params}) != 1:
        raise ValueError("train.stack: the members of a stack must differ in their seed only")
    _run_job(task, table, params, ckpt_dirs, log_paths, work_dir, **kw)


def _run_job(task, table, params: list[dict], ckpt_dirs, log_paths, work_dir, lock_wait_s: float | None = None,
             inputs: str = "", **kw) -> None:
    """The job of one run (one ``params``) or of a stack: lock, train or take the finished
    training, publish every member's outputs. The device is resolved once, first: one that is
    not there is an error before anything is written. The whole job runs in the precision
    train.deterministic and train.tf32 ask for (``run_precision``, which the job log names on
    a GPU: docs/slurm.md); a stack's members share their settings."""
    device = resolve_device(params[0].get("device", "cpu"))
    work_dir = Path(work_dir)
    (work_dir / "checkpoints").mkdir(parents=True, exist_ok=True)
    save_at = _schedule(params[0]["train"], len(table))
    # a stack's saved state is its batched model's or its members': which one is in the key
    key = fingerprint(params[0] if len(params) == 1 else {"stack": params, "batched": _batched(task, params, device)}, inputs)
    if lock_wait_s is None:
        lock_wait_s = float(os.environ.get(LOCK_WAIT_ENV, LOCK_WAIT_S))
    with run_precision(params[0]["train"], device), run_lock(work_dir, lock_wait_s), StopAtStepEnd():
        done = finished(work_dir, key)  # a signal from here on stops at the end of a step (StopAtStepEnd)
        if done is None:
            done = _train(task, table, params, device, work_dir, key, save_at, **kw)
            mark_finished(work_dir, done)
        else:
            print(f"{_job_name(params)}: training finished in an earlier attempt; publishing its "
                  f"checkpoints from {work_dir}", file=sys.stderr, flush=True)
        for k, (ckpt_dir, log_path) in enumerate(zip(ckpt_dirs, log_paths)):
            publish(member_done(done, k, len(params)), work_dir / "checkpoints" / member_prefix(k, len(params)),
                    Path(ckpt_dir), Path(log_path), save_at)


def _schedule(train: dict, n_examples: int) -> list[int]:
    """The checkpoint steps of the run; a warning for those its steps do not reach."""
    total = total_steps(train, n_examples)
    beyond = sorted(s for s in train["checkpoints"].get("steps", []) if s > total)
    if beyond:
        print(f"WARNING: checkpoint steps {beyond} are beyond the run's {total} steps: not saved",
              file=sys.stderr, flush=True)
    return checkpoint_steps(train["checkpoints"], total)


def _job_name(params: list[dict]) -> str:
    names = [p.get("name", "run") for p in params]
    return names[0] if len(names) == 1 else f"stack of {len(names)} ({', '.join(names)})"


def _train(task, table, params: list[dict], device, work_dir: Path, key: str, save_at: list[int],
           resume_every_s: float = 60.0, progress: bool = True, stop_after: int | None = None,
           embeddings: np.ndarray | None = None, init: dict | None = None) -> dict:
    """The training, from the last saved state in ``work_dir`` if there is one of this job.
    Returns the finished training's record (done.json): a single run's ``log``, a stack's
    ``logs`` (one per member)."""
    work_ckpt = work_dir / "checkpoints"
    resume_path = work_dir / "resume.pt"
    train = params[0]["train"]
    total = total_steps(train, len(table))
    save_at = set(save_at)
    loss_kw = {"reduction": train["loss"]} if train.get("loss") else {}  # else the task's own
    single = len(params) == 1
    rows = Rows(table, task)  # the batches' columns, read once rather than from pandas at every step
    if init is not None and not single:
        raise ValueError("init: runs that start from another run's weights train one per job (train.stack: 1)")
    learner = (_Single(task, rows, params[0], embeddings, device, init) if single
               else (_Stack if _batched(task, params, device) else _Members)(task, rows, params, embeddings, device))
    step, logs, elapsed, files = 0, [[] for _ in params], 0.0, {}
    state = saved_state(work_dir, key)  # None: no state, or a stale one (removed): start over
    if state is not None:
        learner.model.load_state_dict(state["model"])
        learner.optim.load_state_dict(state["optim"])
        learner.set_rng_state(state["rng"])
        step, elapsed, files = state["step"], state["elapsed_s"], state["files"]
        logs = [state["log"]] if single else state["logs"]
        print(f"{_job_name(params)}: resumed from step {step} of {total} (the state saved in {resume_path})",
              file=sys.stderr, flush=True)
    keep_only(work_ckpt, files)  # checkpoints saved after the state, and temporary files, go

    started = {} if init is None else {"init": {k: init[k] for k in ("run", "step", "parts", "sha256")}}

    def record(**fields):
        return {**fields, **started, **({"log": logs[0]} if single else {"logs": logs})}

    def save_resume():
        save_torch(record(fingerprint=key, step=step, model=learner.model.state_dict(),
                          optim=learner.optim.state_dict(), rng=learner.rng_state(),
                          elapsed_s=elapsed + time.monotonic() - start, files=files), resume_path)

    def save_checkpoint():
        for k, member in enumerate(learner.member_states()):
            name = "/".join(filter(None, [member_prefix(k, len(params)), ckpt_name(step)]))
            (work_ckpt / name).parent.mkdir(exist_ok=True)
            files[name] = save_torch(member, work_ckpt / name)
        fault("checkpoint", step)

    if step == 0 and 0 in save_at:
        save_checkpoint()
    learner.model.train()
    start = last_save = time.monotonic()
    bar = tqdm(total=total, initial=step, disable=not progress, mininterval=5, desc=_job_name(params))
    with StopAtStepEnd() as preempt:
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
