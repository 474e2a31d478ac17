"""Training one run: a variant (standard / uniform / frozen) and a seed.

Checkpoints (state dicts) are saved on the configured schedule. The full
training state is kept in ``work_dir/resume.pt`` so that a killed or
preempted job continues where it stopped when rerun, with the same numbers
as an uninterrupted run: the data order is a pure function of (seed, epoch)
and the RNG state is saved with the model and optimiser.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import shutil
import signal
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from .device import exact, resolve_device  # noqa: F401  (resolve_device: imported from here by the scripts)
from .io import save_torch, write_parquet

VARIANTS = ("standard", "uniform", "frozen", "tanhmax")
# tanhmax: a standard run whose attention uses TanhMax whatever model.activation says
# (docs/methods.md 11), so one dataset compares softmax and TanhMax on the same data.


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
    return int(train["epochs"]) * math.ceil(n_examples / train["batch_size"])


def batch_indices(step: int, n: int, batch_size: int, seed: int) -> np.ndarray:
    """Example indices of the batch at ``step``: data reshuffled every epoch."""
    per_epoch = math.ceil(n / batch_size)
    epoch, b = divmod(step, per_epoch)
    order = np.random.default_rng([seed, epoch]).permutation(n)
    return order[b * batch_size:(b + 1) * batch_size]


SEEDING = ("independent", "shared")


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
    model_cfg = {**params["model"], "activation": "tanhmax"} if variant == "tanhmax" else params["model"]
    model = task.build(model_cfg, "uniform" if variant == "uniform" else "standard")
    if embeddings is not None:
        known = torch.from_numpy(~np.isnan(embeddings).any(1))
        with torch.no_grad():
            model.embed.weight[known] = torch.from_numpy(embeddings[known.numpy()])
    if variant == "frozen":
        for name, p in model.named_parameters():  # any module on the path is an attention module
            p.requires_grad = not model.attention_params.isdisjoint(name.split("."))
    return model


def fingerprint(params: dict) -> str:
    """Identifies the run's settings; a resume state from other settings is discarded."""
    return hashlib.sha256(json.dumps(params, sort_keys=True, default=str).encode()).hexdigest()


class _Preempted:
    """Turns SIGTERM (preemption, scancel) into a clean stop at the next step."""

    def __init__(self):
        self.flag = False

    def __enter__(self):
        self._old = signal.signal(signal.SIGTERM, self._handle)
        return self

    def _handle(self, *_):
        self.flag = True

    def __exit__(self, *exc):
        signal.signal(signal.SIGTERM, self._old)


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


def _exact_if_asked(train_run):
    """train.deterministic: the whole run under ``device.exact`` (docs/slurm.md)."""
    @functools.wraps(train_run)
    def run(task, table, params, *args, **kwargs):
        with exact(bool(params["train"].get("deterministic", False))):
            return train_run(task, table, params, *args, **kwargs)
    return run


@_exact_if_asked
def train_run(task, table: pd.DataFrame, params: dict, ckpt_dir, log_path, work_dir,
              resume_every_s: float = 60.0, progress: bool = True, stop_after: int | None = None,
              embeddings: np.ndarray | None = None) -> None:
    """Train and write ``ckpt_dir/step{N}.pt`` and the loss log ``log_path``.

    ``stop_after`` ends the job after that many steps as if killed (for tests).
    """
    work_dir = Path(work_dir)
    work_ckpt = work_dir / "checkpoints"
    work_ckpt.mkdir(parents=True, exist_ok=True)
    resume_path = work_dir / "resume.pt"
    device = resolve_device(params.get("device", "cpu"))
    train = params["train"]
    n = len(table)
    total = total_steps(train, n)
    save_at = set(checkpoint_steps(train["checkpoints"], total))
    key = fingerprint(params)
    seed = run_seed(params)
    loss_kw = {"reduction": train["loss"]} if train.get("loss") else {}  # else the task's own

    model = build_model(task, params, embeddings).to(device)
    optim = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=train["lr"])
    step, log, elapsed = 0, [], 0.0
    state = _load_resume(resume_path) if resume_path.exists() else None
    if state is not None and state["fingerprint"] == key:
        model.load_state_dict(state["model"])
        optim.load_state_dict(state["optim"])
        _set_rng_state(state["rng"])
        step, log, elapsed = state["step"], state["log"], state["elapsed_s"]
    else:  # stale state from other settings: start over
        for f in work_ckpt.glob("*.pt"):
            f.unlink()

    def save_resume():
        save_torch({"fingerprint": key, "step": step, "model": model.state_dict(), "optim": optim.state_dict(),
                    "rng": _rng_state(), "log": log, "elapsed_s": elapsed + time.monotonic() - start},
                   resume_path)

    def save_checkpoint():
        cpu_state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
        save_torch(cpu_state, work_ckpt / f"step{step:08d}.pt")

    if step == 0 and 0 in save_at:
        save_checkpoint()
    model.train()
    start = last_save = time.monotonic()
    bar = tqdm(total=total, initial=step, disable=not progress, mininterval=5, desc=params.get("name", "train"))
    with _Preempted() as preempt:
        while step < total:
            b = task.batch(table, batch_indices(step, n, train["batch_size"], seed), device)
            optim.zero_grad(set_to_none=True)
            loss = task.loss(model, b, **loss_kw)
            loss.backward()
            optim.step()
            step += 1
            bar.update(1)
            if step % train.get("log_every", 50) == 0 or step == total:
                log.append({"step": step, "loss": loss.item(), "elapsed_s": elapsed + time.monotonic() - start})
            if step in save_at:
                save_checkpoint()
            if step in save_at or time.monotonic() - last_save > resume_every_s:
                save_resume()
                start = last_save = time.monotonic()
            if preempt.flag or (stop_after is not None and step >= stop_after):
                save_resume()
                bar.close()
                raise SystemExit(f"training stopped at step {step}; rerun to resume from there")
    bar.close()
    write_parquet(pd.DataFrame(log, columns=["step", "loss", "elapsed_s"]), log_path)
    ckpt_dir = Path(ckpt_dir)
    if ckpt_dir.exists():
        shutil.rmtree(ckpt_dir)
    os.replace(work_ckpt, ckpt_dir)  # all checkpoints appear at once
    shutil.rmtree(work_dir)


def list_checkpoints(ckpt_dir) -> list[tuple[int, Path]]:
    """(step, path) of every checkpoint in a run's checkpoint folder, by step."""
    paths = sorted(Path(ckpt_dir).glob("step*.pt"))
    return [(int(p.stem[4:]), p) for p in paths]
