"""A(alpha*, xi^uf) against what each replicate reads (attnlearn.agreement.readings): one panel
per reading, each replicate a dot, the correlation with its 95% interval and Holm's p in the
panel's title, so a reader sees whether the column's spread follows a reading, and how loosely."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.agreement.readings import CENTRAL, READINGS, readings_tests  # noqa: E402

PERCENT = {"alpha_top_share", "xi_top_share", "best_perf", "alpha_boundary_share", "xi_boundary_share"}  # in percent
COLUMNS = 4  # panels a row


def readings_figure(readings: pd.DataFrame, path, title: str = "") -> dict:
    """One row of panels per dataset with three or more independent replicates: A(alpha*,
    xi^uf) (percent) against each reading. Returns what was drawn: {dataset: {reading: {"x",
    "y", "r", "r_low", "r_high", "p_holm"}}}."""
    tests = readings_tests(readings).set_index(["dataset", "reading"])
    datasets = list(dict.fromkeys(tests.index.get_level_values(0)))
    drawn = {}
    per = -(-len(READINGS) // COLUMNS)  # rows of panels per dataset
    fig, axes = plt.subplots(per * max(1, len(datasets)), COLUMNS, figsize=(3.4 * COLUMNS, 3 * per * max(1, len(datasets))),
                             squeeze=False)
    for i, dataset in enumerate(datasets):
        row = axes[i * per:(i + 1) * per].ravel()
        g = readings[(readings["dataset"] == dataset) & readings["independent"].astype(bool)]
        drawn[dataset] = {}
        for ax, (col, label) in zip(row, READINGS.items()):
            x = g[col].to_numpy(dtype=float) * (100 if col in PERCENT else 1)
            y = 100 * g[CENTRAL].to_numpy(dtype=float)
            t = tests.loc[(dataset, col)]
            ax.scatter(x, y, s=18, color="tab:blue")
            r = ("r undefined" if np.isnan(t["r"]) else f"r = {t['r']:+.2f} " +
                 (f"[{t['r_low']:+.2f}, {t['r_high']:+.2f}]" if not np.isnan(t["r_low"]) else f"(n = {int(t['n'])})"))
            p = "" if np.isnan(t["p_holm"]) else f"\nHolm p = {t['p_holm']:.2g}"
            ax.set_title(f"{r}{p}", fontsize=8)
            ax.set_xlabel(label + (" (%)" if col in PERCENT else ""), fontsize=8)
            ax.tick_params(labelsize=7)
            drawn[dataset][col] = {"x": x, "y": y, **{k: float(t[k]) for k in ("r", "r_low", "r_high", "p_holm")}}
        for first in row[::COLUMNS]:
            first.set_ylabel(f"{dataset}\nA(α*, ξ^uf) (%)", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn
