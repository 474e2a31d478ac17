"""Paper tables derived from the long-form agreement and performance tables."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.agreement.compare import best_step, primary
from attnlearn.agreement.readable import to_markdown  # noqa: F401  (tables.to_markdown: the scripts')

TABLE2_COLUMNS = ["dataset", "task", "perf_metric", "agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform",
                  "agr_grad_xi_uniform", "agr_alpha_xi_standard", "random_baseline", "ctx_perf_xi_uniform",
                  "ctx_perf_xi_standard", "best_perf",
                  # the appendix tables' contextualized A(xi^px, xi^uf) and A(g*, xi^uf)
                  "ctx_perf_xi_proxy_xi_uniform", "ctx_perf_grad_xi_uniform"]


def select_rows(agr, metric="agreement", **where):
    rows = agr[agr["metric"] == metric]
    for col, val in where.items():
        rows = rows[rows[col] == val]
    return rows


def curve(agr, metric="agreement", **where) -> pd.Series:
    """Agreement by b_step, averaged over runs (e.g. the B seeds)."""
    return select_rows(agr, metric, **where).groupby("b_step")["value"].mean().sort_index()


def star_step(perf: pd.DataFrame, dataset: str) -> int:
    """The checkpoint of alpha*: run A's best validation step on ``dataset``."""
    return best_step(perf[(perf["dataset"] == dataset) & (perf["role"] == "A")])


def contextualized(value: float, agr_curve: pd.Series, perf_curve: pd.Series) -> float:
    """Comparison runs' mean performance at the first step where C(step) > value (paper eq. 11)."""
    above = agr_curve[agr_curve > value]
    if above.empty or np.isnan(value):
        return float("nan")
    return float(perf_curve.loc[above.index[0]])


def agreement_rows(star: int, xi_b_run: str | None = None) -> dict[str, dict]:
    """The agreement rows each of Table 2's agreement columns takes its maximum over, as
    ``select_rows`` conditions: alpha* and g* at alpha*'s step ``star``. A(alpha*, xi^uf) is the
    best row (its baseline is that row's); the others, the best b_step of the rows averaged
    over runs (``curve``)."""
    base = dict(a_role="A", a_step=star)
    xi_b = {"b_run": xi_b_run} if xi_b_run else {"b_role": "B"}
    return {"agr_alpha_xi_uniform": dict(a_measure="alpha", b_measure="xi", b_role="U", **base),
            "agr_xi_proxy_xi_uniform": dict(a_measure="xi_px", b_measure="xi", b_role="U"),
            "agr_grad_xi_uniform": dict(a_measure="grad", b_measure="xi", b_role="U", **base),
            "agr_alpha_xi_standard": dict(a_measure="alpha", b_measure="xi", **xi_b, **base)}


def table2_row(dataset: str, task: str, agr: pd.DataFrame, perf: pd.DataFrame, metric: str = "agreement",
               perf_metric: str | None = None, xi_b_run: str | None = None) -> dict:
    """One row of Table 2; ``metric="kendall_tau"`` gives the appendix variant, ``perf_metric="bleu"``
    the one with BLEU as the performance (alpha* at run A's best-BLEU checkpoint, as the
    appendix defines it; the agreement job compares it there too).

    A(alpha*, xi^B) is read from run ``xi_b_run`` (the reference: the first B run), or from the
    B runs' curves averaged per checkpoint when it is None (``tables.xi_standard: mean``)."""
    star = best_step(perf[perf["role"] == "A"], perf_metric)
    perf = perf[perf["metric"] == perf_metric] if perf_metric else primary(perf)
    a_perf = perf[perf["role"] == "A"]
    where = agreement_rows(star, xi_b_run)
    vs_uniform = select_rows(agr, metric, **where["agr_alpha_xi_uniform"])
    best = vs_uniform.loc[vs_uniform["value"].idxmax()] if len(vs_uniform) else None

    def peak(column):
        c = curve(agr, metric, **where[column])
        return float(c.max()) if len(c) else float("nan")

    agr_alpha_xi_standard = peak("agr_alpha_xi_standard")
    c_alpha_b = curve(agr, metric, a_measure="alpha", b_measure="alpha", b_role="B", a_role="A", a_step=star)
    b_perf = perf[perf["role"] == "B"].groupby("step")["value"].mean()
    agr_alpha_xi_uniform = float(best["value"]) if best is not None else float("nan")
    agr_xi_proxy_xi_uniform = peak("agr_xi_proxy_xi_uniform")
    agr_grad_xi_uniform = peak("agr_grad_xi_uniform")
    return {
        "dataset": dataset, "task": task, "perf_metric": a_perf["metric"].iloc[0],
        "agr_alpha_xi_uniform": agr_alpha_xi_uniform,
        "agr_xi_proxy_xi_uniform": agr_xi_proxy_xi_uniform,
        "agr_grad_xi_uniform": agr_grad_xi_uniform,
        "agr_alpha_xi_standard": agr_alpha_xi_standard,
        "random_baseline": float(best["baseline"]) if best is not None else float("nan"),
        "ctx_perf_xi_uniform": contextualized(agr_alpha_xi_uniform, c_alpha_b, b_perf),
        "ctx_perf_xi_standard": contextualized(agr_alpha_xi_standard, c_alpha_b, b_perf),
        "best_perf": float(a_perf["value"].max()),
        "ctx_perf_xi_proxy_xi_uniform": contextualized(agr_xi_proxy_xi_uniform, c_alpha_b, b_perf),
        "ctx_perf_grad_xi_uniform": contextualized(agr_grad_xi_uniform, c_alpha_b, b_perf),
    }


def table2(agr: pd.DataFrame, perf: pd.DataFrame, tasks: dict[str, str], metric: str = "agreement",
           perf_metric: str | None = None, xi_b_runs: dict[str, str] | None = None) -> pd.DataFrame:
    """Table 2 (one row per dataset); with ``perf_metric`` only the datasets that have it.
    ``xi_b_runs``: dataset -> the B run that A(alpha*, xi^B) reads (None: the B runs' mean)."""
    has = perf if perf_metric is None else perf[perf["metric"] == perf_metric]
    rows = [table2_row(d, tasks[d], agr[agr["dataset"] == d], perf[perf["dataset"] == d], metric, perf_metric,
                       (xi_b_runs or {}).get(d))
            for d in tasks if (agr["dataset"] == d).any() and (has["dataset"] == d).any()]
    return pd.DataFrame(rows, columns=TABLE2_COLUMNS)


TABLE10_VALUES = ["agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]
TABLE10_COLUMNS = ["dataset", *TABLE10_VALUES]
TABLE10_REPLICATE_COLUMNS = ["dataset", "replicate", "a_run", "u_run", "f_run", "independent", *TABLE10_VALUES]


def table10_values(agr: pd.DataFrame, star: int) -> dict[str, float]:
    """Table 10's two values from the agreement rows of one A: A(alpha^frozen, alpha*) and
    A(xi^uf, alpha*) with alpha* at A's step ``star``, each its maximum over the F or U run's
    checkpoints (NaN where the rows have no such run)."""
    vs_star = select_rows(agr, b_measure="alpha", b_role="A", b_step=star)

    def peak(role, measure):
        v = vs_star[(vs_star["a_role"] == role) & (vs_star["a_measure"] == measure)]["value"]
        return float(v.max()) if len(v) else float("nan")

    return dict(zip(TABLE10_VALUES, (peak("F", "alpha"), peak("U", "xi"))))


def table10(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 10: A(alpha^frozen, alpha*) beside A(xi^uf, alpha*), each its maximum
    over the run's checkpoints: attention learned alone vs what the uniform model knows."""
    rows = [{"dataset": dataset, **table10_values(d, star_step(perf, dataset))}
            for dataset, d in agr.groupby("dataset")]
    return pd.DataFrame(rows, columns=TABLE10_COLUMNS)


def table10_replicates(rep_agr: pd.DataFrame, perf: pd.DataFrame, designs: dict[str, list[dict]]) -> pd.DataFrame:
    """Table 10 once per replicate that has a frozen run of its own (compare.replicate_design's
    ``f_run``), from the replicates' agreement rows (compare.replicate_frame): F_r's attention
    and U_r's probe against alpha*_r, at the best checkpoint of the replicate's A. Empty where no
    replicate has a frozen run."""
    rows = []
    for dataset, design in designs.items():
        agr = rep_agr[rep_agr["dataset"] == dataset]
        for rep in design:
            if not rep.get("f_run"):
                continue
            a_perf = perf[(perf["dataset"] == dataset) & (perf["run"] == rep["a_run"])]
            values = table10_values(agr[agr["replicate"] == rep["replicate"]], best_step(a_perf))
            rows.append({"dataset": dataset, **{c: rep[c] for c in TABLE10_REPLICATE_COLUMNS[1:6]}, **values})
    return pd.DataFrame(rows, columns=TABLE10_REPLICATE_COLUMNS)


TABLE11_COLUMNS = ["dataset", "agr_xi_proxy_xi_uniform", "agr_xi_logreg_xi_uniform"]


def table11(agr: pd.DataFrame) -> pd.DataFrame:
    """Paper Table 11 (classification): A(xi^px, xi^uf) beside A(xi^lr, xi^uf), the L2 logistic
    regression's word coefficients against the uniform probe, each maxed over U's checkpoints."""
    rows = []
    for dataset, d in agr.groupby("dataset"):
        peak = {m: curve(d, a_measure=m, b_measure="xi", b_role="U") for m in ("xi_px", "xi_lr")}
        if len(peak["xi_lr"]):
            rows.append({"dataset": dataset, "agr_xi_proxy_xi_uniform": float(peak["xi_px"].max()),
                         "agr_xi_logreg_xi_uniform": float(peak["xi_lr"].max())})
    return pd.DataFrame(rows, columns=TABLE11_COLUMNS)


TABLE11_REPLICATE_COLUMNS = ["dataset", "replicate", "a_run", "u_run", "p_run", "b_runs", "independent",
                             *TABLE11_COLUMNS[1:]]


def each_replicate(rep_agr: pd.DataFrame, designs: dict[str, list[dict]]):
    """(dataset, replicate, its comparison rows) for each replicate that has rows."""
    for dataset, design in designs.items():
        agr = rep_agr[rep_agr["dataset"] == dataset]
        for rep in design:
            sel = agr[agr["replicate"] == rep["replicate"]]
            if len(sel):
                yield dataset, rep, sel


def table11_replicates(rep_agr: pd.DataFrame, designs: dict[str, list[dict]]) -> pd.DataFrame:
    """Table 11 once per replicate: its own proxy's and the dataset's one logistic regression's
    word weights against its own uniform run (compare.replicate_frame). Replicate 1 is
    table11's row; empty where no dataset is a classification one."""
    rows = []
    for dataset, rep, sel in each_replicate(rep_agr, designs):
        values = table11(sel)
        if len(values):
            rows.append({"dataset": dataset, **{c: rep[c] for c in TABLE11_REPLICATE_COLUMNS[1:7]},
                         **values.iloc[0][TABLE11_COLUMNS[1:]].to_dict()})
    return pd.DataFrame(rows, columns=TABLE11_REPLICATE_COLUMNS)


SEEDS_COLUMNS = ["dataset", "quantity", "n_runs", "mean", "sd", "min", "max"]


def seed_spread(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Mean and spread over seeds: each comparison run B's own peak A(alpha*, xi^B) and
    A(alpha*, alpha^B) (Table 2 averages the B runs first), and every standard run's best
    performance (Table 2 reports run A's)."""
    rows = []
    for dataset, d in agr.groupby("dataset"):
        p = perf[perf["dataset"] == dataset]
        star = star_step(perf, dataset)
        vs_b = select_rows(d, a_measure="alpha", a_role="A", a_step=star, b_role="B")
        per_run = {f"agr_alpha_{m}_standard": vs_b[vs_b["b_measure"] == m].groupby("b_run")["value"].max()
                   for m in ("xi", "alpha")}
        std = primary(p[p["role"].isin(["A", "B"])])
        per_run["best_perf_standard"] = std.groupby("run")["value"].max()
        for name, v in per_run.items():
            if len(v):
                rows.append({"dataset": dataset, "quantity": name, "n_runs": len(v), "mean": float(v.mean()),
                             "sd": float(v.std(ddof=1)) if len(v) > 1 else float("nan"),
                             "min": float(v.min()), "max": float(v.max())})
    return pd.DataFrame(rows, columns=SEEDS_COLUMNS)


def gold_table(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """Agreement with the gold links: alpha* and the norm-based weights of A at its best step,
    xi^uf (its best step), xi^px, counts."""
    rows = []
    gold = agr[agr["b_role"] == "G"]
    for dataset, g in gold.groupby("dataset"):
        star = star_step(perf, dataset)
        at_star = g[(g["a_role"] == "A") & (g["a_step"] == star)]
        picks = {"alpha_star": at_star[at_star["a_measure"] == "alpha"],
                 "norm_star": at_star[at_star["a_measure"] == "norm"],
                 "xi_uniform": g[g["a_role"] == "U"], "xi_proxy": g[g["a_measure"] == "xi_px"],
                 "count_table": g[g["a_measure"] == "count"], "ibm1": g[g["a_measure"] == "ibm1"]}
        for name, sel in picks.items():
            for metric, m in sel.groupby("metric"):
                top = m.loc[m["value"].idxmax()]
                rows.append({"dataset": dataset, "measure": name, "metric": metric, "step": int(top["a_step"]),
                             "value": float(top["value"]), "baseline": float(top["baseline"])})
    return pd.DataFrame(rows, columns=["dataset", "measure", "metric", "step", "value", "baseline"])


IBM1_COLUMNS = ["dataset", "agr_alpha_star_ibm1", "agr_ibm1_alpha_star", "agr_ibm1_xi_uniform", "baseline_ibm1",
                 "baseline_alpha_star"]


def ibm1_table(agr: pd.DataFrame, perf: pd.DataFrame) -> pd.DataFrame:
    """IBM Model 1 (EM) alignments vs the model's measures: A(alpha*, ibm1), A(ibm1, alpha*),
    and A(ibm1, xi^uf) maximised over the uniform run's checkpoints (like Table 2)."""
    rows = []
    for dataset, d in agr[(agr["metric"] == "agreement")].groupby("dataset"):
        if not (d["b_measure"] == "ibm1").any() and not (d["a_measure"] == "ibm1").any():
            continue
        star = star_step(perf, dataset)
        to_ibm1 = d[(d["a_role"] == "A") & (d["a_step"] == star) & (d["a_measure"] == "alpha")
                    & (d["b_measure"] == "ibm1")]
        from_ibm1 = d[d["a_measure"] == "ibm1"]
        vs_star = from_ibm1[(from_ibm1["b_role"] == "A") & (from_ibm1["b_step"] == star)]
        vs_u = from_ibm1[(from_ibm1["b_role"] == "U") & (from_ibm1["b_measure"] == "xi")]
        first = lambda sel, col="value": float(sel[col].iloc[0]) if len(sel) else float("nan")  # noqa: E731
        rows.append({"dataset": dataset, "agr_alpha_star_ibm1": first(to_ibm1),
                     "agr_ibm1_alpha_star": first(vs_star),
                     "agr_ibm1_xi_uniform": float(vs_u["value"].max()) if len(vs_u) else float("nan"),
                     "baseline_ibm1": first(to_ibm1, "baseline"), "baseline_alpha_star": first(vs_star, "baseline")})
    return pd.DataFrame(rows, columns=IBM1_COLUMNS)


def markdown_report(sections: dict[str, pd.DataFrame]) -> str:
    """All tables for people: a heading and a table per section (values in percent)."""
    return "\n".join(f"## {title}\n\n{to_markdown(df)}" for title, df in sections.items())
