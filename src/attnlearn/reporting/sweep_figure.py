"""A sweep as a figure: each Table 2 column (and alpha*'s agreement with the gold links) against
the swept value, every replicate a dot, the values' means joined by a line in the band of their
95% t interval, the 95% prediction interval of one more replicate as a lighter band, and the
trend over the replicates (OLS slope [95% CI], p; "constant: no trend" for a column that does not
vary) in each panel's title; an agreement column's random baseline dashed."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.agreement.sweep import COLUMNS, LABELS, NO_TREND, slope_cell  # noqa: E402

# each agreement column's chance level, drawn in its panel: A against xi^uf or xi^B reads Table
# 2's baseline (of A(alpha*, xi^uf); the others' differ by a little), the gold columns theirs
BASELINE = {"agr_alpha_xi_uniform": "random_baseline", "agr_xi_proxy_xi_uniform": "random_baseline",
            "agr_grad_xi_uniform": "random_baseline", "agr_alpha_xi_standard": "random_baseline",
            "agr_alpha_gold": "gold_baseline", "gold_hit_alpha": "gold_baseline"}


def positions(table: pd.DataFrame) -> tuple[np.ndarray, list[str] | None]:
    """x of each value: the value where every value is a number, else its index (labelled)."""
    values = table.drop_duplicates("value_index").sort_values("value_index")
    if values["value"].notna().all():
        return values["value"].to_numpy(dtype=float), None
    return values["value_index"].to_numpy(dtype=float), [str(v) for v in values["dataset"]]


def sweep_figure(reps: pd.DataFrame, table: pd.DataFrame, trend: pd.DataFrame, key: str, path) -> dict:
    """Draw the sweep to ``path``; returns what each panel drew: {column: {"x", "mean", "ci"}}."""
    columns = [c for c in COLUMNS if c in set(table["column"]) and table.loc[table["column"] == c, "n"].sum() > 0]
    x_all, labels = positions(table)
    ncols = 3
    nrows = max(1, int(np.ceil(len(columns) / ncols)))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.2 * nrows), squeeze=False)
    span = float(np.ptp(x_all)) or 1.0
    drawn = {}
    for ax, col in zip(axes.flat, columns):
        t = table[table["column"] == col].sort_values("value_index")
        x = x_all[t["value_index"].to_numpy()]
        mean, lo, hi = (t[c].to_numpy(dtype=float) for c in ("mean", "ci_low", "ci_high"))
        ax.fill_between(x, t["pi_low"].to_numpy(dtype=float), t["pi_high"].to_numpy(dtype=float), color="C0",
                        alpha=0.12, lw=0, label="95% PI, one more replicate")
        ax.fill_between(x, lo, hi, color="C0", alpha=0.3, lw=0, label="95% CI of the mean")
        ax.plot(x, mean, "-", color="C0", lw=1.5, label="mean")
        chance = BASELINE.get(col)  # what a uniformly random position scores against the same measure
        if chance and chance in set(table["column"]):
            base = table[table["column"] == chance].sort_values("value_index")
            ax.plot(x_all[base["value_index"].to_numpy()], base["mean"].to_numpy(dtype=float), "--", color="grey",
                    lw=1, label="random baseline")
        for i, v in zip(t["value_index"], x):
            y = reps.loc[reps["value_index"] == i, col].to_numpy(dtype=float)
            jitter = np.linspace(-0.012, 0.012, len(y)) * span if len(y) > 1 else np.zeros(len(y))
            ax.plot(v + jitter, y, "o", color="black", ms=3, alpha=0.7,
                    label="a replicate" if i == t["value_index"].iloc[0] else None)
        tr = trend[trend["column"] == col]
        title = LABELS[col]
        if len(tr) and bool(tr.iloc[0].get("constant", False)):
            title += f"\n{NO_TREND}"
        elif len(tr) and not np.isnan(tr["slope"].iloc[0]) and not np.isnan(tr["p_value"].iloc[0]):
            r = tr.iloc[0]
            title += (f"\nslope {slope_cell(r['slope'], r['slope_ci_low'], r['slope_ci_high'])} pts/unit, "
                      f"p={r['p_value']:.2g}")
        ax.set_title(title, fontsize=9)
        # every panel on the whole scale, a flat one too: autoscaled, a column whose replicates
        # differ by rounding alone would fill the panel with that noise
        ax.set_ylim(-0.02, 1.02)
        ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0, decimals=0))
        if labels is not None:
            ax.set_xticks(x_all, labels, rotation=30, fontsize=7)
        ax.set_xlabel(key, fontsize=8)
        drawn[col] = {"x": x.tolist(), "mean": mean.tolist(), "ci": list(zip(lo.tolist(), hi.tolist())),
                      "title": title, "ylim": tuple(ax.get_ylim())}
    for ax in list(axes.flat)[len(columns):]:
        ax.axis("off")
    if columns:
        axes.flat[0].legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return drawn
