"""The words that run A's alpha* attends most, and how often the uniform probe agrees there.

    python diagnostics/attended_words.py results newsgroups --a-run standard-s1

For each probe row of a dataset (a text in classification, a target word in translation): the
source word at alpha*'s argmax (run A at its best step) and whether A(alpha*, xi^uf) counts the
row a hit, with xi^uf at the uniform checkpoint where the agreement peaks (the one Table 2
reads). Prints the words alpha* attends most often with their agreement and its chance value,
the same for xi^uf's top word, and the agreement when the hit may lie up to --near positions
from alpha*'s argmax: an attention that reads a word's neighbour scores 0 in the paper's A, and
this says how much of a low A that is (docs/reproduction.md, 20 Newsgroups). Each window's
agreement is printed beside its chance value (near_baseline): a window of +-w around a random
position holds a top-5% hit up to 2w + 1 times as often as the position alone. The logic is
attnlearn.agreement.words, which the report's examples page (rule examples) shows for every dataset.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement.metric import load_measure
from attnlearn.agreement.compare import best_step
from attnlearn.agreement.words import (attended_rows, by_word, id_matrix, near_agreement, near_baseline,  # noqa: F401
                             near_table, peak_step, source_column, token_names)


def attended(results: Path, dataset: str, a_run: str, u_run: str) -> tuple[pd.DataFrame, dict]:
    """Per probe row: alpha*'s and xi^uf's top words, the hit and its chance; and what was read."""
    probes = results / "probes" / dataset
    tokenizer = json.loads((results / "tokenized" / dataset / "tokenizer.json").read_text())
    column = source_column("translation" if tokenizer["kind"] == "sentencepiece" else "classification")
    sources = id_matrix(pd.read_parquet(results / "tokenized" / dataset / "valid.parquet", columns=[column])[column])
    star = best_step(pd.read_parquet(probes / f"{a_run}.perf.parquet"))
    alpha = load_measure(pq.read_table(probes / f"{a_run}.parquet"), "alpha", star)
    u = pq.read_table(probes / f"{u_run}.parquet")
    u_step = peak_step(alpha, lambda s: load_measure(u, "xi", s), set(u["step"].to_pylist()))
    texts, arrays = attended_rows(token_names(tokenizer), sources, alpha, load_measure(u, "xi", u_step))
    return texts, {"a_step": star, "u_step": u_step, **arrays}


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
          f"{len(texts)} rows")
    for column in ("alpha_word", "xi_word"):
        print(by_word(texts, column, args.most).to_string(formatters={"share": pct, "agreement": pct, "chance": pct}))
    for r in near_table(read["alpha"], read["xi"], args.near).itertuples():
        print(f"agreement within {r.near} positions: {pct(r.agreement)} (chance {pct(r.chance)})")


if __name__ == "__main__":
    main(sys.argv[1:])
