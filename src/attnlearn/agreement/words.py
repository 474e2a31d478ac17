"""Which source word each measure puts first, and how often two measures agree on it.

For every probe row (example, target step t) the word at a measure's argmax; grouped by that
word, how often A (docs/methods.md 4) counts the row a hit, beside the exact chance value of a
hit for the same rows (agreement.baseline_rows). Also the agreement when the hit may lie up to
``near`` positions from the argmax, with its own chance value: a +-w window around a random
position holds a top-5% position up to 2w + 1 times as often as the position alone. Used by
the examples page (rule ``examples``) and diagnostics/attended_words.py.
"""

from __future__ import annotations

import base64

import numpy as np
import pandas as pd

from attnlearn.agreement.metric import KEY_T, Measure, agreement_rows, align, baseline_rows, hit_positions, padded

PAD_ID = -1  # past a text's end in padded token arrays


def token_names(tokenizer: dict) -> np.ndarray:
    """Each token id's text (a tokenizer.json as the tokenize rule writes it)."""
    if tokenizer["kind"] == "sentencepiece":
        from attnlearn.data.tokenize import load_sentencepiece

        sp = load_sentencepiece(base64.b64decode(tokenizer["model_b64"]))
        return np.array([sp.id_to_piece(i) for i in range(sp.get_piece_size())], dtype=object)
    return np.array(tokenizer["vocab"], dtype=object)


def source_column(task: str) -> str:
    """The tokenized split's column of source ids (with <s>/<bos> and </s>/<eos>)."""
    return "src_ids" if task == "translation" else "ids"


def id_matrix(sequences: pd.Series) -> np.ndarray:
    """[E, max length] int64 ids of each sequence, PAD_ID past its end."""
    lengths = sequences.map(len).to_numpy()
    flat = np.concatenate([np.asarray(s, dtype=np.float64) for s in sequences]) if len(sequences) else []
    return np.nan_to_num(padded(np.asarray(flat), lengths), nan=PAD_ID).astype(np.int64)


def row_tokens(sources: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The source ids of each probe row (keys as agreement.load_measure gives them)."""
    return sources[keys // KEY_T]


def words_at(names: np.ndarray, tokens: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The word at each row's argmax of ``values`` ([N, S], NaN-padded; tokens [N, >= S])."""
    return names[tokens[np.arange(len(values)), np.nanargmax(values, axis=1)]]


def near_agreement(alpha: np.ndarray, xi: np.ndarray, near: int) -> np.ndarray:
    """Per row: 1 if a hit of xi lies within ``near`` positions of alpha's argmax (0: A itself)."""
    star = np.nanargmax(alpha, axis=1)
    window = np.abs(np.arange(alpha.shape[1])[None, :] - star[:, None]) <= near
    return (hit_positions(xi) & window).any(1).astype(np.float64)


def near_baseline(xi: np.ndarray, near: int) -> np.ndarray:
    """Per row: the chance value of near_agreement, exactly. The share of the row's n real
    positions p whose window [p - near, p + near] holds a hit of xi (hit_positions: xi at
    least its k-th largest value, k = ceil(0.05 n)), i.e. near_agreement with alpha's argmax
    replaced by a uniformly random position. ``near`` = 0 gives agreement.baseline_rows."""
    hits = hit_positions(xi)
    n = (~np.isnan(xi)).sum(1)
    width = xi.shape[1]
    # hits in [p - near, p + near] from a running count (pads hold no hit)
    count = np.concatenate([np.zeros((len(xi), 1), np.int64), np.cumsum(hits, axis=1)], axis=1)
    p = np.arange(width)
    in_window = count[:, np.minimum(p + near + 1, width)] - count[:, np.maximum(p - near, 0)]
    real = p[None, :] < n[:, None]
    return ((in_window > 0) & real).sum(1) / n


def attended_rows(names: np.ndarray, sources: np.ndarray, alpha: Measure, xi: Measure) -> tuple[pd.DataFrame, dict]:
    """Per row both measures share: alpha's and xi's top words, whether A(alpha, xi) counts a
    hit and its chance value; and the two aligned arrays (for near_agreement) with the rows'
    source ids."""
    keys = np.intersect1d(alpha.keys, xi.keys)
    a, x = align(alpha, xi)
    tokens = row_tokens(sources, keys)
    rows = pd.DataFrame({"example": keys // KEY_T, "t": keys % KEY_T,
                         "alpha_word": words_at(names, tokens, a), "xi_word": words_at(names, tokens, x),
                         "hit": agreement_rows(a, x), "chance": baseline_rows(x)})
    return rows, {"alpha": a, "xi": x, "tokens": tokens}


def by_word(rows: pd.DataFrame, column: str, most: int) -> pd.DataFrame:
    """The ``most`` most frequent top words of ``column``: their number of rows, share of all
    rows, agreement on them, and its chance value on the same rows."""
    grouped = rows.groupby(column)[["hit", "chance"]].agg(["size", "mean"])
    out = pd.DataFrame({"texts": grouped[("hit", "size")], "agreement": grouped[("hit", "mean")],
                        "chance": grouped[("chance", "mean")]})
    out["share"] = out["texts"] / len(rows)
    out.index.name = column
    return out.sort_values("texts", ascending=False, kind="stable").head(most)[["texts", "share", "agreement",
                                                                                "chance"]]


def near_table(alpha: np.ndarray, xi: np.ndarray, widest: int) -> pd.DataFrame:
    """Agreement when the hit may lie up to ``near`` positions away, beside its chance value."""
    return pd.DataFrame([{"near": w, "agreement": near_agreement(alpha, xi, w).mean(),
                          "chance": near_baseline(xi, w).mean()} for w in range(widest + 1)])


def peak_step(alpha: Measure, xi_at, steps) -> int:
    """The step at which ``xi_at(step)`` agrees most with alpha (A averaged over rows; the
    earliest on ties): the uniform checkpoint that Table 2's A(alpha*, xi^uf) reads."""
    steps = sorted(steps)
    values = [agreement_rows(*align(alpha, xi_at(s))).mean() for s in steps]
    return steps[int(np.argmax(values))]
