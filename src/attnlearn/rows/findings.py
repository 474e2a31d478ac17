"""The results page's findings, printed from the verdicts rather than written by hand.

    python paper_rows/findings.py              # the findings, one line each
    python paper_rows/findings.py --summary    # the page's answer, a paragraph

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

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.rows import REPO
from attnlearn.rows.plan_tests import confirmatory, estimate_text
from attnlearn.rows.family import FAMILY, family_claims
from attnlearn.agreement.pooling import pool
from attnlearn.rows.kept import HEADERS_OF, NAMES, probed_examples

from attnlearn.agreement.readable import interval
from attnlearn.agreement.replicates import interval_table

from attnlearn.agreement.plans import load_plan

VERDICT_ORDER = ("holds", "fails", "undetermined", "undefined")


def claim_lines() -> list[str]:
    """One line per claim: where it holds, fails, is undetermined or undefined, each row with its
    estimate [95% CI] and Holm p in the family."""
    claims, _ = family_claims()
    tested = int(claims["p_value"].notna().sum())
    status = (f"**Confirmatory** (the paper's claim; its statistic and threshold committed before every kept "
              f"replicate; Holm over the {tested} claims of `{FAMILY.relative_to(REPO)}`)")
    lines = []
    for claim, g in claims.groupby("claim", sort=False):
        scale = 1 if claim == "uniform_probe_comparable_to_standard" else 100
        fmt = (lambda v: f"{v:.2f}") if scale == 1 else (lambda v: f"{100 * v:+.1f}")
        parts = []
        for verdict in VERDICT_ORDER:
            rows = g[g["verdict_holm"] == verdict]
            if rows.empty:
                continue
            each = [f"{NAMES.get(r.dataset, r.dataset)}" + ("" if r.n == 0 else
                    f" ({fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}], Holm p {r.p_holm:.2g})")
                    for r in rows.itertuples()]
            parts.append(f"**{verdict}** in {', '.join(each)}")
        first = g.iloc[0]
        threshold = f"{first['threshold']:.2f}" if scale == 1 else f"{100 * first['threshold']:.0f}"
        lines.append(f"- {status}: {first['statistic']} above {threshold}: {'; '.join(parts)}.")
    return lines


def plan_row(plan_path: Path) -> Path:
    """The kept row a plan reads: the one named as the plan where it pairs with another row
    (paired_with: its own row, beside that one), else the dataset's."""
    plan = load_plan(plan_path)
    return REPO / "reproduction/rows" / (plan["name"] if plan.get("paired_with") else plan["dataset"])


def plan_lines(plan_path: Path) -> list[str]:
    plan, row = load_plan(plan_path), plan_row(plan_path)
    rel = plan_path.relative_to(REPO)
    results, n, interim = confirmatory(plan_path, row)
    family = "a family of one" if len(plan["tests"]) == 1 else f"one Holm family of {len(plan['tests'])}"
    if results is None:
        return [f"- **Planned** (`{rel}`, committed; no replicate trained under it is kept yet): {plan['says']}."]
    lines = []
    for t, r in zip(plan["tests"], results.itertuples()):
        head = (f"**Interim look** (`{rel}`: {n} of its replicates kept; no verdict before all)" if interim else
                f"**Confirmatory** (`{rel}`, committed before the {n} replicates it reads; {family})")
        verdict = "no verdict" if interim else f"Holm p {r.p_holm:.2g}: **{r.verdict}**"
        lines.append(f"- {head}, {NAMES.get(plan['dataset'], plan['dataset'])}: {t.get('says', t['id'])}: "
                     f"{estimate_text(r)}, p {r.p_value:.2g}; {verdict}.")
    return lines


def sweep_lines(kept: Path) -> list[str]:
    """A planned sweep's tests as its rule read them (the kept plan table)."""
    lines = []
    for path in sorted(kept.glob("*/sweep_*_plan.parquet")):
        table = pd.read_parquet(path)
        family = "a family of one" if len(table) == 1 else f"one Holm family of {len(table)}"
        for r in table.itertuples():
            if r.status != "confirmatory":
                continue
            p_holm = "" if np.isnan(r.p_holm) else f"Holm p {r.p_holm:.2g}: "
            lines.append(f"- **Confirmatory** (`docs/plans/{r.plan}.yaml`, committed before the sweep trained; "
                         f"{family}), sweep {path.parent.name}: {r.says}: {estimate_text(r)}, p {r.p_value:.2g}; "
                         f"{p_holm}**{r.verdict}**.")
    return lines


def row_plans() -> list[Path]:
    """The plans read over kept rows (a sweep's plan is read by its rule: sweep_lines)."""
    return [p for p in sorted((REPO / "docs/plans").glob("*.yaml")) if load_plan(p)["dataset"] in NAMES]


CLAIM_WORDS = {"alpha_xi_uniform_above_baseline": "A(α\\*, ξ^uf) beats the random baseline",
               "proxy_approximates_uniform_probe": "A(ξ^px, ξ^uf) beats it",
               "grad_xi_uniform_above_baseline": "A(g\\*, ξ^uf) beats it",
               "uniform_probe_comparable_to_standard": "A(α\\*, ξ^uf) is comparable to A(α\\*, ξ^B) (above-chance "
                                                       "ratio above 0.5)",
               "contextualized_performance_nontrivial": "the contextualized agreement is non-trivial (above an "
                                                        "input-blind predictor)"}


def summary() -> str:
    """The page's answer in a paragraph: each claim's verdicts over the family's rows, Table 2's
    paper values inside or outside, and the plans' verdicts counted."""
    claims, members = family_claims()
    rows = list(dict.fromkeys(claims["dataset"]))
    said = []
    for claim, g in claims.groupby("claim", sort=False):
        by = {v: [NAMES.get(d, d) for d in g.loc[g["verdict_holm"] == v, "dataset"]] for v in VERDICT_ORDER}
        parts = [f"{v} in " + ("every row" if len(names) == len(rows) else " and ".join(names))
                 for v, names in by.items() if names]
        said.append(f"{CLAIM_WORDS[claim]}: {', '.join(parts)}")
    counts = {}
    for plan_path in row_plans():
        results, _, interim = confirmatory(plan_path, plan_row(plan_path))
        for v in ([] if results is None else ["interim"] * len(results) if interim else results["verdict"]):
            counts[v] = counts.get(v, 0) + 1
    for path in sorted((REPO / "reproduction/sweeps").glob("*/sweep_*_plan.parquet")):
        for v in pd.read_parquet(path).query("status == 'confirmatory'")["verdict"]:
            counts[v] = counts.get(v, 0) + 1
    planned = ", ".join(f"{n} {v}" for v, n in counts.items())
    inside, outside = table2_against_paper(members)
    return (f"The paper's sentences on Table 2, over {', '.join(NAMES.get(d, d) for d in rows)} (one Holm family of "
            f"{int(claims['p_value'].notna().sum())} claims): " + "; ".join(said)
            + f". Of the paper's Table 2 values, {inside} lie inside our 95% prediction intervals (the seeds' "
            f"and the examples' error; inside says the replicates cannot tell the paper's value from ours), "
            f"{len(outside)} outside" + (f": {', '.join(outside)}" if outside else "")
            + f". The tests planned before their replicates trained: {planned} (the findings below).")


def table2_against_paper(members: dict[str, set[Path]]) -> tuple[int, list[str]]:
    """How many of the paper's Table 2 values over the family's rows lie inside our prediction
    intervals, and which lie outside (the row's name, the column, ours and the paper's)."""
    folders = sorted({f for fs in members.values() for f in fs})
    reps = pool([pd.read_parquet(f / "table2_replicates.parquet") for f in folders])
    iv = interval_table(reps, probed_examples(folders))
    iv = iv[iv["column"].isin(HEADERS_OF) & iv["paper"].notna() & iv["paper_in_pi"].notna()]
    out = iv[~iv["paper_in_pi"].astype(bool)]
    return int(iv["paper_in_pi"].astype(bool).sum()), [
        f"{NAMES.get(r.dataset, r.dataset)}'s {HEADERS_OF[r.column]} ({interval(r.mean, r.pi_low, r.pi_high, against=r.paper)}"
        f" against {100 * r.paper:.2f})" for r in out.itertuples()]


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["--summary"]:
        print(summary())
        return 0
    lines = claim_lines()
    for plan_path in row_plans():
        lines += plan_lines(plan_path)
    lines += sweep_lines(REPO / "reproduction/sweeps")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
