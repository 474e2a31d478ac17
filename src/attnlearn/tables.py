"""Paper tables derived from the long-form agreement and performance tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .compare import best_step

TABLE2_COLUMNS = ["dataset", "task", "perf_metric", "agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform",
                  "agr_grad_xi_uniform", "agr_alpha_xi_standard", "random_baseline", "ctx_perf_xi_uniform",
                  "ctx_perf_xi_standard", "best_perf"]


def _select(agr, metric="agreement", **where):
    rows = agr[agr["metric"] == metric]
    for col, val in where.items():
        rows = rows[rows[col] == val]
    return rows


def curve(agr, metric="agreement", **where) -> pd.Series:
    """Agreement by b_step, averaged over runs (e.g. the B seeds)."""
    return _select(agr, metric, **where).groupby("b_step")["value"].mean().sort_index()


def contextualized(value: float, agr_curve: pd.Series, perf_curve: pd.Series) -> float:
    """Comparison runs' mean performance at the first step where C(step) > value (paper eq. 11)."""
    above = agr_curve[agr_curve > value]
    if above.empty or np.isnan(value):
        return float("nan")
    return float(perf_curve.loc[above.index[0]])


def table2_row(dataset: str, task: str, agr: pd.DataFrame, perf: pd.DataFrame, metric: str = "agreement") -> dict:
    """One row of Table 2; ``metric="kendall_tau"`` gives the appendix variant."""
    a_perf = perf[perf["role"] == "A"]
    star = best_step(a_perf.reset_index(drop=True))
    base = dict(a_role="A", a_step=star)
    vs_uniform = _select(agr, metric, a_measure="alpha", b_measure="xi", b_role="U", **base)
    best = vs_uniform.loc[vs_uniform["value"].idxmax()] if len(vs_uniform) else None

    def peak(**where):
        c = curve(agr, metric, **where)
        return float(c.max()) if len(c) else float("nan")

    agr_alpha_xi_standard = peak(a_measure="alpha", b_measure="xi", b_role="B", **base)
    c_alpha_b = curve(agr, metric, a_measure="alpha", b_measure="alpha", b_role="B", **base)
    b_perf = perf[perf["role"] == "B"].groupby("step")["value"].mean()
    agr_alpha_xi_uniform = float(best["value"]) if best is not None else float("nan")
    return {
        "dataset": dataset, "task": task, "perf_metric": a_perf["metric"].iloc[0],
        "agr_alpha_xi_uniform": agr_alpha_xi_uniform,
        "agr_xi_proxy_xi_uniform": peak(a_measure="xi_px", b_measure="xi", b_role="U"),
        "agr_grad_xi_uniform": peak(a_measure="grad", b_measure="xi", b_role="U", **base),
        "agr_alpha_xi_standard": agr_alpha_xi_standard,
        "random_baseline": float(best["baseline"]) if best is not None else float("nan"),
        "ctx_perf_xi_uniform": contextualized(agr_alpha_xi_uniform, c_alpha_b, b_perf),
        "ctx_perf_xi_standard": contextualized(agr_alpha_xi_standard, c_alpha_b, b_perf),
        "best_perf": float(a_perf["value"].max()),
    }


def table2(agr: pd.DataFrame, perf: pd.DataFrame, tasks: dict[str, str], metric: str = "agreement") -> pd.DataFrame:
    rows = [table2_row(d, tasks[d], agr[agr["dataset"] == d], perf[perf["dataset"] == d], metric)
            for d in tasks if (agr["dataset"] == d).any()]
    return pd.DataFrame(rows, columns=TABLE2_COLUMNS)


TABLE10_COLUMNS = ["dataset", "agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]


def table10(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 10: A(alpha^frozen, alpha*) beside A(xi^uf, alpha*), each its maximum
    over the run's checkpoints: attention learned alone vs what the uniform model knows."""
    rows = []
    for dataset, d in agr.groupby("dataset"):
        star = best_step(perf[(perf["dataset"] == dataset) & (perf["role"] == "A")].reset_index(drop=True))
        vs_star = _select(d, b_measure="alpha", b_role="A", b_step=star)

        def peak(role, measure):
            v = vs_star[(vs_star["a_role"] == role) & (vs_star["a_measure"] == measure)]["value"]
            return float(v.max()) if len(v) else float("nan")

        rows.append({"dataset": dataset, "agr_alpha_frozen_alpha_star": peak("F", "alpha"),
                     "agr_xi_uniform_alpha_star": peak("U", "xi")})
    return pd.DataFrame(rows, columns=TABLE10_COLUMNS)


def gold_table(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Agreement with the gold links: alpha* and the norm-based weights of A at its best step,
    xi^uf (its best step), xi^px, counts."""
    rows = []
    gold = agr[agr["b_role"] == "G"]
    for dataset, g in gold.groupby("dataset"):
        star = best_step(perf[(perf["dataset"] == dataset) & (perf["role"] == "A")].reset_index(drop=True))
        at_star = g[(g["a_role"] == "A") & (g["a_step"] == star)]
        picks = {"alpha_star": at_star[at_star["a_measure"] == "alpha"],
                 "norm_star": at_star[at_star["a_measure"] == "norm"],
                 "xi_uniform": g[g["a_role"] == "U"], "xi_proxy": g[g["a_measure"] == "xi_px"],
                 "count_table": g[g["a_measure"] == "count"]}
        for name, sel in picks.items():
            for metric, m in sel.groupby("metric"):
                top = m.loc[m["value"].idxmax()]
                rows.append({"dataset": dataset, "measure": name, "metric": metric, "step": int(top["a_step"]),
                             "value": float(top["value"]), "baseline": float(top["baseline"])})
    return pd.DataFrame(rows, columns=["dataset", "measure", "metric", "step", "value", "baseline"])


def to_markdown(df: pd.DataFrame) -> str:
    """A GitHub Markdown table, fractions shown as percentages with one decimal."""
    shown = df.copy()
    for col in shown.columns:
        if shown[col].dtype.kind == "f":
            shown[col] = (100 * shown[col]).round(1)
    cells = [[str(v) for v in row] for row in shown.itertuples(index=False)]
    lines = ["| " + " | ".join(shown.columns) + " |", "|" + "---|" * len(shown.columns)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in cells]) + "\n"


def markdown_report(sections: dict[str, pd.DataFrame]) -> str:
    """All tables for people: a heading and a table per section (values in percent)."""
    return "\n".join(f"## {title}\n\n{to_markdown(df)}" for title, df in sections.items())
