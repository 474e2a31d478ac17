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


def curve(agr, **where) -> pd.Series:
    """Agreement by b_step, averaged over runs (e.g. the B seeds)."""
    return _select(agr, **where).groupby("b_step")["value"].mean().sort_index()


def contextualized(value: float, agr_curve: pd.Series, perf_curve: pd.Series) -> float:
    """Comparison runs' mean performance at the first step where C(step) > value (paper eq. 11)."""
    above = agr_curve[agr_curve > value]
    if above.empty or np.isnan(value):
        return float("nan")
    return float(perf_curve.loc[above.index[0]])


def table2_row(dataset: str, task: str, agr: pd.DataFrame, perf: pd.DataFrame) -> dict:
    a_perf = perf[perf["role"] == "A"]
    star = best_step(a_perf.reset_index(drop=True))
    base = dict(a_role="A", a_step=star)
    vs_uniform = _select(agr, a_measure="alpha", b_measure="xi", b_role="U", **base)
    best = vs_uniform.loc[vs_uniform["value"].idxmax()] if len(vs_uniform) else None

    def peak(**where):
        c = curve(agr, **where)
        return float(c.max()) if len(c) else float("nan")

    agr_alpha_xi_standard = peak(a_measure="alpha", b_measure="xi", b_role="B", **base)
    c_alpha_b = curve(agr, a_measure="alpha", b_measure="alpha", b_role="B", **base)
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


def table2(agr: pd.DataFrame, perf: pd.DataFrame, tasks: dict[str, str]) -> pd.DataFrame:
    rows = [table2_row(d, tasks[d], agr[agr["dataset"] == d], perf[perf["dataset"] == d])
            for d in tasks if (agr["dataset"] == d).any()]
    return pd.DataFrame(rows, columns=TABLE2_COLUMNS)


def gold_table(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Agreement with the gold links: alpha* (A's best step), xi^uf (its best step), xi^px, counts."""
    rows = []
    gold = agr[agr["b_role"] == "G"]
    for dataset, g in gold.groupby("dataset"):
        star = best_step(perf[(perf["dataset"] == dataset) & (perf["role"] == "A")].reset_index(drop=True))
        picks = {"alpha_star": g[(g["a_role"] == "A") & (g["a_step"] == star)],
                 "xi_uniform": g[g["a_role"] == "U"], "xi_proxy": g[g["a_measure"] == "xi_px"],
                 "count_table": g[g["a_measure"] == "count"]}
        for name, sel in picks.items():
            for metric, m in sel.groupby("metric"):
                top = m.loc[m["value"].idxmax()]
                rows.append({"dataset": dataset, "measure": name, "metric": metric, "step": int(top["a_step"]),
                             "value": float(top["value"]), "baseline": float(top["baseline"])})
    return pd.DataFrame(rows, columns=["dataset", "measure", "metric", "step", "value", "baseline"])


def to_markdown(df: pd.DataFrame, percent: bool = True) -> str:
    shown = df.copy()
    for col in shown.columns:
        if percent and shown[col].dtype.kind == "f":
            shown[col] = (100 * shown[col]).round(1)
    return shown.to_markdown(index=False)
