"""A kept transfer test as Markdown (docs/transfer.md): its confirmatory tests' verdicts first,
then the early and last responses per start, mean [95% CI] over the seeds, the plan's tests
recomputed with this commit's code from the per-seed table, confirmatory or exploratory as the
run's plan table says (git decided it against the test's first training when rule
transfer_table ran), and, exploratory, each start minus k = 0 seed by seed.

    python paper_rows/transfer_tables.py reproduction/transfer/synthetic
    python paper_rows/transfer_tables.py reproduction/transfer/synthetic --figure docs/figures/transfer_synthetic.png

The folder holds what rule transfer_table wrote (`transfer_curves.parquet`,
`transfer_responses.parquet`, `transfer_seeds.parquet`, `transfer_plan.parquet`) and
`transfer.json`: the config's transfer section (sweep, window, plan), the sweep's values, and how
the test was run (command, commit, times).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from attnlearn.agreement import transfer as T
from attnlearn.agreement.plans import evaluate, load_plan
from attnlearn.reporting.findings_markdown import sweep_findings
from attnlearn.reporting.transfer_page import contrast_lines, markdown
from attnlearn.rows import REPO


def plan_rows(folder: Path, info: dict, seeds: pd.DataFrame) -> tuple[pd.DataFrame, str]:
    """The plan's tests on the kept seeds, with the status the run recorded."""
    kept = pd.read_parquet(folder / "transfer_plan.parquet")
    if not info.get("plan") or kept.empty:
        return kept, ""
    status, why = str(kept["status"].iloc[0]), str(kept["why"].iloc[0])
    rows = evaluate(load_plan(REPO / info["plan"]), seeds, confirmatory=status == "confirmatory")
    return rows, f"{status}: {why}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a kept transfer test: transfer.json and rule transfer_table's tables")
    ap.add_argument("--figure", type=Path, help="also draw the curves into this PNG")
    args = ap.parse_args(argv)
    info = json.loads((args.folder / "transfer.json").read_text())
    responses = pd.read_parquet(args.folder / "transfer_responses.parquet")
    plan, status = plan_rows(args.folder, info, pd.read_parquet(args.folder / "transfer_seeds.parquet"))
    answer = sweep_findings(args.folder.name, plan, what="transfer test") if len(plan) else []
    print("\n".join(answer + ["", ""] if answer else []) + markdown(T.pooled(responses), plan, status, info["sweep"],
                                                                info["window"], title=False))
    print("\n".join(contrast_lines(T.against_k0(responses))))
    if args.figure:
        from attnlearn.reporting.transfer_figure import figure

        figure(pd.read_parquet(args.folder / "transfer_curves.parquet"), info["window"], args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
