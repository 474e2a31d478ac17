"""Figures of the analyses: alignment error per layer (weights vs norms) and the
head-role heatmap with significance marks."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.reporting.plots import step_axis  # noqa: E402
from attnlearn.statistics import t_interval  # noqa: E402


def _empty(path, text):
    fig, ax = plt.subplots(figsize=(5, 2))
    ax.axis("off")
    ax.text(0.5, 0.5, text, ha="center", va="center")
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _seed_bars(ax, best: pd.DataFrame) -> int:
    """Bars per layer: the mean AER over the runs' best checkpoints, weights vs norms, with
    the 95% t interval across seeds where there are two or more. Returns the number of seeds."""
    layers = sorted(best["layer"].unique())
    x = np.arange(len(layers))
    for i, measure in enumerate(("weight", "norm")):
        by_layer = best[best["measure"] == measure].groupby("layer")["aer"]
        stats = np.array([t_interval(by_layer.get_group(lay))[:3] for lay in layers])  # mean, low, high
        err = np.nan_to_num(np.abs(stats[:, 1:] - stats[:, :1]).T)
        ax.bar(x + (i - 0.5) * 0.38, stats[:, 0], 0.38, yerr=err, capsize=3, label=f"from {measure}s")
    ax.set_xticks(x, [f"layer {i}" for i in layers])
    return best["run"].nunique()


def alignment_figure(aer: pd.DataFrame, path) -> None:
    """Per dataset: AER of the layer-level hard alignments from weights vs from norms at the
    best checkpoint (bars per layer: mean over the analysed seeds, 95% t interval), and over
    run A's training (lines)."""
    if aer.empty:
        return _empty(path, "no dataset with gold alignments")
    layer = aer[aer["head"] == -1]
    datasets = sorted(layer["dataset"].unique())
    fig, axes = plt.subplots(2, len(datasets), figsize=(4.5 * len(datasets), 6.5), squeeze=False)
    for col, d in enumerate(datasets):
        sub = layer[layer["dataset"] == d]
        ax = axes[0, col]
        seeds = _seed_bars(ax, sub[sub["best"]])
        ax.set_ylabel("AER (lower is better)")
        ax.set_ylim(0, 1)
        ax.set_title(f"{d} ({sub['arch'].iloc[0]}), best checkpoint, {seeds} seed{'s' if seeds > 1 else ''}",
                     fontsize=9)
        ax.legend(fontsize=7)
        ax = axes[1, col]
        for (lay, measure), g in sub[sub["run_role"] == "A"].groupby(["layer", "measure"]):
            g = g.sort_values("step")
            ax.plot(g["step"], g["aer"], "o-" if measure == "norm" else "s--", ms=3, label=f"layer {lay} {measure}")
        step_axis(ax)
        ax.set_xlabel("training step (run A)")
        ax.set_ylabel("AER")
        ax.set_ylim(0, 1)
        ax.legend(fontsize=6)
    fig.suptitle(f"Hard alignments from attention weights vs norms ||alpha f(x)|| (docs/methods.md 9), "
                 f"AER mode {aer['aer_mode'].iloc[0]}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def role_cells(sub: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One dataset's head-role rows as (mean score, label) matrices, sites x roles; the label
    is the score with ** (significant after correction), * (before it only) or nothing."""
    sub = sub.assign(site=sub["kind"] + " L" + sub["layer"].astype(str) + " H" + sub["head"].astype(str))
    mat = sub.pivot(index="site", columns="role", values="mean_score")
    sig, raw = (sub.pivot(index="site", columns="role", values=col).reindex_like(mat).fillna(False).astype(bool)
                for col in ("significant", "significant_uncorrected"))
    marks = np.where(sig, "**", np.where(raw, "*", ""))
    labels = mat.map(lambda v: f"{v:.1f}") + marks
    return mat, labels.where(mat.notna(), "")


def head_roles_figure(roles: pd.DataFrame, path) -> None:
    """Mean sieve score per head (rows) and role (columns), one panel per dataset;
    ** significant after correction, * only before it."""
    if roles.empty:
        return _empty(path, "no head-role results")
    datasets = sorted(roles["dataset"].unique())
    heights = [roles[roles["dataset"] == d].groupby(["kind", "layer", "head"]).ngroups for d in datasets]
    fig, axes = plt.subplots(len(datasets), 1, figsize=(7, 1.2 + 0.28 * sum(heights) + 0.8 * len(datasets)),
                             squeeze=False, gridspec_kw={"height_ratios": heights}, layout="constrained")
    for ax, d in zip(axes[:, 0], datasets):
        sub = roles[roles["dataset"] == d]
        mat, labels = role_cells(sub)
        log2 = np.log2(mat.values.astype(float))
        im = ax.imshow(log2, cmap="coolwarm", vmin=-3, vmax=3, aspect="auto")
        for (i, j), text in np.ndenumerate(labels.values):
            ax.text(j, i, text, ha="center", va="center", fontsize=6, color="white" if abs(log2[i, j]) > 2 else "black")
        ax.set_xticks(range(mat.shape[1]), mat.columns, fontsize=7)
        ax.set_yticks(range(mat.shape[0]), mat.index, fontsize=6)
        tau, corr = sub["tau"].iloc[0], sub["correction"].iloc[0]
        heads = sub.groupby(["kind", "layer"])["head"].nunique().max()
        ax.set_title(f"{d} ({sub['arch'].iloc[0]}, {heads} head{'s' if heads > 1 else ''}/layer): mean sieve score; "
                     f"** p_{corr} < 0.05 for H0 mean <= {tau}, * uncorrected", fontsize=7)
    # one colour scale for all panels
    fig.colorbar(im, ax=axes[:, 0].tolist(), label="log2 score (0 = uniform)", shrink=min(1.0, 6 / sum(heights) + 0.3))
    fig.savefig(path, dpi=110)
    plt.close(fig)
