"""Training the bag-of-words proxy model (docs/methods.md 3); probing/proxy.py probes it."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from attnlearn.models import BagOfWords
from attnlearn.models.tasks import Rows
from attnlearn.runtime.device import resolve_device
from attnlearn.training.adam import Adam
from attnlearn.training.model import run_seed
from attnlearn.training.train import batch_indices


def batch_loss(task, model, b):
    if task.name == "translation":
        logp = torch.log_softmax(model(b["src"]), -1)  # [B, V]
        y = b["tgt_out"]
        return -(logp.gather(1, y) * (y != 0)).sum() / len(y)
    return torch.nn.functional.binary_cross_entropy_with_logits(model(b["ids"]).squeeze(-1), b["label"])


def train_proxy(task, train: pd.DataFrame, valid: pd.DataFrame, params: dict, progress=True):
    """Adam; best epoch by validation loss. Returns (model, log frame). Its initial weights and
    batch order come from a seed derived from ("proxy", seed), as the uniform runs' do: proxy-s1
    shares no generator state or data order with standard-s1 (docs/methods.md 2)."""
    seed = run_seed({"variant": "proxy", "seed": params["seed"]})
    torch.manual_seed(seed)
    device = resolve_device(params.get("device", "cpu"))
    n_out = task.vocab_size if task.name == "translation" else 1
    model = BagOfWords(task.vocab_size, params["embed"], n_out, params.get("output_bias", False)).to(device)
    optim = Adam(model.parameters(), params["lr"])
    bs = params["batch_size"]
    train, valid = Rows(train, task), Rows(valid, task)  # read once, not from pandas at every batch
    per_epoch = -(-len(train) // bs)
    best, best_loss, log = None, float("inf"), []
    for epoch in tqdm(range(params["epochs"]), disable=not progress, desc="proxy", mininterval=5):
        model.train()
        for step in range(epoch * per_epoch, (epoch + 1) * per_epoch):
            b = task.batch(train, batch_indices(step, len(train), bs, seed), device)
            optim.zero_grad(set_to_none=True)
            batch_loss(task, model, b).backward()
            optim.step()
        model.eval()
        with torch.no_grad():
            val = np.mean([batch_loss(task, model, task.batch(valid, idx, device)).item()
                           for idx in np.array_split(np.arange(len(valid)), max(1, len(valid) // bs))])
        log.append({"epoch": epoch + 1, "valid_loss": float(val)})
        if val < best_loss:
            best, best_loss = copy.deepcopy(model.state_dict()), val
    model.load_state_dict(best)
    return model, pd.DataFrame(log)


def best_epoch(log: pd.DataFrame) -> int:
    """The proxy's checkpoint: the epoch of lowest validation loss (its probes' step)."""
    return int(log.loc[log["valid_loss"].idxmin(), "epoch"])
