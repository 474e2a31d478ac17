"""The words that run A's alpha* attends most, and how often the uniform probe agrees there.

    python diagnostics/attended_words.py results newsgroups --a-run standard-s1

For each probed validation text of a classification row: the word at alpha*'s argmax (run A
at its best step) and whether A(alpha*, xi^uf) counts the text a hit, with xi^uf at the
uniform checkpoint where the agreement peaks (the one Table 2 reads). Prints the words alpha*
attends most often with their agreement, the same for xi^uf's top word, and the agreement
when the hit may lie up to --near positions from alpha*'s argmax: an attention that reads a
word's neighbour scores 0 in the paper's A, and this says how much of a low A that is
(docs/reproduction.md, 20 Newsgroups). Each window's agreement is printed beside its chance
value (near_baseline): a window of +-w around a random position holds a top-5% hit up to
2w + 1 times as often as the position alone.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement import KEY_T, align, hit_positions, load_measure, padded
from attnlearn.compare import best_step


def near_agreement(alpha: np.ndarray, xi: np.ndarray, near: int) -> np.ndarray:
    """Per text: 1 if a hit of xi lies within ``near`` positions of alpha's argmax (0: A itself)."""
    star = np.nanargmax(alpha, axis=1)
    window = np.abs(np.arange(alpha.shape[1])[None, :] - star[:, None]) <= near
    return (hit_positions(xi) & window).any(1).astype(np.float64)


def near_baseline(xi: np.ndarray, near: int) -> np.ndarray:
    """Per text: the chance value of near_agreement, exactly. The share of the text's n real
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


def words_at(results: Path, dataset: str, keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The word at each row's argmax of ``values`` (rows keyed as in the probe tables)."""
    vocab = json.loads((results / "tokenized" / dataset / "tokenizer.json").read_text())["vocab"]
    ids = pd.read_parquet(results / "tokenized" / dataset / "valid.parquet", columns=["ids"])["ids"]
    texts = ids.iloc[keys // KEY_T]
    tokens = padded(np.concatenate(texts.to_numpy()), texts.map(len).to_numpy())
    return np.asarray(vocab)[tokens[np.arange(len(keys)), np.nanargmax(values, axis=1)].astype(np.int64)]


def attended(results: Path, dataset: str, a_run: str, u_run: str) -> tuple[pd.DataFrame, dict]:
    """Per text: alpha*'s and xi^uf's top words and the alpha arrays; and what was read."""
    probes = results / "probes" / dataset
    star = best_step(pd.read_parquet(probes / f"{a_run}.perf.parquet"))
    alpha = load_measure(pq.read_table(probes / f"{a_run}.parquet"), "alpha", star)
    u = pq.read_table(probes / f"{u_run}.parquet")
    steps = sorted(set(u["step"].to_pylist()))
    by_step = {s: align(alpha, load_measure(u, "xi", s)) for s in steps}
    u_step = max(steps, key=lambda s: near_agreement(*by_step[s], 0).mean())
    a, xi = by_step[u_step]
    texts = pd.DataFrame({"alpha_word": words_at(results, dataset, alpha.keys, a),
                          "xi_word": words_at(results, dataset, alpha.keys, xi),
                          "hit": near_agreement(a, xi, 0)})
    return texts, {"a_step": star, "u_step": u_step, "alpha": a, "xi": xi}


def by_word(texts: pd.DataFrame, column: str, most: int) -> pd.DataFrame:
    """The ``most`` most frequent top words: their number of texts, share and agreement."""
    grouped = texts.groupby(column)["hit"].agg(texts="size", agreement="mean")
    grouped["share"] = grouped["texts"] / len(texts)
    return grouped.sort_values("texts", ascending=False).head(most)[["texts", "share", "agreement"]]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", type=Path)
    parser.add_argument("dataset")
    parser.add_argument("--a-run", default="standard-s1")
    parser.add_argument("--u-run", default="uniform-s1")
    parser.add_argument("--most", type=int, default=10, help="how many words to list")
    parser.add_argument("--near", type=int, default=2, help="widest window for the near agreement")
    args = parser.parse_args(argv)
    texts, read = attended(args.results, args.dataset, args.a_run, args.u_run)
    pct = lambda v: f"{100 * v:.1f}"  # noqa: E731
    print(f"{args.dataset}: {args.a_run} at step {read['a_step']} vs {args.u_run} at step {read['u_step']}, "
          f"{len(texts)} texts")
    for column in ("alpha_word", "xi_word"):
        print(by_word(texts, column, args.most).to_string(formatters={"share": pct, "agreement": pct}))
    for near in range(args.near + 1):
        print(f"agreement within {near} positions: {pct(near_agreement(read['alpha'], read['xi'], near).mean())} "
              f"(chance {pct(near_baseline(read['xi'], near).mean())})")


if __name__ == "__main__":
    main(sys.argv[1:])
