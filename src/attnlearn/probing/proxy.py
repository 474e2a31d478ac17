"""Probing the trained bag-of-words proxy (xi^px) together with the count-table alignment
(docs/methods.md 3 and 7) and, for classification, the logistic regression (xi^lr)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch

from attnlearn.data import counts as C
from attnlearn.probing.rows import RowAccumulator, row_mask
from attnlearn.training.logreg import logreg_probe


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
