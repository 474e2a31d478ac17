"""The eq. 15 check's figure and summary tables (attnlearn.experiments.derivative; docs/experiments.md)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

WRONG = {"uncentred": "without centring", "unweighted": "without 1/|source|", "shuffled": "rows shuffled"}


def _mean_sd(table: pd.DataFrame, by: list, value: str) -> pd.DataFrame:
    return table.groupby(by)[value].agg(["mean", "std"]).reset_index().fillna({"std": 0.0})


def _lines(ax, table, group, x, value, label, **style):
    for key, g in _mean_sd(table, [group, x], value).groupby(group):
        ax.errorbar(g[x], g["mean"], yerr=g["std"], marker="o", ms=3, capsize=2,
                    label=label.format(key), **style)


def figure(table: pd.DataFrame, path) -> None:
    """(a) r of the exact derivative (gradient flow) with eq. 15 against the init scale, per
    embedding size, and the wrong expressions at the largest; (b) r and (c) slope of one
    gradient step's change against the step size, per init scale, at the largest embedding."""
    eq15, d_max = table[table["expression"] == "eq15"], table["embed"].max()
    flow = eq15[eq15["step_size"] == 0]
    # one step moves the logits by about step x s^2 per unit count: the variable of its regime
    steps = eq15[(eq15["step_size"] > 0) & (eq15["embed"] == d_max)]
    steps = steps.assign(logit_step=steps["step_size"] * steps["init_scale"] ** 2)
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    _lines(axes[0], flow, "embed", "init_scale", "pearson", "eq. 15, d = {}")
    _lines(axes[0], flow[flow["embed"] == d_max], "embed", "init_scale", "pearson_tokens",
           "eq. 15 token-weighted, d = {}", ls=":", color="black")
    wrong = table[(table["step_size"] == 0) & (table["embed"] == d_max)]
    for name, label in WRONG.items():
        _lines(axes[0], wrong[wrong["expression"] == name], "embed", "init_scale", "pearson",
               f"{label}, d = {{}}", ls="--", alpha=0.6)
    axes[0].set(xscale="log", xlabel="init scale s (E, W ~ N(0, s²/d))",
                ylabel="Pearson r over word pairs", title="gradient flow: d beta/dt at init")
    _lines(axes[1], steps, "init_scale", "logit_step", "pearson", "s = {}")
    axes[1].set(xscale="log", xlabel="step size x s²", ylabel="Pearson r",
                title=f"one gradient step / step size, d = {d_max}")
    _lines(axes[2], steps, "init_scale", "logit_step", "slope", "s = {}")
    axes[2].axhline(1.0, color="grey", lw=0.8)
    axes[2].set(xscale="log", yscale="log", ylim=(0.05, 20), xlabel="step size x s²",
                ylabel="slope on eq. 15 (1 = its constant)", title=f"one gradient step / step size, d = {d_max}")
    for ax in axes:
        ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def flow_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Gradient flow, mean over seeds: r of each expression, and eq. 15's token-weighted r and
    slope, per (d, s)."""
    flow = table[table["step_size"] == 0]
    r = flow.pivot_table(index=["embed", "init_scale"], columns="expression", values="pearson")
    eq15 = flow[flow["expression"] == "eq15"].groupby(["embed", "init_scale"])[["pearson_tokens", "slope"]].mean()
    cols = ["eq15"] + [c for c in WRONG if c in r.columns]
    return r[cols].add_prefix("r_").join(eq15.add_suffix("_eq15")).reset_index()


def step_summary(table: pd.DataFrame) -> pd.DataFrame:
    """One step at the largest embedding, mean over seeds: eq. 15's r and slope per (s, step)."""
    eq15 = table[(table["expression"] == "eq15") & (table["embed"] == table["embed"].max())]
    out = eq15.groupby(["init_scale", "step_size"])[["pearson", "pearson_tokens", "slope"]].mean().reset_index()
    out.insert(2, "step_x_s2", out["step_size"] * out["init_scale"] ** 2)
    return out
