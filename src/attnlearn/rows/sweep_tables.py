"""A kept sweep as Markdown (docs/sweeps.md): each value's columns as mean [95% CI] and the 95%
prediction interval of one more replicate, the trend over the replicates, and the sweep's plan,
recomputed with this commit's code from the sweep's per-replicate table.

    python paper_rows/sweep_tables.py reproduction/sweeps/lexical
    python paper_rows/sweep_tables.py reproduction/sweeps/lexical --figure docs/figures/sweep_lexical.png

The folder holds what rule sweep_table wrote (`sweep_<name>_replicates.parquet`, and
`sweep_<name>_plan.parquet` where the sweep has a plan: its status, confirmatory or exploratory,
is the run's, which git decided against the sweep's first training), `sweep.json`, the sweep as
the config resolved it (name, base, key, values, replicates, plan, datasets) with how it was run,
and, for a synthetic sweep, the tables rule's `gold_agreement.parquet` (replicate 1's runs).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.rows import REPO

from attnlearn.agreement import sweep as S
from attnlearn.agreement.plans import evaluate, load_plan
from attnlearn.reporting.sweep_markdown import blocked_lines, exploratory_gold, plan_markdown, sweep_markdown

# the columns the page shows, the plans' first; the rest are in the pipeline's sweep_<name>.md
SHOWN = ["agr_alpha_xi_uniform", "agr_alpha_gold", "random_baseline", "agr_xi_proxy_xi_uniform",
         "agr_grad_xi_uniform", "agr_alpha_xi_standard", "best_perf"]


def read(folder: Path) -> tuple[dict, pd.DataFrame, pd.DataFrame | None]:
    sweep = json.loads((folder / "sweep.json").read_text())
    reps = pd.read_parquet(folder / f"sweep_{sweep['name']}_replicates.parquet")
    plan = folder / f"sweep_{sweep['name']}_plan.parquet"
    return sweep, reps, pd.read_parquet(plan) if plan.is_file() else None


def blocked_slope(reps: pd.DataFrame, column: str) -> tuple[float, float, float, float, int]:
    """The trend of ``column`` on the value with the replicate as a block: OLS with one intercept
    per replicate number (replicate R runs the same seeds and the same sentences at every value,
    so its values are not independent across values). (slope, CI low, CI high, p, df)."""
    g = reps[["value", "replicate", column]].dropna()
    blocks = pd.get_dummies(g["replicate"], dtype=float).to_numpy()
    x = np.column_stack([g["value"].to_numpy(dtype=float), blocks])
    y = g[column].to_numpy(dtype=float)
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    df = len(y) - x.shape[1]
    sigma2 = float(((y - x @ coef) ** 2).sum()) / df
    se = float(np.sqrt(sigma2 * np.linalg.inv(x.T @ x)[0, 0]))
    half = stats.t.ppf(0.975, df) * se
    p = float(2 * stats.t.sf(abs(coef[0]) / se, df)) if se > 0 else float("nan")
    return float(coef[0]), float(coef[0] - half), float(coef[0] + half), p, df


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a kept sweep: sweep.json and rule sweep_table's tables")
    ap.add_argument("--figure", type=Path, help="also draw the sweep (every column against the value) into this PNG")
    args = ap.parse_args(argv)
    sweep, reps, kept_plan = read(args.folder)
    table, trend = S.pooled(reps), S.trend(reps)
    shown = [c for c in SHOWN if reps[c].notna().any()]
    print(sweep_markdown(sweep, table, trend, shown))
    if kept_plan is not None and sweep.get("plan"):
        status = str(kept_plan["status"].iloc[0])
        plan = load_plan(REPO / sweep["plan"])
        print(plan_markdown(sweep["plan"], status, kept_plan["why"].iloc[0],
                            evaluate(plan, reps, confirmatory=status == "confirmatory")))
        columns = list(dict.fromkeys(c for t in plan["tests"] for c in t["columns"] if c != "value"))
        print(blocked_lines([(c, *blocked_slope(reps, c)) for c in columns]))
    gold = args.folder / "gold_agreement.parquet"
    if gold.is_file():
        print(exploratory_gold(sweep, pd.read_parquet(gold)))
    if args.figure:
        from attnlearn.reporting.sweep_figure import sweep_figure

        sweep_figure(reps, table, trend, sweep["key"], args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
