"""The probe table's format, and the tables built from the data alone.

A probe table holds one row per (checkpoint step, example, target step t) with each
measure as a list column over the example's n real source positions (BOS and EOS
included; docs/data.md). Classification has t = 0 only.

Torch-free and free of the probing code on purpose: a rule's inputs are the modules its
script imports (runtime/codedeps.py), so IBM Model 1's alignments, the gold links and the
scripts that only pick the probed examples must not import probing/probes.py, or editing
a measure would rerun them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa


def within(lengths: np.ndarray) -> np.ndarray:
    """Position of each element inside its group, for groups of ``lengths`` laid end to end."""
    return np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)


def list_array(flat: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """int64 offsets (large_list): a column may hold more than 2^31 numbers."""
    offsets = np.concatenate([[0], np.cumsum(lengths, dtype=np.int64)])
    return pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(flat.astype(np.float32)))


def probe_schema(measures) -> pa.Schema:
    return pa.schema([("step", pa.int32()), ("example", pa.int32()), ("t", pa.int16()), ("n", pa.int16()),
                      *[(m, pa.large_list(pa.float32())) for m in measures]])


def probe_table(rows: dict) -> pa.Table:
    """Assemble accumulated arrays into the probe table's schema: ``rows`` holds the columns
    step, example, t, n and ``measures`` ({name: the values of every row, laid end to end})."""
    cols = {"step": pa.array(rows["step"], pa.int32()), "example": pa.array(rows["example"], pa.int32()),
            "t": pa.array(rows["t"], pa.int16()), "n": pa.array(rows["n"], pa.int16())}
    for name, flat in rows["measures"].items():
        cols[name] = list_array(flat, rows["n"])
    return pa.table(cols, schema=probe_schema(rows["measures"]))


def probe_examples(table: pd.DataFrame, max_examples: int) -> pd.DataFrame:
    """The probed validation examples: the first ``max_examples`` (same set for every measure)."""
    return table.iloc[:max_examples].reset_index(drop=True)


def gold_table(task_name: str, table: pd.DataFrame) -> pa.Table:
    """Gold links as a 0/1 measure over source positions, for rows that have any."""
    n_s = (table["src_ids"] if task_name == "translation" else table["ids"]).map(len).to_numpy()
    gold_t = table["gold_t"] if task_name == "translation" else table["gold_s"].map(lambda s: [0] * len(s))
    ex = np.repeat(np.arange(len(table)), table["gold_s"].map(len).to_numpy())
    ts = np.concatenate([np.asarray(v, dtype=np.int64) for v in gold_t])
    ss = np.concatenate([np.asarray(v, dtype=np.int64) for v in table["gold_s"]])
    rows = np.unique(ex * 100_000 + ts)  # each (example, t) with at least one link
    r_ex, r_t = rows // 100_000, rows % 100_000
    n = n_s[r_ex]
    offsets = np.concatenate([[0], np.cumsum(n)])
    flat = np.zeros(offsets[-1], dtype=np.float32)
    flat[offsets[np.searchsorted(rows, ex * 100_000 + ts)] + ss] = 1.0
    return probe_table({"step": np.zeros(len(rows)), "example": r_ex, "t": r_t, "n": n, "measures": {"gold": flat}})
