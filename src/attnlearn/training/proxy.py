"""Training the bag-of-words proxy model and probing it (xi^px) together
with the count-table alignment (docs/methods.md 3 and 7)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch
from tqdm.auto import tqdm

from attnlearn.data import counts as C
from attnlearn.training.logreg import logreg_probe
from attnlearn.models import BagOfWords
from attnlearn.probing.probes import RowAccumulator, row_mask
from attnlearn.training.train import batch_indices, resolve_device, run_seed


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
    optim = torch.optim.Adam(model.parameters(), lr=params["lr"])
    bs = params["batch_size"]
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


def translation_table(cells: pd.DataFrame, task) -> sp.csr_matrix:
    """The count table's t(y|x) cells as a sparse [source vocab, target vocab or 2] matrix."""
    n_tgt = task.vocab_size if task.name == "translation" else 2
    return sp.csr_matrix((cells["t_tgt_given_src"], (cells["src_id"], cells["tgt_id"])),
                         shape=(task.vocab_size, n_tgt))


def probe_proxy(task, model, t_table, valid: pd.DataFrame, batch_size: int, best_epoch: int, logreg_coef=None):
    """Probe table with measures ``xi_px`` and ``count`` (log t(y|x_s)) at step = best epoch,
    and for classification given ``logreg_coef`` also ``xi_lr`` (appendix A.10)."""
    device = next(model.parameters()).device
    acc = RowAccumulator()
    model.eval()
    for start in range(0, len(valid), batch_size):
        idx = np.arange(start, min(start + batch_size, len(valid)))
        b = task.batch(valid, idx, device)
        with torch.no_grad():
            if task.name == "translation":
                src, tgt = b["src"], b["tgt_out"]
                xi_px = model.lexical_logprobs(src, tgt)
            else:
                src, tgt = b["ids"], b["label"].long()[:, None]
                xi_px = model.label_logprobs(src, b["label"]).unsqueeze(1)
        count = torch.from_numpy(C.count_scores(t_table, src.cpu().numpy(), tgt.cpu().numpy()))
        measures = {"xi_px": xi_px, "count": count.to(device)}
        if logreg_coef is not None:
            measures["xi_lr"] = logreg_probe(logreg_coef, b)
        acc.add(best_epoch, idx, measures, *row_mask(task, b))
    return acc.table()
