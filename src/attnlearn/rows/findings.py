"""The results page's findings, printed from the verdicts rather than written by hand.

    python paper_rows/findings.py              # the findings, one line each
    python paper_rows/findings.py --summary    # the page's answer, a paragraph
    python paper_rows/findings.py --plan docs/plans/multi30k_epochs20.yaml   # one plan's lines (a row page's lead)

One line per confirmatory finding: each of the paper's claims over the rows of its one Holm
family (docs/plans/families/paper_claims.yaml, family.family_claims), then each
analysis plan's tests (docs/plans/*.yaml) as plan_tests.py reads them over the kept rows, then
each planned sweep's (the kept reproduction/sweeps/<name>/sweep_<name>_plan.parquet). Each with its
status, estimate, interval and verdict; a plan read before all its replicates are kept is an
interim look, with no verdict, and a plan with no replicate kept yet says so. Exploratory
readings have no verdict, so none is printed here: the page's prose gives them with their
intervals.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
from attnlearn.agreement.plans import load_plan
from attnlearn.agreement.pooling import pool
from attnlearn.agreement.replicates import interval_table
from attnlearn.reporting.findings_markdown import claim_findings, plan_findings, summary_text, sweep_findings
from attnlearn.reporting.row_markdown import NAMES
from attnlearn.rows import REPO
from attnlearn.rows.family import FAMILY, family_claims
from attnlearn.rows.kept import probed_examples, replicate_tables
from attnlearn.rows.transfer_tables import plan_rows
from attnlearn.rows.plan_tests import confirmatory


def claim_lines() -> list[str]:
    """One line per claim of the family: where it holds, fails, is undetermined or undefined."""
    return claim_findings(family_claims()[0], FAMILY.relative_to(REPO))


def plan_row(plan_path: Path) -> Path:
    """The kept row a plan reads: the one named as the plan where it pairs with another row
    (paired_with: its own row, beside that one), else the dataset's."""
    plan = load_plan(plan_path)
    return REPO / "reproduction/rows" / (plan["name"] if plan.get("paired_with") else plan["dataset"])


def plan_lines(plan_path: Path) -> list[str]:
    results, n, interim = confirmatory(plan_path, plan_row(plan_path))
    return plan_findings(load_plan(plan_path), plan_path.relative_to(REPO), results, n, interim)


def sweep_lines(kept: Path) -> list[str]:
    """A planned sweep's tests as its rule read them (the kept plan table)."""
    return [line for path in sorted(kept.glob("*/sweep_*_plan.parquet"))
            for line in sweep_findings(path.parent.name, pd.read_parquet(path))]


def transfer_lines(kept: Path) -> list[str]:
    """A kept transfer test's planned tests, with the status its rule recorded, recomputed as
    its page prints them (transfer_tables.plan_rows)."""
    lines = []
    for path in sorted(kept.glob("*/transfer_plan.parquet")):
        info = json.loads((path.parent / "transfer.json").read_text())
        plan, _ = plan_rows(path.parent, info, pd.read_parquet(path.parent / "transfer_seeds.parquet"))
        lines += sweep_findings(path.parent.name, plan, what="transfer test")
    return lines


def planned_tables() -> list[Path]:
    """The kept plan tables of the sweeps and transfer tests, which their rules read."""
    return sorted((REPO / "reproduction/sweeps").glob("*/sweep_*_plan.parquet")) + \
        sorted((REPO / "reproduction/transfer").glob("*/transfer_plan.parquet"))


def row_plans() -> list[Path]:
    """The plans read over kept rows (a sweep's plan is read by its rule: sweep_lines)."""
    return [p for p in sorted((REPO / "docs/plans").glob("*.yaml")) if load_plan(p)["dataset"] in NAMES]


def summary() -> str:
    """The page's answer in a paragraph: each claim's verdicts over the family's rows, Table 2's
    paper values inside or outside, and the plans' verdicts counted."""
    claims, members = family_claims()
    counts = {}
    for plan_path in row_plans():
        results, _, interim = confirmatory(plan_path, plan_row(plan_path))
        for v in ([] if results is None else ["interim"] * len(results) if interim else results["verdict"]):
            counts[v] = counts.get(v, 0) + 1
    for path in planned_tables():
        for v in pd.read_parquet(path).query("status == 'confirmatory'")["verdict"]:
            counts[v] = counts.get(v, 0) + 1
    return summary_text(claims, counts, table2_against_paper(members))


def table2_against_paper(members: dict[str, set[Path]]) -> pd.DataFrame:
    """The intervals (replicates.interval_table) over the family's rows that read one of the
    paper's Table 2 values: inside or outside ours (``paper_in_pi``)."""
    folders = sorted({f for fs in members.values() for f in fs})
    reps = pool(replicate_tables(folders))
    iv = interval_table(reps, probed_examples(folders))
    return iv[iv["column"].isin(TABLE2_VALUE_COLUMNS) & iv["paper"].notna() & iv["paper_in_pi"].notna()]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    what = ap.add_mutually_exclusive_group()
    what.add_argument("--summary", action="store_true", help="the results page's answer, a paragraph")
    what.add_argument("--plan", type=Path, help="one analysis plan's lines alone (docs/plans/<name>.yaml, "
                      "relative to the repository), as the full list prints them")
    args = ap.parse_args(argv)
    if args.summary:
        print(summary())
        return 0
    if args.plan is not None:
        path = (REPO / args.plan).resolve()
        if path not in row_plans():
            ap.error(f"--plan {args.plan}: not a plan read over a kept row (one of "
                     f"{', '.join(str(p.relative_to(REPO)) for p in row_plans())})")
        print("\n".join(plan_lines(path)))
        return 0
    lines = claim_lines()
    for plan_path in row_plans():
        lines += plan_lines(plan_path)
    lines += sweep_lines(REPO / "reproduction/sweeps") + transfer_lines(REPO / "reproduction/transfer")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
