"""Kendall's tau-b over every (example, step) row (agreement.kendall_rows, one-byte pairwise
comparisons) against the float sign arrays it replaced. Not a test.

    python benchmarks/kendall.py [--rows 796] [--width 200] [--repeats 3]

The default shape is the paper-size 20 Newsgroups row's: 796 validation posts cut at 200
tokens, lengths drawn from [20, 200] with one of 200, and a tenth of the values tied (the
count table's and the uniform model's ties). Checks that both give the same floats bit for
bit, then prints one Markdown row: seconds per comparison each way and the speed-up (the
row's agreement job makes 199 such comparisons).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from attnlearn.agreement.metric import _row_chunks, kendall_rows, padded


def float_signs(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Kendall's tau-b per row as computed before: float sign arrays of every pair."""
    out = np.empty(len(a))
    for sl in _row_chunks(len(a), a.shape[1]):
        da = np.nan_to_num(np.sign(a[sl, :, None] - a[sl, None, :]))
        db = np.nan_to_num(np.sign(b[sl, :, None] - b[sl, None, :]))
        concord = (da * db).sum((1, 2))
        norm = np.sqrt((da != 0).sum((1, 2)) * (db != 0).sum((1, 2)))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[sl] = np.where(norm > 0, concord / norm, np.nan)
    return out


def measures(rows: int, width: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    lengths = rng.integers(min(20, width), width + 1, rows)
    lengths[0] = width
    flat = rng.random((2, lengths.sum()))
    flat[1] = np.where(rng.random(lengths.sum()) < 0.1, 0.5, flat[1])  # ties
    return padded(flat[0], lengths), padded(flat[1], lengths)


def best_of(fn, repeats: int) -> tuple[float, np.ndarray]:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=796)
    ap.add_argument("--width", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    a, b = measures(args.rows, args.width)
    before, old = best_of(lambda: float_signs(a, b), args.repeats)
    after, new = best_of(lambda: kendall_rows(a, b), args.repeats)
    if not np.array_equal(old, new, equal_nan=True):
        raise SystemExit("kendall_rows differs from the float-sign computation")
    print("| rows x width | float signs (s) | one-byte comparisons (s) | speed-up |\n|---|---|---|---|")
    print(f"| {args.rows} x {args.width} | {before:.3f} | {after:.3f} | {before / after:.1f}x |")


if __name__ == "__main__":
    main()
