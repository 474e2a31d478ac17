"""From a batch's measures (tensors [B, T, S]) to probe table rows (data/probe_table.py).

Shared by the probes of a run's checkpoints (probes.py) and of the proxy (proxy.py).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import torch

from attnlearn.data.probe_table import probe_table


def row_mask(task, b) -> tuple[torch.Tensor, torch.Tensor]:
    """(valid target steps [B, T], source lengths [B])."""
    if task.name == "translation":
        return b["tgt_out"] != 0, b["src_len"]
    return torch.ones(len(b["ids"]), 1, dtype=torch.bool, device=b["ids"].device), b["len"]


def flatten_rows(values: torch.Tensor, valid: torch.Tensor, lengths: torch.Tensor):
    """[B, T, S] -> (flat values, row lengths, example index, t) over valid (b, t) rows,
    each row cut to its example's source length. Fully vectorised."""
    B, T, S = values.shape
    lengths = lengths.to(values.device)  # the batch keeps lengths on the host (tasks.pad)
    pos_ok = torch.arange(S, device=values.device) < lengths[:, None]  # [B, S]
    keep = valid[:, :, None] & pos_ok[:, None, :]
    ex, t = torch.nonzero(valid, as_tuple=True)
    return values[keep].float().cpu().numpy(), lengths[ex].cpu().numpy(), ex.cpu().numpy(), t.cpu().numpy()


class RowAccumulator:
    """Collects flattened measure rows batch by batch; ``table()`` builds them into one table."""

    def __init__(self):
        self.parts = []

    def add(self, step: int, examples, measures: dict, valid, lengths):
        """``examples``: the example index of every row of the batch."""
        first = next(iter(measures.values()))
        _, n, ex, t = flatten_rows(first, valid, lengths)
        flats = {k: flatten_rows(v, valid, lengths)[0] for k, v in measures.items()}
        self.parts.append((np.full(len(ex), step), np.asarray(examples)[ex], t, n, flats))

    def table(self) -> pa.Table:
        """Rows ordered by (step, example, t), whatever order the batches came in."""
        cat = lambda i: np.concatenate([p[i] for p in self.parts])  # noqa: E731
        step, example, t, n = cat(0), cat(1), cat(2), cat(3)
        order = np.lexsort((t, example, step))
        starts = np.concatenate([[0], np.cumsum(n)])[:-1][order]
        take = np.repeat(starts - np.concatenate([[0], np.cumsum(n[order])])[:-1], n[order]) + np.arange(n.sum())
        names = self.parts[0][4].keys()
        table = probe_table({"step": step[order], "example": example[order], "t": t[order], "n": n[order],
                             "measures": {k: np.concatenate([p[4][k] for p in self.parts])[take] for k in names}})
        self.parts = []
        return table
