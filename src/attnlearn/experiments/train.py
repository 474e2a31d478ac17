"""Training the toy models and recording their curves (paper Figures 3 and 6).

Every ``eval_every`` steps (before the update of that step, and once after the
last one) the model is evaluated on ``eval_samples`` fresh examples: token
accuracy (all outputs, EOS included) and attention accuracy (share of target
steps whose attention argmax is the aligned source position; for several heads,
the best head's). Training data, evaluation data and initialisation come from
separate seeds, so the training stream does not depend on how often one evaluates.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from attnlearn.experiments.data import CopyTask
from attnlearn.experiments.model import ToySeq2Seq
from attnlearn.training.adam import Adam

CURVE_COLUMNS = ["step", "loss", "token_acc", "attn_acc"]


def train_kwargs(train: dict) -> dict:
    """The ``train_curve`` arguments of an ``experiments.train`` config section."""
    return {k: train[k] for k in ("batch_size", "lr", "eval_every", "eval_samples") if k in train}


def build(task: CopyTask, model: dict, init_seed: int) -> ToySeq2Seq:
    """Initialised on the CPU (its generator), whatever device trains it: a seed gives the same
    weights everywhere."""
    torch.manual_seed(init_seed)
    with torch.device("cpu"):
        return ToySeq2Seq(task.n_tokens, **model)


@torch.no_grad()
def evaluate(model: ToySeq2Seq, task: CopyTask, batch: dict) -> dict:
    was_training = model.training
    model.eval()
    out = model(batch["src"], batch["tgt_in"])
    model.train(was_training)
    loss = F.cross_entropy(out["logits"].flatten(0, 1), batch["tgt_out"].flatten()).item()
    token_acc = (out["logits"].argmax(-1) == batch["tgt_out"]).float().mean().item()
    gold = torch.as_tensor(task.gold(), device=batch["src"].device)
    per_head = (out["alpha"].argmax(-1) == gold).float().mean((1, 2))  # [K]
    return {"loss": loss, "token_acc": token_acc, "attn_acc": per_head.max().item(),
            "attn_acc_heads": per_head.tolist()}


def train_curve(model: ToySeq2Seq, task: CopyTask, steps: int, data_seed: int, batch_size: int = 128,
                lr: float = 1e-3, eval_every: int = 10, eval_samples: int = 50, stop_at: float | None = None,
                device="cpu") -> pd.DataFrame:
    """Train with Adam on fresh samples; the curve as a frame (CURVE_COLUMNS).

    ``stop_at``: end as soon as an evaluation reaches this token accuracy (the
    reference code's rejection sampling of heads does so).
    """
    model.to(device).train()
    optim = Adam(model.parameters(), lr)
    train_rng = np.random.default_rng([data_seed, 0])
    eval_rng = np.random.default_rng([data_seed, 1])
    rows = []
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            rows.append({"step": step, **evaluate(model, task, task.batch(eval_samples, eval_rng, device))})
            if stop_at is not None and rows[-1]["token_acc"] >= stop_at:
                break
        if step == steps:
            break
        b = task.batch(batch_size, train_rng, device)
        loss = F.cross_entropy(model(b["src"], b["tgt_in"])["logits"].flatten(0, 1), b["tgt_out"].flatten())
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()
    return pd.DataFrame(rows)


def convergence(curve: pd.DataFrame, threshold: float) -> tuple[bool, float]:
    """(converged, first step at which token accuracy reached ``threshold``, NaN if never).
    Converged = the last evaluation is at or above the threshold."""
    hit = curve.loc[curve["token_acc"] >= threshold, "step"]
    return bool(curve["token_acc"].iloc[-1] >= threshold), float(hit.iloc[0]) if len(hit) else float("nan")
