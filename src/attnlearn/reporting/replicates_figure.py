"""Table 2 as distributions: every replicate's value per column, the mean with its 95%
prediction interval, and the paper's value (a column whose replicates spread over 30
points is a finding in itself, which a mean hides). Each column is drawn as Table 2 and
table2_intervals print it: a contextualized value that no checkpoint reaches is undefined
(`-` in the tables), not the convention's stand-in, and the column's count of defined
replicates is written under it where it is not all of them (drawing the convention's values
instead once showed a mean of 99.2 where the tables print `-` and `1/3 | 98.8`)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib import ticker  # noqa: E402

from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS  # noqa: E402

LABELS = ["A(α*, ξ^uf)", "A(ξ^px, ξ^uf)", "A(g*, ξ^uf)", "A(α*, ξ^B)", "baseline", "ctx ξ^uf", "ctx ξ^B", "best"]


def replicates_figure(replicates: pd.DataFrame, intervals: pd.DataFrame, path) -> dict:
    """One panel per dataset: Table 2's columns across, each replicate a dot, the mean with its
    prediction interval (examples' error included) as a bar, the paper's value a red cross.
    Returns what was drawn: {dataset: {column: {"values", "mean", "pi", "paper"}}}."""
    reps = replicates[replicates["independent"].astype(bool)]
    datasets = list(dict.fromkeys(reps["dataset"]))
    drawn = {}
    fig, axes = plt.subplots(len(datasets), 1, figsize=(10, 2.8 * max(1, len(datasets))), squeeze=False)
    for ax, dataset in zip(axes[:, 0], datasets):
        rows, ivs = reps[reps["dataset"] == dataset], intervals[intervals["dataset"] == dataset].set_index("column")
        drawn[dataset], labelled = {}, set()

        def once(label):  # each legend entry once per panel
            return None if label in labelled or labelled.add(label) else label

        ticks = []
        for x, col in enumerate(TABLE2_VALUE_COLUMNS):
            values = rows[col].to_numpy(dtype=float)
            values = values[~np.isnan(values)]
            iv = ivs.loc[col] if col in ivs.index else None
            spread = np.linspace(-0.12, 0.12, len(values)) if len(values) > 1 else np.zeros(len(values))
            ax.plot(x + spread, values, "o", color="C0", ms=4, alpha=0.8, label=once("a replicate"))
            entry = {"values": values.tolist(), "n": len(values), "n_replicates": len(rows), "mean": np.nan,
                     "pi": (np.nan, np.nan), "paper": np.nan}
            if iv is not None:
                entry.update(mean=float(iv["mean"]), pi=(float(iv["pi_low"]), float(iv["pi_high"])),
                             paper=float(iv["paper"]))
                if not np.isnan(entry["pi"][0]):
                    low, high = max(entry["pi"][0], 0.0), min(entry["pi"][1], 1.0)  # drawn within 0-100%
                    ax.plot([x + 0.25, x + 0.25], [low, high], "-", color="black", lw=1.5,
                            label=once("95% prediction interval (clipped to 0-100%)"))
                if not np.isnan(entry["mean"]):
                    ax.plot([x + 0.18, x + 0.32], [entry["mean"]] * 2, "-", color="black", lw=2, label=once("mean"))
                if not np.isnan(entry["paper"]):
                    ax.plot(x + 0.25, entry["paper"], "x", color="red", ms=8, mew=2, label=once("the paper"))
            if not len(values):  # undefined in every replicate: the tables' mark, where the dots would be
                ax.text(x, 0.5, "- (undefined)", ha="center", va="center", fontsize=8, rotation=90)
            # where some replicates leave the column undefined, how many define it (the tables' n)
            ticks.append(LABELS[x] + (f"\nn = {len(values)}/{len(rows)}" if len(values) < len(rows) else ""))
            drawn[dataset][col] = entry
        n = len(rows)
        ax.set_title(f"{dataset}: Table 2 over {n} replicate{'s' if n != 1 else ''}", fontsize=9)
        ax.set_xticks(range(len(LABELS)), ticks, fontsize=8)
        ax.set_ylim(0, 1.02)
        ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0, decimals=0))
        ax.set_ylabel("percent")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the panel, off the data
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn
