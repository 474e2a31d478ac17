"""The agreement metric A (paper eq. 10), its exact random baseline and
Kendall's tau, vectorised over all (example, target step) rows.

Measures are given as padded float arrays [N, S] with NaN past each row's n
real positions. Row keys (example, t) let two measures from different tables
be matched row by row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from attnlearn.data.probe_table import within

KEY_T = 1 << 16  # key = example * KEY_T + t
ROW_CHUNK_ELEMS = 1 << 24  # bounds Kendall's [rows, S, S] pairwise arrays


@dataclass
class Measure:
    keys: np.ndarray  # [N] int64, sorted
    values: np.ndarray  # [N, S] float64, NaN-padded

    @property
    def n(self) -> np.ndarray:
        return (~np.isnan(self.values)).sum(1)


def padded(flat: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Flat values + row lengths -> [N, max n] NaN-padded array."""
    lengths = np.asarray(lengths, dtype=np.int64)
    out = np.full((len(lengths), int(lengths.max(initial=1))), np.nan)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    out[rows, within(lengths)] = flat
    return out


def read_probe(path, measures, steps=None) -> pa.Table:
    """A probe table's key columns and ``measures`` (those it has), at ``steps`` only: a probe
    table holds every checkpoint, one row group each, so the filter skips the rest."""
    have = pq.read_schema(path).names
    filters = [("step", "in", sorted(steps))] if steps is not None else None
    return pq.read_table(path, columns=["step", "example", "t", "n", *[m for m in measures if m in have]],
                         filters=filters)


def probe_measure(path, name: str, step: int) -> Measure:
    """One measure of a probe table file at one checkpoint step, reading that step alone."""
    return load_measure(read_probe(path, [name], {step}), name, step)


def load_measure(table: pa.Table, name: str, step: int | None = None) -> Measure:
    """One measure of a probe table at one checkpoint step, rows sorted by key."""
    if step is not None:
        table = table.filter(pc.equal(table["step"], step))
    if table.num_rows == 0:
        raise ValueError(f"no rows for measure {name!r} at step {step}")
    col = table[name].combine_chunks()
    if col.null_count:
        raise ValueError(f"measure {name!r} has no values at step {step}: a probe computes the measures of "
                         "probe.at_best at the run's best checkpoints only (computed_steps names them)")
    values = padded(col.flatten().to_numpy(zero_copy_only=False), pc.list_value_length(col).to_numpy())
    keys = table["example"].to_numpy().astype(np.int64) * KEY_T + table["t"].to_numpy()
    order = np.argsort(keys, kind="stable")
    return Measure(keys[order], values[order])


def computed_steps(table: pa.Table, name: str) -> set[int]:
    """The steps at which a probe table has values of measure ``name`` (none where it lacks the
    column): a probe computes probe.at_best's measures at the run's best checkpoints alone."""
    if name not in table.column_names:
        return set()
    return set(pc.unique(table.filter(pc.is_valid(table[name]))["step"]).to_pylist())


def align(a: Measure, b: Measure) -> tuple[np.ndarray, np.ndarray]:
    """The rows both measures have, as two arrays of the same shape."""
    return _aligned(a, b)[1:]


def _aligned(a: Measure, b: Measure) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The shared row keys and both measures' values on them."""
    keys, ia, ib = np.intersect1d(a.keys, b.keys, assume_unique=True, return_indices=True)
    va, vb = a.values[ia], b.values[ib]
    width = max(va.shape[1], vb.shape[1])
    va = np.pad(va, ((0, 0), (0, width - va.shape[1])), constant_values=np.nan)
    vb = np.pad(vb, ((0, 0), (0, width - vb.shape[1])), constant_values=np.nan)
    if not np.array_equal(np.isnan(va), np.isnan(vb)):
        raise ValueError("measures disagree on the number of source positions of some rows")
    return keys, va, vb


def top_k(n: np.ndarray) -> np.ndarray:
    """k = ceil(0.05 n): the argmax must be among the top 5% (at least one)."""
    return np.ceil(0.05 * np.asarray(n)).astype(np.int64)


def agreement_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row: 1 if fewer than k entries of b are strictly above b[argmax a] (ties match)."""
    idx = np.nanargmax(a, axis=1)
    b_at = b[np.arange(len(b)), idx]
    above = (b > b_at[:, None]).sum(1)  # NaN compares False
    return (above < top_k((~np.isnan(b)).sum(1))).astype(np.float64)


def _row_chunks(n_rows: int, width: int):
    step = max(1, ROW_CHUNK_ELEMS // max(1, width * width))
    return (slice(i, i + step) for i in range(0, n_rows, step))


def hit_positions(b: np.ndarray) -> np.ndarray:
    """[N, S] True where #{j: b_j > b_i} < k, i.e. b_i is at least b's k-th largest value
    (the positions an argmax may take for A to count it; ties match, pads never)."""
    n = (~np.isnan(b)).sum(1)
    ranked = -np.sort(np.nan_to_num(-b, nan=np.inf), axis=1)  # descending, NaN last
    kth = ranked[np.arange(len(b)), top_k(n) - 1]
    return b >= kth[:, None]  # NaN compares False


def baseline_rows(b: np.ndarray) -> np.ndarray:
    """Exact expected agreement of a uniformly random position with b:
    (1/n) sum_i [#{j: b_j > b_i} < k]."""
    return hit_positions(b).sum(1) / (~np.isnan(b)).sum(1)


def kendall_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per row (NaN for rows where either side is constant).

    With g_x = [x_i > x_j] over ordered pairs, sum sign(da) sign(db) is
    2 (#(g_a & g_b) - #(g_a & g_b^T)) and #(da != 0) is 2 #g_a (each unordered pair is
    counted once each way), so one-byte comparisons replace float sign arrays; a NaN
    compares False, so pads contribute no pairs. Exact integer counts: the same floats
    as summing the signs."""
    out = np.empty(len(a))
    for sl in _row_chunks(len(a), a.shape[1]):
        ga = a[sl, :, None] > a[sl, None, :]
        gb = b[sl, :, None] > b[sl, None, :]
        lb = b[sl, :, None] < b[sl, None, :]  # g_b transposed, contiguous
        concord = np.count_nonzero(ga & gb, axis=(1, 2)) - np.count_nonzero(ga & lb, axis=(1, 2))
        norm = np.sqrt((2 * np.count_nonzero(ga, axis=(1, 2))) * (2 * np.count_nonzero(gb, axis=(1, 2))))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[sl] = np.where(norm > 0, 2 * concord / norm, np.nan)
    return out


def hit_rows(a: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """Per row: 1 if the argmax of a is a gold position (a stricter test than A)."""
    return (gold[np.arange(len(gold)), np.nanargmax(a, axis=1)] > 0).astype(np.float64)


def gold_baseline_rows(gold: np.ndarray) -> np.ndarray:
    return np.nansum(gold > 0, axis=1) / (~np.isnan(gold)).sum(1)


@dataclass
class Resample:
    """A bootstrap over examples: ``weights[i, e]`` is how often resample i draws example
    ``examples[e]``. The same draw is applied to every comparison of a dataset, so each
    Table 2 column can be recomputed per resample (sampling error from the examples)."""

    examples: np.ndarray  # [E] sorted example ids
    weights: np.ndarray  # [B, E] multinomial counts

    @classmethod
    def draw(cls, examples, n_resamples: int, seed: int) -> "Resample":
        examples = np.unique(np.asarray(examples, dtype=np.int64))
        rng = np.random.default_rng(seed)
        weights = rng.multinomial(len(examples), np.full(len(examples), 1 / len(examples)), size=n_resamples)
        return cls(examples, weights.astype(np.float64))

    def means(self, keys: np.ndarray, per_row: np.ndarray) -> np.ndarray:
        """[B] the row mean of ``per_row`` under each resample (an example weighs all its rows)."""
        idx = np.searchsorted(self.examples, keys // KEY_T)
        if not np.array_equal(self.examples[np.minimum(idx, len(self.examples) - 1)], keys // KEY_T):
            raise ValueError("rows of examples outside the resample's example set")
        sums = np.bincount(idx, weights=per_row, minlength=len(self.examples))
        counts = np.bincount(idx, minlength=len(self.examples)).astype(np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (self.weights @ sums) / (self.weights @ counts)


def summarize(a: Measure, b: Measure, metrics=("agreement", "kendall_tau"),
              resample: Resample | None = None) -> list[dict]:
    """Mean of each metric over the shared rows, with its random baseline; with ``resample``,
    the agreement row also carries its value under each resample (``boot``)."""
    keys, va, vb = _aligned(a, b)
    if len(va) == 0:
        raise ValueError("the two measures share no rows")
    out = []
    for metric in metrics:
        if metric == "agreement":
            value, base = agreement_rows(va, vb), baseline_rows(vb)
        elif metric == "kendall_tau":
            value, base = kendall_rows(va, vb), np.zeros(len(va))
        elif metric == "gold_hit":
            value, base = hit_rows(va, vb), gold_baseline_rows(vb)
        else:
            raise ValueError(f"unknown agreement metric {metric!r}")
        row = {"metric": metric, "value": float(np.nanmean(value)), "baseline": float(np.mean(base)),
               "n_rows": int(len(va))}
        if resample is not None and metric == "agreement":
            row["boot"] = resample.means(keys, value)
        out.append(row)
    return out
