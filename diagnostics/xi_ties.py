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
baseline as the tables compute it (any k, ties counted). With ``--alpha-run R --alpha-step S``
also A(alpha, xi) of run R's attention at step S against each checkpoint's xi, as eq. 10 counts
it (ties in favour) and with ties split (a tie broken uniformly at random: the hit's expected
value), and the baseline with ties split (k / length): how much of A the ties make. The last
column breaks ties at the top of alpha instead (alpha's argmax, eq. 10's first tied position,
against a tied position drawn at random), for a measure that ties there too: the proxy's xi^px,
``--alpha-run proxy-s0 --alpha-measure xi_px --alpha-step <its step>``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq

from attnlearn.agreement.metric import agreement_rows, align, baseline_rows, load_measure, top_k


def ties(values: np.ndarray) -> dict:
    """One checkpoint's rows ([rows, positions], NaN-padded) summarised."""
    top = np.nanmax(values, axis=1)
    lengths = (~np.isnan(values)).sum(1)
    return {"rows": len(values), "top tied": float(((values == top[:, None]).sum(1) >= 2).mean()),
            "top exactly 0": float((top == 0).mean()), "1 / length": float((1 / lengths).mean()),
            "baseline": float(baseline_rows(values).mean())}


def split_agreement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, eq. 10's hit with b's ties broken uniformly at random (its expected value): a's
    argmax lies among c positions tied in b with `above` strictly higher, so its rank is above +
    1..c, each as likely, and it is a hit with probability clip((k - above) / c, 0, 1)."""
    at = b[np.arange(len(b)), np.nanargmax(a, axis=1)]
    above = (b > at[:, None]).sum(1)
    tied = (b == at[:, None]).sum(1)
    return np.clip((top_k((~np.isnan(b)).sum(1)) - above) / tied, 0, 1)


def top_split_agreement(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row, eq. 10's hit (b's ties counted) averaged over the positions tied at a's top: the
    hit's expected value when a's argmax is drawn among them rather than taken first."""
    tied = a == np.nanmax(a, axis=1, keepdims=True)
    above = (b[:, None, :] > b[:, :, None]).sum(2)  # [row, j]: positions of b strictly above b_j
    hit = (above < top_k((~np.isnan(b)).sum(1))[:, None]) & tied
    return hit.sum(1) / tied.sum(1)


def against(alpha, xi) -> dict:
    """A(alpha, xi) on their shared rows, ties counted (eq. 10) and split, and the split baseline."""
    a, b = align(alpha, xi)
    n = (~np.isnan(b)).sum(1)
    return {"A, ties count": float(agreement_rows(a, b).mean()), "A, ties split": float(split_agreement(a, b).mean()),
            "baseline, ties split": float((top_k(n) / n).mean()),
            "A, alpha's top ties split": float(top_split_agreement(a, b).mean())}


def tie_table(probes: Path, measure: str, alpha=None) -> pd.DataFrame:
    """Per checkpoint of ``probes``: ties() of its measure and, with ``alpha`` (a Measure), against()."""
    table = pq.read_table(probes, columns=["step", "example", "t", measure])
    steps = sorted(pc.unique(table["step"]).to_pylist())
    rows = []
    for s in steps:
        xi = load_measure(table, measure, s)
        rows.append({"step": s, **ties(xi.values), **(against(alpha, xi) if alpha is not None else {})})
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a run's results folder")
    ap.add_argument("dataset")
    ap.add_argument("--run", default="uniform-s1", help="the probed run (default: uniform-s1, whose xi is xi^uf)")
    ap.add_argument("--measure", default="xi", help="the probe table's measure column (default: xi)")
    ap.add_argument("--alpha-run", help="also A(alpha, xi) with this run's attention (e.g. standard-s1, run A) ...")
    ap.add_argument("--alpha-step", type=int, help="... at this checkpoint (its best: the row's readings name it)")
    ap.add_argument("--alpha-measure", default="alpha", help="that run's measure (default: alpha; the proxy's: xi_px)")
    args = ap.parse_args(argv)
    probes = args.results / "probes" / args.dataset
    missing = [p for p in (args.run, args.alpha_run) if p and not (probes / f"{p}.parquet").is_file()]
    if missing or (args.alpha_run is None) != (args.alpha_step is None):
        print(f"no probe table {probes / missing[0]}.parquet" if missing else
              "--alpha-run and --alpha-step go together", file=sys.stderr)
        return 2
    alpha = None
    if args.alpha_run:
        alpha = load_measure(pq.read_table(probes / f"{args.alpha_run}.parquet",
                                           columns=["step", "example", "t", args.alpha_measure]),
                             args.alpha_measure, args.alpha_step)
    frame = tie_table(probes / f"{args.run}.parquet", args.measure, alpha)
    shares = [c for c in frame.columns if c not in ("step", "rows")]
    lines = ["| step | rows | " + " | ".join(f"{c} (%)" for c in shares) + " |", "|---" * (2 + len(shares)) + "|"]
    lines += [f"| {r['step']:,} | {r['rows']:,} | " + " | ".join(f"{100 * r[c]:.2f}" for c in shares) + " |"
              for r in frame.to_dict("records")]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
