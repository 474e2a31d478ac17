"""Softmax vs TanhMax on the same data (docs/methods.md 11; seed "Rethinking
Attention Weights as Bidirectional Coefficients").

Per dataset: the softmax run A and the TanhMax run T, each at its best
checkpoint: validation performance, agreement of its attention with the
uniform run's lexical probe xi^uf (maximum over U's checkpoints, as Table 2),
and, on ``synthetic_cls``, the weights on positive-class keywords, negative-class
keywords and the other (neutral) words.

The absolute sign of TanhMax weights is not identifiable: negating the
classifier's attention scorer and its per-position scores beta gives the same
logits with every weight's sign flipped (TanhMax is odd). So agreement ranks
positions by |weight|, as every other measure does, and the sign analysis
reports only flip-invariant quantities: each keyword's sign relative to the
negative-class keywords' mean sign, and the share of examples whose two
keyword classes get opposite signs. The signed means are kept, named
``signed_*``, for reading with that caveat.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from attnlearn.agreement.metric import KEY_T, Measure, load_measure, summarize
from attnlearn.agreement.compare import best_step, primary
from attnlearn.data.synthetic import pseudo_words
from attnlearn.data.tokenize import BOS, EOS


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


KEYWORD_CLASSES = (("positive_keyword", 1), ("negative_keyword", -1), ("neutral_word", 0))


def keyword_arrays(probe: pa.Table, step: int, valid: pd.DataFrame, token_class):
    """(weights [N, S] NaN past each row, token classes [N, S], example labels [N]) of a probe's
    alpha at ``step`` (one row per example)."""
    alpha = load_measure(probe, "alpha", step)
    examples = alpha.keys // KEY_T
    ids = valid["ids"].iloc[examples]
    padded = np.zeros(alpha.values.shape, dtype=np.int64)
    for r, seq in enumerate(ids):  # one row per example: small
        padded[r, :len(seq)] = seq
    return alpha.values, token_class(padded), valid["label"].iloc[examples].to_numpy()


def _mean(x: np.ndarray) -> float:
    return float(x.mean()) if x.size else float("nan")


def keyword_weights(alpha: np.ndarray, classes: np.ndarray) -> dict[str, float]:
    """Mean signed weight (sign not identifiable: read with care) and mean |weight| per class."""
    out = {}
    for name, c in KEYWORD_CLASSES:
        w = alpha[~np.isnan(alpha) & (classes == c)]
        out[f"signed_weight_{name}"], out[f"abs_weight_{name}"], out[f"n_{name}"] = _mean(w), _mean(np.abs(w)), w.size
    return out


def relative_signs(alpha: np.ndarray, classes: np.ndarray, labels: np.ndarray) -> dict[str, float]:
    """Flip-invariant sign measures, overall and per example label y (suffix ``_label{y}``):

    - ``relative_sign_{class}``: mean of sign(w) * s0 over that class's keyword tokens, s0 the
      sign of the mean weight of all negative-class keywords (+1: the same sign as the
      negative keywords, -1: the opposite sign);
    - ``opposite_sign_share``: among examples holding keywords of both classes, the share where
      the two classes' mean weights have opposite signs (``n_both_classes`` such examples)."""
    real = ~np.isnan(alpha)
    w = np.where(real, alpha, 0.0)
    s0 = np.sign(_mean(w[real & (classes == -1)]))
    mean_per_row = {c: (w * (classes == c)).sum(1) / (classes == c).sum(1).clip(min=1) for c in (1, -1)}
    both = ((classes == 1) & real).any(1) & ((classes == -1) & real).any(1)
    opposite = np.sign(mean_per_row[1]) * np.sign(mean_per_row[-1]) < 0
    out = {}
    for suffix, rows in (("", np.ones(len(labels), bool)), ("_label0", labels == 0), ("_label1", labels == 1)):
        for name, c in KEYWORD_CLASSES[:2]:
            sel = real & (classes == c) & rows[:, None]
            out[f"relative_sign_{name}{suffix}"] = _mean(np.sign(w[sel]) * s0) if s0 != 0 else float("nan")
        out[f"opposite_sign_share{suffix}"] = _mean(opposite[both & rows])
        out[f"n_both_classes{suffix}"] = int((both & rows).sum())
    return out


def _magnitude(m: Measure) -> Measure:
    return Measure(m.keys, np.abs(m.values))


def _best_over(a: Measure, xi_steps, prefix: str) -> list[dict]:
    """Each agreement metric of ``a`` with xi^uf, at U's best checkpoint for it (as Table 2)."""
    best = {}
    for xi in xi_steps:
        for r in summarize(a, xi):
            if r["metric"] not in best or r["value"] > best[r["metric"]]["value"]:
                best[r["metric"]] = r
    return [{"metric": f"{metric}_{prefix}xi_uniform", "value": r["value"], "baseline": r["baseline"]}
            for metric, r in best.items()]


def comparison(dataset: str, probes: dict, perf: dict, roles: dict, valid: pd.DataFrame | None = None,
               token_class=None) -> pd.DataFrame:
    """Rows (dataset, activation, run, step, metric, value, baseline) for runs A and T.

    Agreement with xi^uf ranks by |alpha| (``*_alpha_xi_uniform``); the signed ranking of
    TanhMax weights is reported apart (``*_signed_alpha_xi_uniform``)."""
    (u,) = [r for r, ro in roles.items() if ro == "U"]
    xi_steps = [load_measure(probes[u], "xi", s) for s in sorted(set(probes[u]["step"].to_pylist()))]
    rows = []
    for role, activation in (("A", "softmax"), ("T", "tanhmax")):
        (run,) = [r for r, ro in roles.items() if ro == role]
        step = best_step(perf[run])
        meta = {"dataset": dataset, "activation": activation, "run": run, "step": step}
        p = primary(perf[run])  # a translation run's BLEU rows are not its performance
        rows.append({**meta, "metric": p["metric"].iloc[0], "value": float(p["value"].max()), "baseline": np.nan})
        a = load_measure(probes[run], "alpha", step)
        rows += [{**meta, **r} for r in _best_over(_magnitude(a), xi_steps, "alpha_")]
        rows += [{**meta, **r} for r in _best_over(a, xi_steps, "signed_alpha_")]
        if token_class is not None:
            alpha, classes, labels = keyword_arrays(probes[run], step, valid, token_class)
            for metric, value in {**keyword_weights(alpha, classes), **relative_signs(alpha, classes, labels)}.items():
                rows.append({**meta, "metric": metric, "value": value, "baseline": np.nan})
    return pd.DataFrame(rows, columns=["dataset", "activation", "run", "step", "metric", "value", "baseline"])
