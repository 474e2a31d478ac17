"""Does the loss-minimising attention follow xi? (paper appendix A.1, docs/experiments.md)

Each additive run (eq. 31's output layer, run names additive-s{seed}) is probed for its
optimal attention alpha^opt (probing/optimal.py) beside its attention alpha and lexical probe xi. At
the run's best checkpoint (by the task's metric, like alpha*) the comparisons are:

- ``opt_xi``: A(alpha^opt, xi), the paper's "alpha^opt strongly agrees with xi";
- ``alpha_xi``: A(alpha, xi), whether the trained attention does too;
- ``opt_alpha``: A(alpha^opt, alpha), whether training found the optimal attention;
- ``opt_xi_uniform``, ``alpha_xi_uniform``: the same against the uniform model's probe,
  each maximised over the uniform run's checkpoints as Table 2 does; additive seed i is
  paired with uniform seed i (cycling), so the pairs share no run where seeds allow.

``opt_xi`` and ``alpha_xi`` are also kept at every checkpoint (the curves). Over the additive seeds each
comparison gets its mean with a 95% t interval and a 95% prediction interval, and the
additive and standard runs' best performance are set side by side (the paper: 38.2 vs
37.9 BLEU on Multi30k).
"""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from attnlearn.agreement.compare import Measures, best_step
from attnlearn.agreement.readable import interval
from attnlearn.statistics import t_intervals

COMPARISONS = {  # name: (measure of the additive run, measure it is compared with, whose)
    "opt_xi": ("optimal", "xi", "self"),
    "alpha_xi": ("alpha", "xi", "self"),
    "opt_alpha": ("optimal", "alpha", "self"),
    "opt_xi_uniform": ("optimal", "xi", "uniform"),
    "alpha_xi_uniform": ("alpha", "xi", "uniform"),
}
ROW_COLUMNS = ["dataset", "run", "u_run", "comparison", "step", "best", "value", "baseline"]
PERF_COLUMNS = ["dataset", "run", "variant", "metric", "value"]
SUMMARY_COLUMNS = ["dataset", "comparison", "n", "mean", "sd", "ci_low", "ci_high", "pi_low", "pi_high", "baseline"]


def agreement(measures: Measures, a: tuple, b: tuple) -> dict:
    """A(a, b) with its chance value; a and b are (measure, run, step)."""
    (summary,) = measures.summary(a, b, ("agreement",))
    return summary


def comparison_rows(dataset: str, probes: dict[str, pa.Table], perf: dict[str, pd.DataFrame],
                    additive: list[str], uniform: list[str]) -> pd.DataFrame:
    """The comparisons of every additive run (ROW_COLUMNS); ``probes`` and ``perf`` by run name."""
    measures = Measures(probes)
    rows = []
    for i, run in enumerate(additive):
        star = best_step(perf[run])
        u_run = uniform[i % len(uniform)]

        def add(name, summary, step=star):
            rows.append({"dataset": dataset, "run": run, "u_run": u_run, "comparison": name, "step": step,
                         "best": step == star, "value": summary["value"], "baseline": summary["baseline"]})

        for step in measures.steps(run):  # the curves: alpha^opt and alpha against xi over training
            if step != star:
                add("opt_xi", agreement(measures, ("optimal", run, step), ("xi", run, step)), step)
                add("alpha_xi", agreement(measures, ("alpha", run, step), ("xi", run, step)), step)
        for name, (mine, theirs, whose) in COMPARISONS.items():
            if whose == "self":
                add(name, agreement(measures, (mine, run, star), (theirs, run, star)))
            else:  # the best agreement over the uniform run's checkpoints
                add(name, max((agreement(measures, (mine, run, star), (theirs, u_run, s))
                               for s in measures.steps(u_run)), key=lambda r: r["value"]))
    return pd.DataFrame(rows, columns=ROW_COLUMNS).sort_values(["run", "comparison", "step"], ignore_index=True)


def performance_rows(dataset: str, perf: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each run's best value of every metric it logs (token accuracy, BLEU), by variant."""
    rows = [{"dataset": dataset, "run": run, "variant": run.split("-s")[0], "metric": metric,
             "value": float(values.max())}
            for run, df in perf.items() for metric, values in df.groupby("metric")["value"]]
    return pd.DataFrame(rows, columns=PERF_COLUMNS)


def summary(rows: pd.DataFrame, performance: pd.DataFrame) -> pd.DataFrame:
    """Per dataset and comparison (and per variant's best performance): mean, sd, 95% t
    interval of the mean, 95% prediction interval for one more seed, and the chance value."""
    out = []
    best = rows[rows["best"]]
    for dataset in dict.fromkeys(rows["dataset"]):
        for name in COMPARISONS:
            g = best[(best["dataset"] == dataset) & (best["comparison"] == name)]
            out.append({"dataset": dataset, "comparison": name, **t_intervals(g["value"]),
                        "baseline": float(g["baseline"].mean())})
    for (dataset, variant, metric), g in performance.groupby(["dataset", "variant", "metric"]):
        out.append({"dataset": dataset, "comparison": f"best_{metric}_{variant}", **t_intervals(g["value"]),
                    "baseline": float("nan")})
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS)


LABELS = {"opt_xi": "A(alpha^opt, xi)", "alpha_xi": "A(alpha*, xi)", "opt_alpha": "A(alpha^opt, alpha*)",
          "opt_xi_uniform": "A(alpha^opt, xi^uf)", "alpha_xi_uniform": "A(alpha*, xi^uf)"}


def markdown(table: pd.DataFrame) -> str:
    """The summary as Markdown: one table per dataset, agreement in percent."""
    lines = ["# Optimal attention (appendix A.1)", "",
             "Each additive run's loss-minimising attention alpha^opt against its lexical probe xi and "
             "attention alpha* at its best checkpoint, and against the uniform model's probe xi^uf "
             "(maximised over its checkpoints). Mean [95% prediction interval] over the additive seeds "
             "(n); chance: a uniformly random position's agreement. best_{metric}_{variant}: each run's best "
             "validation value (percent), additive against standard runs.", ""]
    if table.empty:
        return "\n".join(lines + ["No dataset has additive runs (`runs.additive`).", ""])
    for dataset, g in table.groupby("dataset", sort=False):
        lines += [f"## {dataset}", "", "| comparison | mean [95% PI] | n | chance |", "|---|---|---|---|"]
        for r in g.itertuples():  # agreement, accuracy and BLEU are all fractions: percent
            label = LABELS.get(r.comparison, r.comparison.replace("_", " "))
            chance = "" if pd.isna(r.baseline) else f"{100 * r.baseline:.1f}"
            shown = interval(r.mean, r.pi_low, r.pi_high, mark_past=False)
            lines.append(f"| {label} | {shown} | {r.n} | {chance} |")  # one run: no interval, "-"
        lines.append("")
    return "\n".join(lines)
