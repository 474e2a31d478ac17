"""A kept sweep as Markdown for docs/sweeps.md (sweep_tables.py): each value's columns as mean
[95% CI] and one more replicate's 95% prediction interval, the trend over the replicates, the
sweep's plan with the same slopes blocked by replicate, and the exploratory gold agreement. The
pooled table, the trend, the plan's results and the slopes come from attnlearn.rows.sweep_tables
and agreement.sweep; here they are only written."""

from __future__ import annotations

import pandas as pd

from attnlearn.agreement import sweep as S
from attnlearn.agreement.readable import to_markdown


def sweep_markdown(sweep: dict, table: pd.DataFrame, trend: pd.DataFrame, shown: list[str]) -> str:
    """The sweep named, then its ``shown`` columns per value (sweep.pooled's ``table``) as mean
    [95% CI] and as the 95% prediction interval, then their trend over the replicates."""
    rows = trend.set_index("column").loc[shown].reset_index()
    return "\n".join([
        f"Sweep `{sweep['name']}`: `{sweep['key']}` of `{sweep['base']}`, {sweep['replicates']} replicates per "
        f"value; n = {sweep['replicates']} in every cell unless written.\n",
        "Mean [95% CI of the mean], percent:\n", to_markdown(S.wide(sweep, table, shown, "ci")),
        "95% prediction interval of one more replicate (same examples), percent:\n",
        to_markdown(S.wide(sweep, table, shown, "pi")),
        "Trend over the replicates (not the means): OLS slope in points per unit of the value [95% CI], "
        "Pearson's r [95% CI], their p; Spearman's rho (p):\n", to_markdown(S.trend_cells(rows))])


def plan_markdown(name: str, status: str, why: str, plan: pd.DataFrame) -> str:
    """The sweep's plan ``name`` read as its run was (``status``, ``why``): each test's r [95% CI],
    p alone and under Holm, and verdict (agreement.plans.evaluate's ``plan``)."""
    return "\n".join([f"Plan `{name}` ({status}: {why}), one Holm family:\n", to_markdown(pd.DataFrame({
        "test": plan["test"], "n": plan["n"],
        "r [95% CI]": [f"{e:+.2f} [{lo:+.2f}, {hi:+.2f}]" for e, lo, hi in
                       zip(plan["estimate"], plan["ci_low"], plan["ci_high"])],
        "p": [f"{p:.2g}" for p in plan["p_value"]], "p (Holm)": [f"{p:.2g}" for p in plan["p_holm"]],
        "verdict": plan["verdict"]}))])


def blocked_lines(slopes: list[tuple[str, float, float, float, float, int]]) -> str:
    """The plan's columns' slopes with the replicate as a block (column, slope, CI low, CI high,
    p, df: sweep_tables.blocked_slope), beside the table's, which read the replicates as independent."""
    lines = ["The same slopes with the replicate as a block (each replicate's seeds and sentences recur at "
             "every value, so its values across values are not independent: OLS with an intercept per "
             "replicate; the plan's tests read the replicates as independent, and this says whether the "
             "design changes their reading):", ""]
    for column, slope, low, high, p, df in slopes:
        lines.append(f"- {S.LABELS.get(column, column)}: "
                     f"{S.slope_cell(slope, low, high)} points per unit, p = {p:.2g} ({df} df)")
    return "\n".join(lines) + "\n"


def exploratory_gold(sweep: dict, gold: pd.DataFrame) -> str:
    """The run's gold_agreement table (the tables rule's: replicate 1's runs alone) per value: how
    well alpha*, xi^uf, xi^px and the count table find the gold links. One run each, no interval:
    exploratory, outside the plan."""
    g = gold[gold["metric"] == "agreement"].pivot(index="dataset", columns="measure", values="value")
    names = {"alpha_star": "α*", "xi_uniform": "ξ^uf", "xi_proxy": "ξ^px", "count_table": "count table"}
    frame = pd.DataFrame({sweep["key"]: [str(v) for v in sweep["values"]],
                          **{label: [g.loc[d, m] if d in g.index and m in g else float("nan")
                                     for d in sweep["datasets"]] for m, label in names.items()}})
    return ("Exploratory (replicate 1's runs only, one value each, no interval; outside the plan): agreement "
            "with the gold links, percent:\n\n" + to_markdown(frame))
