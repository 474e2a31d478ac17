"""Turning a dataset source into its train / valid / test tables."""

from __future__ import annotations

import pandas as pd

from .synthetic import GENERATORS

SPLITS = ("train", "valid", "test")


def prepare_synthetic(source: dict) -> dict[str, pd.DataFrame]:
    """One generated corpus (one lexicon / keyword set) cut into the splits in order."""
    sizes = source["splits"]
    data = GENERATORS[source["kind"]](n_sentences=sum(sizes[s] for s in SPLITS), seed=source["seed"],
                                      **source["options"])
    out, start = {}, 0
    for split in SPLITS:
        out[split] = data.iloc[start:start + sizes[split]].reset_index(drop=True)
        start += sizes[split]
    return out


def prepare(source: dict, inputs: dict) -> dict[str, pd.DataFrame]:
    if source["kind"] in GENERATORS:
        return prepare_synthetic(source)
    raise ValueError(f"unknown source kind {source['kind']!r}")
