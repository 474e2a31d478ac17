"""Task adapters: how each model family batches data, computes its loss and
its performance. The training loop and the probes only talk to these."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from attnlearn.models import Classifier, Seq2Seq, Transformer
from attnlearn.models.stacked import StackedClassifier
from attnlearn.models.stacked_seq2seq import StackedSeq2Seq


def pad(seqs, device="cpu"):
    """Right-padded LongTensor [B, L] (pad id 0) on ``device`` and the lengths [B], which stay on
    the CPU: packing reads them there (a round trip through the GPU would wait for it at every
    forward pass)."""
    return _padded(*_ragged(seqs), device)


def _ragged(seqs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sequences as one flat int64 array, each one's start in it and its length."""
    lengths = np.array([len(s) for s in seqs], dtype=np.int64)  # built on the host, sent once
    flat = np.concatenate([np.asarray(s, dtype=np.int64) for s in seqs])
    return flat, np.cumsum(lengths) - lengths, lengths


def _padded(flat: np.ndarray, starts: np.ndarray, lengths: np.ndarray, device):
    """The sequences at ``starts`` (of ``lengths``) in ``flat``, right-padded with 0 (``pad``)."""
    at = np.arange(lengths.max())
    out = np.where(at < lengths[:, None], flat[np.minimum(starts[:, None] + at, len(flat) - 1)], 0)
    return torch.from_numpy(out).to(device), torch.from_numpy(lengths)


class Rows:
    """A table's columns that a task's batches read, converted once (``task.batch`` takes these or
    the DataFrame): each token-id column as one flat int64 array with every row's start and
    length, each other column as its array. Training reads a batch a step; from these it is the
    DataFrame's batch number for number, without pandas' indexing and a Python list per row at
    every step (docs/benchmarks.md, "Training cost, same bytes")."""

    def __init__(self, table: pd.DataFrame, task):
        self.n = len(table)
        self.ragged = {column: _ragged(table[column].tolist()) for column in task.ragged}
        self.plain = {column: table[column].to_numpy() for column in task.plain}

    def __len__(self) -> int:
        return self.n

    def pad(self, column: str, idx, device="cpu"):
        """``pad`` of the column's rows ``idx``."""
        flat, starts, lengths = self.ragged[column]
        idx = np.asarray(idx)
        return _padded(flat, starts[idx], lengths[idx], device)


def padded(table, column: str, idx, device="cpu"):
    """``pad`` of a token-id column's rows ``idx``, of a DataFrame or of ``Rows``."""
    if isinstance(table, Rows):
        return table.pad(column, idx, device)
    return pad(table[column].iloc[idx].tolist(), device)


def values(table, column: str, idx) -> np.ndarray:
    """A column's rows ``idx`` as an array, of a DataFrame or of ``Rows``."""
    if isinstance(table, Rows):
        return table.plain[column][np.asarray(idx)]
    return table[column].iloc[idx].to_numpy()


@dataclass
class TranslationTask:
    name = "translation"
    perf_metric = "token_accuracy"
    ragged, plain = ("src_ids", "tgt_ids"), ()  # the columns a batch reads (``Rows``)

    vocab_size: int

    def build(self, model: dict, attention: str) -> Seq2Seq | Transformer:
        if model.get("arch", "lstm") == "transformer":
            return Transformer(self.vocab_size, model["hidden"], model["layers"], model.get("heads", 4),
                               model.get("ff", 4 * model["hidden"]), model["dropout"], attention,
                               model.get("activation", "softmax"), model.get("score_scale", 1.0))
        return Seq2Seq(self.vocab_size, model["hidden"], model["layers"], model["dropout"], attention,
                       model.get("activation", "softmax"), model.get("score_scale", 1.0), model.get("heads", 1),
                       model.get("head_combine", "sum"), model.get("attn_bias", True), model.get("readout", "concat"))

    def batch(self, table: pd.DataFrame, idx, device="cpu") -> dict:
        src, src_len = padded(table, "src_ids", idx, device)
        tgt, tgt_len = padded(table, "tgt_ids", idx, device)
        # decoder reads <s> y_1..y_T and predicts y_1..y_T </s>
        return {"src": src, "src_len": src_len, "tgt_in": tgt[:, :-1], "tgt_len": tgt_len - 1,
                "tgt_out": tgt[:, 1:]}

    def run(self, model, b, **kw):
        return model(b["src"], b["src_len"], b["tgt_in"], b["tgt_len"], **kw)

    def loss(self, model, b, reduction: str = "sum"):
        """NLL over non-pad target tokens: summed (paper eq. 3) or averaged per token (the
        reference code), ``train.loss`` (docs/methods.md 13)."""
        real = b["tgt_out"] != 0  # the output layer runs at real target tokens only
        logits = self.run(model, b, rows=real)["logits"]
        return F.cross_entropy(logits, b["tgt_out"][real], reduction=reduction)

    def correct(self, out, b):
        """(correct, total) target tokens with teacher forcing."""
        mask = b["tgt_out"] != 0
        hits = (out["logits"].argmax(-1) == b["tgt_out"]) & mask
        return hits.sum().item(), mask.sum().item()


@dataclass
class ClassificationTask:
    name = "classification"
    perf_metric = "accuracy"
    ragged, plain = ("ids",), ("label",)

    vocab_size: int

    def build(self, model: dict, attention: str) -> Classifier:
        return Classifier(self.vocab_size, model["embed"], model["hidden"], model["att_hidden"], attention,
                          model.get("activation", "softmax"), model.get("score_scale", 1.0))

    def batch(self, table, idx, device="cpu"):
        ids, lengths = padded(table, "ids", idx, device)
        label = torch.tensor(values(table, "label", idx), dtype=torch.float32, device=device)
        return {"ids": ids, "len": lengths, "label": label}

    def run(self, model, b, **kw):
        return model(b["ids"], b["len"], **kw)

    def loss(self, model, b, reduction: str = "mean"):
        """Binary cross-entropy, averaged over the batch as in the reference code."""
        return F.binary_cross_entropy_with_logits(self.run(model, b)["logit"], b["label"], reduction=reduction)

    def correct(self, out, b):
        hits = ((out["logit"] > 0).float() == b["label"]).sum().item()
        return hits, len(b["label"])


def stack_batches(parts: list[dict], padded: tuple, device) -> dict:
    """The K members' batches as one: the ``padded`` keys right-padded with 0 to the widest of the K
    ([K, B, W]); lengths (keys ending in ``len``, [K, B]) stay on the CPU, as ``pad`` keeps them;
    the rest goes to ``device``."""
    out = {}
    for key in parts[0]:
        if key in padded:
            width = max(p[key].shape[1] for p in parts)
            out[key] = torch.stack([F.pad(p[key], (0, width - p[key].shape[1])) for p in parts]).to(device)
        else:
            value = torch.stack([p[key] for p in parts])
            out[key] = value if key.endswith("len") else value.to(device)
    return out


@dataclass
class StackedTask:
    """K runs of a classification task as one batched model (``train.stack``,
    models/stacked.py): each member reads its own batch, padded to the longest row of the K."""

    task: ClassificationTask

    def build(self, members: list) -> StackedClassifier:
        return StackedClassifier(members)

    def batch(self, table, indices: list, device="cpu") -> dict:
        """ids [K, B, S], len [K, B], label [K, B]: member k's batch is rows ``indices[k]``."""
        return stack_batches([self.task.batch(table, idx) for idx in indices], ("ids",), device)

    def member_losses(self, model, b, reduction: str = "mean") -> torch.Tensor:
        """[K]: each member's loss as its separate run's ``ClassificationTask.loss``."""
        bce = F.binary_cross_entropy_with_logits(model(b["ids"], b["len"])["logit"], b["label"], reduction="none")
        return bce.mean(-1) if reduction == "mean" else bce.sum(-1)

    def loss(self, model, b, reduction: str = "mean") -> torch.Tensor:
        """The members' summed losses: member k's weights get exactly its own loss's gradient."""
        return self.member_losses(model, b, reduction).sum()


@dataclass
class StackedTranslationTask:
    """K runs of an LSTM translation task as one batched model (models/stacked_seq2seq.py)."""

    task: TranslationTask

    def build(self, members: list) -> StackedSeq2Seq:
        return StackedSeq2Seq(members)

    def batch(self, table, indices: list, device="cpu") -> dict:
        """src, tgt_in, tgt_out [K, B, W] and their lengths [K, B]: member k's rows ``indices[k]``."""
        return stack_batches([self.task.batch(table, idx) for idx in indices], ("src", "tgt_in", "tgt_out"), device)

    def member_losses(self, model, b, reduction: str = "sum") -> torch.Tensor:
        """[K]: each member's NLL over its real target tokens as ``TranslationTask.loss`` computes
        it, summed or averaged per token."""
        logits = model(b["src"], b["src_len"], b["tgt_in"], b["tgt_len"])["logits"]
        nll = F.cross_entropy(logits.flatten(0, 2), b["tgt_out"].flatten(), ignore_index=0, reduction="none")
        nll = nll.view(len(logits), -1).sum(-1)
        return nll if reduction == "sum" else nll / (b["tgt_out"] != 0).flatten(1).sum(-1)

    def loss(self, model, b, reduction: str = "sum") -> torch.Tensor:
        return self.member_losses(model, b, reduction).sum()


def stacked(task, model: dict | None = None):
    """The batched adapter of ``task`` that a stack (``train.stack`` > 1) trains on a GPU, or None
    where its models (``model``, the run's settings) have none (the transformer): the members then
    step in turn on every device (training/train.py)."""
    if isinstance(task, ClassificationTask):
        return StackedTask(task)
    if isinstance(task, TranslationTask) and (model or {}).get("arch", "lstm") == "lstm":
        return StackedTranslationTask(task)
    return None


def make_task(task: str, vocab_size: int):
    tasks = {"translation": TranslationTask, "classification": ClassificationTask}
    if task not in tasks:
        raise ValueError(f"unknown task {task!r}; expected one of {sorted(tasks)}")
    return tasks[task](vocab_size)
