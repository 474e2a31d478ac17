"""How long a dataset's jobs take per unit of work, timed before they run: a few training steps
and one probed checkpoint at the dataset's model and batch sizes, on random tokens with lengths
drawn from the dataset's. The cost package (attnlearn.cost.jobs) multiplies these out by one
job's steps, checkpoints and probed examples.

The one timer of the preflight rule (reporting/config_cost.py: wall seconds on the jobs' device,
against the profile's time limits) and of benchmarks/paper_cost.py (CPU seconds of a paper-size
row); benchmarks/throughput.py times its probes with ``time_probe``. It lives in probing/, the
lowest stage that may import both what it times: the training step and the probe
(tests/test_package_layout.py keeps the stages' order).
"""

from __future__ import annotations

import tempfile
import time
from typing import Callable

import numpy as np
import pandas as pd
import torch

from attnlearn.models.tasks import make_task
from attnlearn.probing.measures import split_at_best
from attnlearn.probing.probes import bleu_settings, probe_checkpoints
from attnlearn.runtime.device import exact, sync
from attnlearn.training.adam import Adam
from attnlearn.training.model import build_model
from attnlearn.training.train import train_step


def fake_examples(task: str, lens: np.ndarray, n: int, vocab: int, rng) -> pd.DataFrame:
    """``n`` examples drawn from the length distribution ``lens`` (token counts [N, 1], or
    [N, 2] for source and target), random tokens (timing only)."""
    picked = lens[rng.integers(0, len(lens), n)]
    seq = lambda k: [1, *rng.integers(4, vocab, max(0, k - 2)).tolist(), 2]  # noqa: E731
    if task == "translation":
        return pd.DataFrame({"src_ids": [seq(a) for a, _ in picked], "tgt_ids": [seq(b) for _, b in picked]})
    return pd.DataFrame({"ids": [seq(a) for a, in picked], "label": rng.integers(0, 2, n).astype(float)})


def time_training(task, model, train: dict, examples: pd.DataFrame, device, steps: int,
                  clock: Callable[[], float] = time.perf_counter) -> float:
    """Median seconds per training step (``train``: the dataset's train settings: Adam's lr,
    batch size, loss) after one warm-up step, by ``clock`` (wall by default; time.process_time
    for CPU seconds)."""
    optim = Adam(model.parameters(), train["lr"])
    loss_kw = {"reduction": train["loss"]} if train.get("loss") else {}
    bs, times = train["batch_size"], []
    model.train()
    for step in range(steps + 1):
        b = task.batch(examples, np.arange(step * bs, (step + 1) * bs), device)
        sync(device)
        t0 = clock()
        train_step(task, model, optim, b, **loss_kw)
        sync(device)
        times.append(clock() - t0)
    return float(np.median(times[1:]))


def time_probe(task, model, probe: dict, examples: pd.DataFrame, device, checkpoints: int = 1,
               clock: Callable[[], float] = time.perf_counter, detok: Callable | None = None) -> float:
    """Seconds per example per checkpoint of the probe (``probe``: the dataset's probe settings:
    measures, batch size, chunk size, at_best: none where unset), with beam-search BLEU where
    ``probe`` asks (an untrained model decodes to the length limit: an upper bound; ``detok``:
    ids -> text, by default the ids themselves). ``checkpoints``: how many times the model's
    checkpoint is probed (each copy ties the first, the best checkpoint: at_best's measures once)."""
    bleu = None
    if task.name == "translation" and probe.get("bleu"):
        # the references cost the same whichever they are: the ids' own text stands in
        bleu = bleu_settings({**probe, "bleu_references": "ids"}, detok or (lambda ids: " ".join(map(str, ids))))
    with tempfile.TemporaryDirectory() as tmp:
        torch.save({k: v.cpu() for k, v in model.state_dict().items()}, f"{tmp}/step0.pt")
        sync(device)
        t0 = clock()
        probe_checkpoints(task, model, examples, [(i, f"{tmp}/step0.pt") for i in range(checkpoints)],
                          probe["measures"], probe["batch_size"], device, f"{tmp}/probe.parquet",
                          probe.get("chunk_elems", 1 << 24), progress=False, bleu=bleu,
                          at_best=probe.get("at_best", ()))
        sync(device)
    return (clock() - t0) / (len(examples) * checkpoints)


def time_dataset(d: dict, lens: np.ndarray, vocab: int, device, steps: int, probe_examples: int,
                 clock: Callable[[], float] = time.perf_counter) -> tuple[float, float, float]:
    """(seconds per training step, seconds per validation example per checkpoint with every
    measure, the share of that which probe.at_best's measures take) of dataset entry ``d`` (the
    config's, defaults filled): a standard run's model at its sizes, ``steps`` timed steps on
    batches of ``lens``-long examples, then ``probe_examples`` examples probed at its checkpoint,
    with every measure and with those computed at every checkpoint alone; under
    train.deterministic's flags where the entry sets them."""
    rng = np.random.default_rng(0)
    task = make_task(d["task"], vocab)
    params = {"variant": "standard", "seed": 1, "model": d["model"], "train": d["train"]}
    every, late = split_at_best(d["probe"]["measures"], d["probe"].get("at_best", ()))
    with exact(bool(d["train"].get("deterministic", False))):
        model = build_model(task, params).to(device)
        examples = fake_examples(d["task"], lens, d["train"]["batch_size"] * (steps + 1), vocab, rng)
        per_step = time_training(task, model, d["train"], examples, device, steps, clock)
        examples = fake_examples(d["task"], lens, probe_examples, vocab, rng)
        # untimed: a first probe pays one-time costs (lazy imports, allocations) the share would count
        time_probe(task, model, {**d["probe"], "at_best": ()}, examples.iloc[:2], device, clock=clock)
        per_example = time_probe(task, model, {**d["probe"], "at_best": ()}, examples, device, clock=clock)
        share = 0.0
        if late:
            alone = time_probe(task, model, {**d["probe"], "measures": every}, examples, device, clock=clock)
            share = min(1.0, max(0.0, 1 - alone / per_example))
    return per_step, per_example, share
