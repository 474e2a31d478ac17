"""Figures of the controlled experiments (paper Figures 3, 4, 6, 7)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.experiments import summary as S  # noqa: E402

COLORS = {"perm40of40": "tab:red", "perm40of60": "tab:blue", "mixture": "tab:purple",
          "permutation_fn": "tab:orange", "all_bad": "tab:red", "one_good": "tab:blue", "random": "tab:green"}


def _color(name, i):
    return COLORS.get(name, f"C{i}")


def _curves(ax, table, group, member, metric):
    """Each run thin, and per group the mean over its runs with the 95% t band."""
    bands = S.band(table, group, metric, (0, 1))
    for i, (name, g) in enumerate(table.groupby(group, sort=False)):
        color = _color(name, i)
        for _, run in g.groupby(member):
            ax.plot(run["step"], run[metric], color=color, alpha=0.3, lw=0.7)
        b = bands[bands[group] == name]
        ax.plot(b["step"], b["value"], color=color, lw=2, label=name)
        ax.fill_between(b["step"], b["low"], b["high"], color=color, alpha=0.2, lw=0)
    ax.set_xlabel("training step")
    ax.set_ylim(0, 1.02)


def _shares(ax, table, group, member):
    """Converged share per group with its Wilson 95% interval, k/n above each bar."""
    shares = S.run_intervals(table, group, member)
    shares = shares[shares["quantity"] == "converged"].reset_index(drop=True)
    colors = [_color(name, i) for i, name in enumerate(shares[group])]
    errors = np.clip([shares["value"] - shares["low"], shares["high"] - shares["value"]], 0, None)  # rounding
    ax.bar(shares.index, shares["value"], color=colors, alpha=0.7, yerr=errors, capsize=4)
    for i, r in shares.iterrows():
        ax.text(i, 1.04, f"{round(r['value'] * r['n'])}/{r['n']}", ha="center", fontsize=8)
    ax.set_xticks(shares.index, shares[group], rotation=20, fontsize=8)
    ax.set_ylim(0, 1.1)
    ax.set_title("converged share (95% Wilson interval)")


def _accuracy_figure(table: pd.DataFrame, group: str, member: str, attn_title: str, path) -> None:
    """Token accuracy and attention accuracy curves (each run, and the mean with its 95% t band),
    one colour per ``group``, and the converged share per group."""
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5), gridspec_kw={"width_ratios": [3, 3, 2]})
    for ax, metric, title in zip(axes, ("token_acc", "attn_acc"), ("token accuracy", attn_title)):
        if len(table):
            _curves(ax, table, group, member, metric)
        ax.set_title(f"{title}: runs, mean and 95% t band")
    if len(table):
        _shares(axes[2], table, group, member)
    axes[0].set_ylabel("accuracy on fresh samples")
    axes[0].legend(fontsize=8, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def copying_figure(table: pd.DataFrame, path) -> None:
    """Token and attention accuracy over seeds, one colour per distribution (Figure 3)."""
    _accuracy_figure(table, "task", "seed", "attention accuracy", path)


def multihead_figure(table: pd.DataFrame, path) -> None:
    """Token and attention accuracy of the K-head models over trials, per scenario (Figure 6)."""
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
    """The four log-odds over training under uniform attention (Figure 7): mean over seeds
    with the 95% t band (none for one seed)."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels = {"keyword": r"$\beta_{l^*}$ (keyword)", "after": r"$\beta_{l^*+1}$ (after the keyword)",
              "uniform": r"mean$_l\ \beta_l$ (uniform)", "last": r"$\beta_{L}$ (last position)"}
    long = table.melt(id_vars=["seed", "step"], value_vars=list(labels), var_name="position", value_name="log_odds")
    bands = S.band(long, "position", "log_odds")
    for key, label in labels.items():
        b = bands[bands["position"] == key]
        line, = ax.plot(b["step"], b["value"], label=label)
        ax.fill_between(b["step"], b["low"], b["high"], color=line.get_color(), alpha=0.2, lw=0)
    ax.set_xlabel("training step (uniform attention)")
    ax.set_ylabel(f"log-odds on positive sequences ({table['seed'].nunique()} seeds)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
