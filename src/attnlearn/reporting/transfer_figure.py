"""The transfer test as a figure: A(alpha_t, xi^uf) (and, on synthetic data, A(alpha_t, gold)) over
each run's training steps, one curve per start (the donor's step k; darker: more steps), the mean
over the seeds in the band of its 95% t interval; the control dashed; the response's window shaded."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.agreement.transfer import AGAINST  # noqa: E402
from attnlearn.statistics import t_intervals  # noqa: E402


def _band(g: pd.DataFrame) -> pd.DataFrame:
    """Per step: the mean over the seeds and its 95% t interval."""
    rows = [{"step": step, **t_intervals(s["value"].to_numpy(dtype=float))} for step, s in g.groupby("step")]
    return pd.DataFrame(rows)


def figure(curves: pd.DataFrame, window: int, path) -> None:
    panels = [a for a in AGAINST if (curves["against"] == a).any()]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4), squeeze=False)
    doses = sorted(curves.loc[curves["arm"] == "transfer", "dose"].unique())
    cmap = plt.get_cmap("viridis_r")
    for ax, against in zip(axes[0], panels):
        c = curves[curves["against"] == against]
        for (arm, dose, parts), g in c.groupby(["arm", "dose", "parts"], sort=True):
            b = _band(g)
            shade = cmap(0.15 + 0.7 * doses.index(dose) / max(len(doses) - 1, 1)) if dose in doses else "grey"
            style = "-" if arm == "transfer" else "--"
            label = f"k = {dose}" if arm == "transfer" else f"control (k = {dose}: {parts})"
            ax.plot(b["step"], b["mean"], style, color=shade if arm == "transfer" else "black", label=label)
            ax.fill_between(b["step"], b["ci_low"], b["ci_high"], color=shade if arm == "transfer" else "black",
                            alpha=0.15, linewidth=0)
        ax.plot(c.groupby("step")["baseline"].mean(), ":", color="grey", label="random baseline")
        ax.axvspan(0, window, color="0.95", zorder=0)
        ax.set(xlabel="training step of the standard run", ylabel=AGAINST[against], title=AGAINST[against])
        ax.set_ylim(0, 1)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
