"""The controlled experiments as functions of their config (docs/methods.md 8).

- ``copying``: per seed, a single-head model trained on one copy distribution;
  the curve every ``eval_every`` steps with convergence (paper 3.3, A.3, 6.2).
- the multi-head rescue (paper 5.2) is in ``multihead.py``.
- ``copy_counts``: the count table of a copy distribution (paper Figure 4, 8).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from attnlearn.data import counts as C
from attnlearn.experiments.data import CopyTask
from attnlearn.experiments.train import CURVE_COLUMNS, build, convergence, train_curve, train_kwargs

log = logging.getLogger(__name__)

COPYING_COLUMNS = ["task", "seed", "step", "loss", "token_acc", "attn_acc", "converged", "steps_to_converge"]


def copying(task_name: str, spec: dict, seeds, model: dict, train: dict, threshold: float,
            device="cpu") -> pd.DataFrame:
    """One curve per seed (the seed sets initialisation and data), trained on ``device``."""
    task = CopyTask.from_dict(spec)
    steps = int(spec.get("steps", train["steps"]))
    frames = []
    for seed in seeds:
        curve = train_curve(build(task, model, seed), task, steps, seed, device=device, **train_kwargs(train))
        converged, first = convergence(curve, threshold)
        frames.append(curve[CURVE_COLUMNS].assign(
            task=task_name, seed=int(seed), converged=converged, steps_to_converge=first))
        log.info("%s seed %d: final token accuracy %.3f, converged %s (step %s)", task_name, seed,
                 curve["token_acc"].iloc[-1], converged, first)
    return pd.concat(frames, ignore_index=True)[COPYING_COLUMNS]


def copy_counts(task_name: str, spec: dict, n_samples: int, seed: int) -> pd.DataFrame:
    """Count table c[x, y] and t(y | x) (paper eq. 16-17) over ``n_samples`` sampled
    pairs, content tokens and EOS; ``aligned`` marks the cells of the gold alignment
    (y = x for copying: the cells a proxy model would have to single out)."""
    task = CopyTask.from_dict(spec)
    src, tgt = task.sample(n_samples, np.random.default_rng(seed))
    frame = C.count_frame(C.count_matrix(list(src), list(tgt), task.n_tokens, task.n_tokens))
    return frame.assign(task=task_name, aligned=frame["src_id"] == frame["tgt_id"])


def count_contrast(counts: pd.DataFrame) -> pd.DataFrame:
    """Per task: mean t(y | x) on aligned cells (y = x) vs other co-occurring cells.
    A ratio of 1 means the count table cannot tell the aligned word apart (40-of-40)."""
    g = counts.groupby(["task", "aligned"])["t_tgt_given_src"].mean().unstack()
    out = pd.DataFrame({"task": g.index, "t_aligned": g[True].to_numpy(), "t_other": g[False].to_numpy()})
    return out.assign(ratio=out["t_aligned"] / out["t_other"])

