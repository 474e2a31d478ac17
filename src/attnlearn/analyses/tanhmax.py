"""Softmax vs TanhMax on the same data (docs/methods.md 11; seed "Rethinking
Attention Weights as Bidirectional Coefficients").

Per dataset: the softmax run A and the TanhMax run T, each at its best
checkpoint: validation performance, agreement of its attention with the
uniform run's lexical probe xi^uf (maximum over U's checkpoints, as Table 2),
and, on ``synthetic_cls``, the mean signed weight on positive-class keywords,
negative-class keywords and the other (neutral) words.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from ..agreement import KEY_T, load_measure, summarize
from ..compare import best_step, primary
from ..data.synthetic import pseudo_words
from ..tokenize import BOS, EOS


def synthetic_cls_keywords(options: dict, seed: int) -> tuple[list[str], list[str]]:
    """(class-0 keywords, class-1 keywords) of a synthetic_cls source: its generator draws
    them first from numpy's default_rng(seed)."""
    k = options["keywords_per_class"]
    words = pseudo_words(options["vocab"] + 2 * k, np.random.default_rng(seed))
    return words[:k], words[k:2 * k]


def keyword_classes(ids: np.ndarray, vocab: list[str], keywords: tuple[list[str], list[str]]) -> np.ndarray:
    """Class of each token id: 1 positive keyword, -1 negative keyword, 0 neutral word, 9 special."""
    index = {w: i for i, w in enumerate(vocab)}
    cls = np.zeros(len(vocab), dtype=np.int8)
    for sign, words in ((-1, keywords[0]), (1, keywords[1])):
        cls[[index[w] for w in words if w in index]] = sign
    cls[[BOS, EOS, 0]] = 9
    return cls[ids]


def keyword_weights(probe: pa.Table, step: int, valid: pd.DataFrame, token_class) -> dict[str, float]:
    """Mean attention weight on positive / negative keywords and neutral words (one row per example)."""
    alpha = load_measure(probe, "alpha", step)
    examples = alpha.keys // KEY_T
    out = {}
    ids = valid["ids"].iloc[examples]
    width = alpha.values.shape[1]
    padded = np.zeros((len(ids), width), dtype=np.int64)
    for r, seq in enumerate(ids):  # one row per example: small
        padded[r, :len(seq)] = seq
    classes = token_class(padded)
    real = ~np.isnan(alpha.values)
    for name, c in (("positive_keyword", 1), ("negative_keyword", -1), ("neutral_word", 0)):
        sel = real & (classes == c)
        out[f"weight_{name}"] = float(alpha.values[sel].mean()) if sel.any() else float("nan")
        out[f"n_{name}"] = int(sel.sum())
    return out


def comparison(dataset: str, probes: dict, perf: dict, roles: dict, valid: pd.DataFrame | None = None,
               token_class=None) -> pd.DataFrame:
    """Rows (dataset, activation, run, step, metric, value, baseline) for runs A and T."""
    (u,) = [r for r, ro in roles.items() if ro == "U"]
    u_steps = sorted(set(probes[u]["step"].to_pylist()))
    rows = []
    for role, activation in (("A", "softmax"), ("T", "tanhmax")):
        (run,) = [r for r, ro in roles.items() if ro == role]
        step = best_step(perf[run])
        meta = {"dataset": dataset, "activation": activation, "run": run, "step": step}
        p = primary(perf[run])  # a translation run's BLEU rows are not its performance
        rows.append({**meta, "metric": p["metric"].iloc[0], "value": float(p["value"].max()), "baseline": np.nan})
        a = load_measure(probes[run], "alpha", step)
        best = {}
        for s in u_steps:
            for r in summarize(a, load_measure(probes[u], "xi", s)):
                if r["metric"] not in best or r["value"] > best[r["metric"]]["value"]:
                    best[r["metric"]] = r
        for metric, r in best.items():
            rows.append({**meta, "metric": f"{metric}_alpha_xi_uniform", "value": r["value"],
                         "baseline": r["baseline"]})
        if token_class is not None:
            for metric, value in keyword_weights(probes[run], step, valid, token_class).items():
                rows.append({**meta, "metric": metric, "value": value, "baseline": np.nan})
    return pd.DataFrame(rows, columns=["dataset", "activation", "run", "step", "metric", "value", "baseline"])
