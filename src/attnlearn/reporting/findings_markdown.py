"""The verdicts as Markdown: an analysis plan's tests over a kept row (plan_tests.py) and the
results page's findings and summary (findings.py), each written from the claims, plan results
and intervals attnlearn.rows read and tested, so that no verdict on a page is typed by hand."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.agreement.readable import interval
from attnlearn.agreement.sweep import plan_cell
from attnlearn.reporting.row_markdown import HEADERS_OF, dataset_name

VERDICT_ORDER = ("holds", "fails", "undetermined", "undefined")
# each of the paper's claims as the summary says it
CLAIM_WORDS = {"alpha_xi_uniform_above_baseline": "A(α\\*, ξ^uf) beats the random baseline",
               "proxy_approximates_uniform_probe": "A(ξ^px, ξ^uf) beats it",
               "grad_xi_uniform_above_baseline": "A(g\\*, ξ^uf) beats it",
               "uniform_probe_comparable_to_standard": "A(α\\*, ξ^uf) is comparable to A(α\\*, ξ^B) (above-chance "
                                                       "ratio above 0.5)",
               "contextualized_performance_nontrivial": "the contextualized agreement is non-trivial (above an "
                                                        "input-blind predictor)"}


def no_spread(r) -> bool:
    """Whether a test's n >= 2 values are all the same up to rounding (statistics.constant: its
    t interval is then the point): statistics.t_test reads the mean as exact, p 0 off the null,
    which a page says rather than printing an interval [x, x] and a bare p of 0."""
    return r.n >= 2 and r.kind != "correlation" and r.ci_low == r.ci_high


def estimate_text(r) -> str:
    """A test's estimate [95% CI]: r to two decimals, a share in percent, a signed quantity (a
    difference, a mean tested against 0: readable.signed) in points."""
    if r.n < 2:
        return f"{r.estimate * (1 if r.kind == 'correlation' else 100):+.1f} (one replicate, no interval)"
    if no_spread(r):
        return f"{100 * r.estimate:+.1f} (all {r.n} replicates the same to rounding: no spread, no interval)"
    return plan_cell(r.kind, r.n, r.estimate, r.ci_low, r.ci_high, getattr(r, "null_value", None))


def p_text(r) -> str:
    """A test's p: '-' below two replicates, and said as such where the values have no spread."""
    if r.n < 2 or np.isnan(r.p_value):
        return "-"
    return f"{r.p_value:.2g} (no spread)" if no_spread(r) else f"{r.p_value:.2g}"


def result_lines(results: pd.DataFrame, plan: dict, interim: bool = False) -> list[str]:
    """One table row per test: estimate [95% CI], p, and where confirmatory Holm's p and verdict
    (``interim``: confirmatory replicates short of the plan's count, read with no verdict)."""
    lines = ["| test | n | estimate [95% CI] | p | p, Holm | verdict |", "|---" * 6 + "|"]
    for t, r in zip(plan["tests"], results.itertuples()):
        est = estimate_text(r)
        holm = ("- (interim)" if interim else f"{r.p_holm:.2g}" if r.status == "confirmatory"
                else "- (exploratory)")
        p = p_text(r)
        verdict = "interim: no verdict" if interim else r.verdict or "exploratory: no verdict"
        lines.append(f"| {t['id']}: {t.get('says', '')} | {r.n} | {est} | {p} | {holm} | {verdict} |")
    return lines


def plan_heading(plan: dict, where, marks: list[tuple[str, str, str]]) -> list[str]:
    """A plan's reading opened: the plan (its file ``where``), its family, and each kept folder
    with its status and why (``marks``: name, status, why)."""
    family = "its one test is a Holm family of one" if len(plan["tests"]) == 1 else \
        f"its {len(plan['tests'])} tests are one Holm family"
    lines = [f"Plan `{where}` ({plan['name']}: {plan.get('says', '')}) on {dataset_name(plan['dataset'])}; "
             f"{family} at alpha {plan['alpha']}.", ""]
    return lines + [f"- `{name}`: {status} ({why})" for name, status, why in marks]


def reading_lines(label: str, folders: list[str], results: pd.DataFrame | None, plan: dict, n: int = 0,
                  due: int | None = None) -> list[str]:
    """One reading of a plan (``label``: confirmatory or exploratory) over the kept ``folders``
    (by name) and their ``n`` independent replicates; ``due``: the plan's count of replicates
    where this reading is an interim look, short of it."""
    if not folders:
        return ["", f"{label}: no kept folder."]
    if due is not None:
        label = (f"Interim look ({n} of the plan's {due} replicates; its verdict is read once, "
                 f"over all {due}; no verdict before)")
    return ["", f"{label}, over the {n} independent replicates of {', '.join(f'`{f}`' for f in folders)}:", "",
            *result_lines(results, plan, due is not None)]


def claim_findings(claims: pd.DataFrame, where) -> list[str]:
    """One line per claim of the family (fixed in the file ``where``): where it holds, fails, is
    undetermined or undefined, each row with its estimate [95% CI] and Holm p in the family."""
    status = (f"**Confirmatory** (the paper's claim; its statistic and threshold committed before every kept "
              f"replicate; Holm over the {int(claims['p_value'].notna().sum())} claims of `{where}`)")
    lines = []
    for claim, g in claims.groupby("claim", sort=False):
        scale = 1 if claim == "uniform_probe_comparable_to_standard" else 100
        fmt = (lambda v: f"{v:.2f}") if scale == 1 else (lambda v: f"{100 * v:+.1f}")
        parts = []
        for verdict in VERDICT_ORDER:
            rows = g[g["verdict_holm"] == verdict]
            if rows.empty:
                continue
            each = [f"{dataset_name(r.dataset)}" + ("" if r.n == 0 else
                    f" ({fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}], Holm p {r.p_holm:.2g})")
                    for r in rows.itertuples()]
            parts.append(f"**{verdict}** in {', '.join(each)}")
        first = g.iloc[0]
        threshold = f"{first['threshold']:.2f}" if scale == 1 else f"{100 * first['threshold']:.0f}"
        lines.append(f"- {status}: {first['statistic']} above {threshold}: {'; '.join(parts)}.")
    return lines


def plan_findings(plan: dict, where, results: pd.DataFrame | None, n: int, interim: bool) -> list[str]:
    """A plan's confirmatory reading (plan_tests.confirmatory) as findings, one line per test;
    one line saying so where no replicate trained under the plan (the file ``where``) is kept."""
    family = "a family of one" if len(plan["tests"]) == 1 else f"one Holm family of {len(plan['tests'])}"
    if results is None:
        return [f"- **Planned** (`{where}`, committed; no replicate trained under it is kept yet): {plan['says']}."]
    lines = []
    for t, r in zip(plan["tests"], results.itertuples()):
        head = (f"**Interim look** (`{where}`: {n} of its replicates kept; no verdict before all)" if interim else
                f"**Confirmatory** (`{where}`, committed before the {n} replicates it reads; {family})")
        verdict = "no verdict" if interim else f"Holm p {r.p_holm:.2g}: **{r.verdict}**"
        p = "" if np.isnan(r.p_value) else f", p {p_text(r)}"  # one replicate: no test, so no p
        lines.append(f"- {head}, {dataset_name(plan['dataset'])}: {t.get('says', t['id'])}: "
                     f"{estimate_text(r)}{p}; {verdict}.")
    return lines


def sweep_findings(sweep: str, table: pd.DataFrame, what: str = "sweep") -> list[str]:
    """A planned sweep's (``what``: or transfer test's) confirmatory tests, from its kept plan
    table, as findings."""
    family = "a family of one" if len(table) == 1 else f"one Holm family of {len(table)}"
    lines = []
    for r in table.itertuples():
        if r.status != "confirmatory":
            continue
        p_holm = "" if np.isnan(r.p_holm) else f"Holm p {r.p_holm:.2g}: "
        lines.append(f"- **Confirmatory** (`docs/plans/{r.plan}.yaml`, committed before the {what} trained; "
                     f"{family}), {what} {sweep}: {r.says}: {estimate_text(r)}, p {p_text(r)}; "
                     f"{p_holm}**{r.verdict}**.")
    return lines


def summary_text(claims: pd.DataFrame, planned: dict[str, int], against: pd.DataFrame) -> str:
    """The page's answer in a paragraph: each claim's verdicts over the family's rows, Table 2's
    paper values inside or outside our intervals (``against``: the interval_table rows that read
    a paper value), and how many planned tests have each verdict (``planned``)."""
    rows = list(dict.fromkeys(claims["dataset"]))
    said = []
    for claim, g in claims.groupby("claim", sort=False):
        by = {v: [dataset_name(d) for d in g.loc[g["verdict_holm"] == v, "dataset"]] for v in VERDICT_ORDER}
        parts = [f"{v} in " + ("every row" if len(names) == len(rows) else " and ".join(names))
                 for v, names in by.items() if names]
        said.append(f"{CLAIM_WORDS[claim]}: {', '.join(parts)}")
    inside = int(against["paper_in_pi"].astype(bool).sum())
    outside = [f"{dataset_name(r.dataset)}'s {HEADERS_OF[r.column]} "
               f"({interval(r.mean, r.pi_low, r.pi_high, against=r.paper)} against {100 * r.paper:.2f})"
               for r in against[~against["paper_in_pi"].astype(bool)].itertuples()]
    return (f"The paper's sentences on Table 2, over {', '.join(map(dataset_name, rows))} (one Holm family of "
            f"{int(claims['p_value'].notna().sum())} claims): " + "; ".join(said)
            + f". Of the paper's Table 2 values, {inside} lie inside our 95% prediction intervals (the seeds' "
            f"and the examples' error; inside says the replicates cannot tell the paper's value from ours), "
            f"{len(outside)} outside" + (f": {', '.join(outside)}" if outside else "")
            + f". The tests planned before their replicates trained: "
            f"{', '.join(f'{n} {v}' for v, n in planned.items())} (the findings below).")
