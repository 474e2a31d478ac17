"""Turning a dataset source into its train / valid / test tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.runtime.io import remove_stale_temps
from attnlearn.data import own  # noqa: F401  (registers the own-data kinds in PARSERS)
from attnlearn.data.download import checksum_of, verify, verify_spec
from attnlearn.data.parsers import PARSERS
from attnlearn.data.synthetic import GENERATORS

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
    """Split tables from a generator, or from verified downloads through a parser.

    ``inputs`` maps each of the parser's file names to a local path; files are
    verified again here, so an archive the user placed by hand is checked too.
    """
    kind = source["kind"]
    if kind in GENERATORS:
        return prepare_synthetic(source)
    if kind not in PARSERS:
        raise ValueError(f"unknown source kind {kind!r}")
    files = {}
    for name, spec in source["files"].items():
        remove_stale_temps(inputs[name])  # a killed download's hidden leftover, where the file was then placed by hand
        if "url" in spec:
            verify_spec(spec, inputs[name])
        else:  # a local file (own data): its checksum is optional
            verify(inputs[name], *checksum_of(spec))
        files[name] = inputs[name]
    out = {split: shuffled(df) for split, df in PARSERS[kind](files, source.get("options", {})).items()}
    limit = source.get("limit", {})
    return {split: out[split].head(limit[split]).reset_index(drop=True) if split in limit else out[split]
            for split in SPLITS}


def shuffled(df: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Rows in a seeded random order. Canonical files are often grouped by label (20 Newsgroups
    by newsgroup, SST's dev set mostly positive first): the first N rows, which ``limit`` keeps
    and the probes read (probe.max_examples), must be a random sample, not one class."""
    return df.iloc[np.random.default_rng(seed).permutation(len(df))].reset_index(drop=True)
