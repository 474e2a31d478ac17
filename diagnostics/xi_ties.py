"""How many of a run's probe rows have the top of a measure tied, checkpoint by checkpoint, and
what the ties do to the random baseline.

    python diagnostics/xi_ties.py results multi30k --run uniform-s1

A(a, b) counts a row a hit wherever a's argmax is among b's top k positions, ties included, and
its random baseline is the exact expected agreement of a uniformly random position
(attnlearn.agreement.metric.baseline_rows): a row whose top value several positions share raises
both. Translation's xi is log p(y_t | s) in float32; once a model is sure of a target word from
any of several source words alone, each gives log p = 0.0 exactly (the largest logit exceeds the
others by more than float32 resolves next to it), and those positions tie. Per checkpoint: the
rows, the share whose top value two or more positions share, the share whose top value is exactly
0, the mean of 1 / length (a random position's agreement with no ties and k = 1), and the
baseline as the tables compute it (any k, ties counted).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from attnlearn.agreement.metric import baseline_rows, load_measure


def ties(values: np.ndarray) -> dict:
    """One checkpoint's rows ([rows, positions], NaN-padded) summarised."""
    top = np.nanmax(values, axis=1)
    lengths = (~np.isnan(values)).sum(1)
    return {"rows": len(values), "top tied": float(((values == top[:, None]).sum(1) >= 2).mean()),
            "top exactly 0": float((top == 0).mean()), "1 / length": float((1 / lengths).mean()),
            "baseline": float(baseline_rows(values).mean())}


def tie_table(probes: Path, measure: str) -> pd.DataFrame:
    table = pq.read_table(probes, columns=["step", "example", "t", measure])
    steps = sorted(pc.unique(table["step"]).to_pylist())
    return pd.DataFrame([{"step": s, **ties(load_measure(table, measure, s).values)} for s in steps])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a run's results folder")
    ap.add_argument("dataset")
    ap.add_argument("--run", default="uniform-s1", help="the probed run (default: uniform-s1, whose xi is xi^uf)")
    ap.add_argument("--measure", default="xi", help="the probe table's measure column (default: xi)")
    args = ap.parse_args(argv)
    probes = args.results / "probes" / args.dataset / f"{args.run}.parquet"
    if not probes.is_file():
        print(f"no probe table {probes}", file=sys.stderr)
        return 2
    frame = tie_table(probes, args.measure)
    lines = ["| step | rows | top tied (%) | top exactly 0 (%) | 1 / length (%) | baseline (%) |", "|---" * 6 + "|"]
    lines += [f"| {r.step:,} | {r.rows:,} | " + " | ".join(f"{100 * v:.2f}" for v in r[3:]) + " |"
              for r in frame.itertuples()]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
