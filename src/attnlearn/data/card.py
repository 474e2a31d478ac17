"""The data card: counts and median lengths per split, like the paper's Table 9."""

from __future__ import annotations

import numpy as np
import pandas as pd


def _median(lengths) -> float:
    return float(np.median(lengths)) if len(lengths) else float("nan")


def data_card(frames: dict, tasks: dict[str, str]) -> pd.DataFrame:
    """``frames``: {dataset: {split: (text table, token table)}}.

    Word lengths count whitespace words of the prepared text; token lengths
    count model tokens without ``<s>``/``</s>``.
    """
    rows = []
    for dataset, splits in frames.items():
        for split, (text, tokens) in splits.items():
            row = {"dataset": dataset, "task": tasks[dataset], "split": split, "examples": len(text)}
            if tasks[dataset] == "translation":
                row.update(median_src_words=_median(text["src"].str.split().str.len()),
                           median_tgt_words=_median(text["tgt"].str.split().str.len()),
                           median_src_tokens=_median(tokens["src_ids"].map(len) - 2),
                           median_tgt_tokens=_median(tokens["tgt_ids"].map(len) - 2))
            else:
                row.update(median_src_words=_median(text["text"].str.split().str.len()),
                           median_src_tokens=_median(tokens["ids"].map(len) - 2),
                           positive_share=float(text["label"].mean()) if len(text) else float("nan"))
            rows.append(row)
    return pd.DataFrame(rows)
