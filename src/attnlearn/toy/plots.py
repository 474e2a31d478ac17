"""Figures of the controlled experiments (paper Figures 3, 4, 6, 7)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

COLORS = {"perm40of40": "tab:red", "perm40of60": "tab:blue", "mixture": "tab:purple",
          "permutation_fn": "tab:orange", "all_bad": "tab:red", "one_good": "tab:blue", "random": "tab:green"}


def _color(name, i):
    return COLORS.get(name, f"C{i}")


def _curves(ax, table, group, key, metric):
    for i, (name, g) in enumerate(table.groupby(group, sort=False)):
        for j, (_, run) in enumerate(g.groupby(key)):
            share = g.drop_duplicates(key)["converged"].mean()
            label = f"{name} ({share:.0%} of {g[key].nunique()} converged)" if j == 0 else None
            ax.plot(run["step"], run[metric], color=_color(name, i), alpha=0.6, lw=1, label=label)
    ax.set_xlabel("training step")
    ax.set_ylim(0, 1.02)


def _accuracy_figure(table: pd.DataFrame, group: str, member: str, attn_title: str, path) -> None:
    """Token accuracy (left) and attention accuracy (right) curves, one colour per ``group``."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, metric, title in zip(axes, ("token_acc", "attn_acc"), ("token accuracy", attn_title)):
        if len(table):
            _curves(ax, table, group, member, metric)
        ax.set_title(title)
    axes[0].set_ylabel("accuracy on fresh samples")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def copying_figure(table: pd.DataFrame, path) -> None:
    """Token and attention accuracy of every seed, one colour per distribution (Figure 3)."""
    _accuracy_figure(table, "task", "seed", "attention accuracy", path)


def multihead_figure(table: pd.DataFrame, path) -> None:
    """Token accuracy of the K-head models per scenario (Figure 6)."""
    _accuracy_figure(table, "scenario", "trial", "attention accuracy (best head)", path)


def counts_figure(counts: pd.DataFrame, path) -> None:
    """t(y | x) of each copy distribution over content tokens (Figures 4 and 8)."""
    tasks = list(dict.fromkeys(counts["task"]))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4 * len(tasks), 4), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        c = counts[counts["task"] == task]
        n = int(max(c["src_id"].max(), c["tgt_id"].max())) + 1
        grid = np.zeros((n, n))
        grid[c["src_id"], c["tgt_id"]] = c["t_tgt_given_src"]
        im = ax.imshow(grid[:-1, :-1] if n > 2 else grid, cmap="viridis")  # content tokens, EOS at the end
        ax.set_title(f"{task}: t(y | x)")
        ax.set_xlabel("output word y")
        ax.set_ylabel("input word x")
        fig.colorbar(im, ax=ax, fraction=0.046)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def keyword_figure(table: pd.DataFrame, path) -> None:
    """The four log-odds over training under uniform attention (Figure 7), mean over seeds."""
    mean = table.groupby("step")[["keyword", "after", "uniform", "last"]].mean()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = {"keyword": r"$\beta_{l^*}$ (keyword)", "after": r"$\beta_{l^*+1}$ (after the keyword)",
              "uniform": r"mean$_l\ \beta_l$ (uniform)", "last": r"$\beta_{L}$ (last position)"}
    for key, label in labels.items():
        ax.plot(mean.index, mean[key], label=label)
    ax.set_xlabel("training step (uniform attention)")
    ax.set_ylabel("log-odds on positive sequences")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
