"""Figures: the contextualized-agreement curve (paper Figure 2) and
alpha-vs-xi heatmaps of a few validation examples."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from attnlearn.agreement.metric import KEY_T, load_measure  # noqa: E402
from attnlearn.agreement.compare import best_step, primary  # noqa: E402
from attnlearn.agreement.tables import curve, table2_row  # noqa: E402
from attnlearn.statistics import t_interval  # noqa: E402


BAND_LEVEL = 0.95
MIN_T_RUNS = 3  # fewer runs at a step: the band is their min-max, not a t interval


def curve_band(rows: pd.DataFrame, step: str = "b_step", run: str = "b_run", level: float = BAND_LEVEL,
               min_t_runs: int = MIN_T_RUNS) -> pd.DataFrame:
    """Runs' curves -> per step their mean and spread: columns step, mean, low, high, n, band.

    ``rows``: one ``value`` per (``run``, ``step``) (several are averaged first; NaN values are
    left out). With ``min_t_runs`` or more runs at a step the band is the ``level`` t interval of
    the mean over runs (mean +- t_{n-1} sd / sqrt(n), sd with ddof 1; band "t"), with 2 runs the
    runs' min-max ("minmax"), with one run none (low = high = mean; "none")."""
    per_run = (rows.dropna(subset=["value"]).groupby([step, run])["value"].mean()
               .rename("value").reset_index())
    out = []
    for s, g in per_run.groupby(step, sort=True):
        v = g["value"].to_numpy(dtype=float)
        n, mean = len(v), float(v.mean())
        if n >= min_t_runs:
            _, low, high, _ = t_interval(v, level)
            band = "t"
        elif n >= 2:
            low, high, band = float(v.min()), float(v.max()), "minmax"
        else:
            low, high, band = mean, mean, "none"
        out.append({"step": s, "mean": mean, "low": low, "high": high, "n": n, "band": band})
    return pd.DataFrame(out, columns=["step", "mean", "low", "high", "n", "band"])


def band_label(band: pd.DataFrame, runs: str = "B runs", level: float = BAND_LEVEL) -> str | None:
    """What the band of ``curve_band`` shows, for the legend; None where there is none to draw."""
    kinds = set(band["band"]) - {"none"}
    n = f"{band['n'].max()} {runs}" if band["n"].min() == band["n"].max() else runs
    t = f"{level:.0%} t interval of the mean over {n}"
    if kinds == {"t"}:
        return t
    if kinds == {"minmax"}:
        return f"min-max over {n}"
    if kinds:
        return f"{t} (min-max at steps with < {MIN_T_RUNS} runs)"
    return None


def _draw_band(ax, band: pd.DataFrame, color, label_prefix: str, gid: str, alpha: float,
               runs: str = "B runs") -> None:
    label = band_label(band, runs)
    if label is not None:
        ax.fill_between(band["step"], band["low"], band["high"], color=color, alpha=alpha, lw=0,
                        label=f"{label_prefix}: {label}", gid=gid)


def contextualized_figure(dataset: str, task: str, agr: pd.DataFrame, perf: pd.DataFrame, path,
                          xi_b_run: str | None = None) -> dict:
    """A(alpha*, alpha^B) over B's training with B's performance beside it; the
    Table 2 agreements (``xi_b_run`` as in Table 2) as horizontal lines. Returns that row.

    C(step) and B's performance are the B runs' mean per checkpoint, each with a band of their
    spread over the B runs (``curve_band``: a 95% t interval of the mean with 3 or more runs,
    the min-max with 2, none with 1)."""
    row = table2_row(dataset, task, agr, perf, xi_b_run=xi_b_run)
    star = best_step(perf[perf["role"] == "A"])
    perf = primary(perf)
    sel = agr[(agr["metric"] == "agreement") & (agr["a_measure"] == "alpha") & (agr["a_role"] == "A")
              & (agr["a_step"] == star) & (agr["b_measure"] == "alpha") & (agr["b_role"] == "B")]
    c = curve_band(sel)
    u = curve(agr, a_measure="alpha", a_role="A", a_step=star, b_measure="xi", b_role="U")
    b_perf = curve_band(perf[perf["role"] == "B"], step="step", run="run")
    n_b = f"{c['n'].max()} B run" + ("s" if c["n"].max() != 1 else "") if len(c) else "no B run"
    fig, ax = plt.subplots(figsize=(8, 5.6))
    ax.plot(c["step"], c["mean"], "o-", color="C0", gid="C",
            label=r"C(step) = A($\alpha^*$, $\alpha^B_{step}$)" + (f", mean of {n_b}" if c["n"].max() > 1 else ""))
    _draw_band(ax, c, "C0", "C", "C band", 0.25)  # a collection: below the lines
    ax.plot(u.index, u.values, "s--", color="C1", alpha=0.7, label=r"A($\alpha^*$, $\xi^{uf}_{step}$)")
    for key, style, label in (("agr_alpha_xi_uniform", ":", r"max A($\alpha^*$, $\xi^{uf}$)"),
                              ("agr_alpha_xi_standard", "-.", r"max A($\alpha^*$, $\xi^{B}$)")):
        ax.axhline(row[key], ls=style, color="gray", label=f"{label} = {100 * row[key]:.1f}%")
    ax.axhline(row["random_baseline"], color="red", lw=0.8,
               label=f"random baseline = {100 * row['random_baseline']:.1f}%")
    ax.set_xlabel("training step of the comparison run(s) B")
    percent_axis(ax, "agreement (%)")
    ax2 = ax.twinx()
    metric = row["perf_metric"].replace("_", " ")  # token_accuracy -> token accuracy
    ax2.plot(b_perf["step"], b_perf["mean"], color="green", alpha=0.6, gid="perf",
             label=f"B {metric}" + (" (mean)" if len(b_perf) and b_perf["n"].max() > 1 else ""))
    _draw_band(ax2, b_perf, "green", f"B {metric}", "perf band", 0.12)
    percent_axis(ax2, f"B validation {metric} (%)", color="green")
    step_axis(ax)
    lines = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    labels = ax.get_legend_handles_labels()[1] + ax2.get_legend_handles_labels()[1]
    # below the plot: with the bands' entries it would hide the curves inside it
    ax.legend(lines, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    ax.set_title(f"{dataset}: contextualized agreement (paper Fig. 2)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return row


def percent_axis(ax, label: str, **label_kw) -> None:
    """A y axis of fractions shown in percent, the tables' unit (0-100%)."""
    ax.set_ylim(0, 1.02)
    ax.yaxis.set_major_formatter(ticker.PercentFormatter(1.0, decimals=0))
    ax.set_ylabel(label, **label_kw)


def step_axis(ax) -> None:
    """Training steps on a symlog axis (linear up to 50, where early checkpoints are dense)
    that starts at step 0: left to autoscale, its margin reaches -10^2 and spends half
    the width on negative steps. Call after plotting."""
    ax.set_xscale("symlog", linthresh=50)
    ax.set_xlim(0, ax.get_xlim()[1])
    ax.xaxis.set_major_locator(ticker.MaxNLocator(integer=True) if ax.get_xlim()[1] <= 50 else
                               ticker.SymmetricalLogLocator(linthresh=50, base=10, subs=(1,)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda step, _: f"{step:,.0f}"))  # not 2.1 x 10^1
    ax.xaxis.set_minor_locator(ticker.NullLocator())


def _with_perf(ax, perf: pd.Series, label: str) -> None:
    """Performance on a twin axis, legends of both axes merged."""
    ax2 = ax.twinx()
    ax2.plot(perf.index, perf.values, color="black", alpha=0.35, lw=3, label=label)
    percent_axis(ax2, f"{label} (%)")
    handles, labels = (a + b for a, b in zip(ax.get_legend_handles_labels(), ax2.get_legend_handles_labels()))
    # below the axes: inside, it covered the curves' tails
    ax.legend(handles, labels, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)


def _u_curves(on_u: pd.DataFrame, star: int | None) -> list[tuple[str, pd.DataFrame]]:
    """The uniform run's probe against alpha*, the proxy and saliency g*: (label, rows); alpha*
    and g* at A's step ``star`` (None: the rows hold one A step each, each replicate's own)."""
    at_star = on_u["a_step"] == star if star is not None else True
    return [(r"A($\alpha^*$, $\xi^{uf}$)", on_u[(on_u["a_measure"] == "alpha") & at_star]),
            (r"A($\xi^{px}$, $\xi^{uf}$)", on_u[on_u["a_measure"] == "xi_px"]),
            (r"A($g^*$, $\xi^{uf}$)", on_u[(on_u["a_measure"] == "grad") & at_star])]


def _right_panel(ax, agr: pd.DataFrame, perf: pd.DataFrame, star: int, replicates: pd.DataFrame | None) -> None:
    """What xi^uf agrees with over U's training. With two or more replicates each curve is their
    mean with its band over the replicates (``curve_band``: each replicate its own A, U and
    proxy), and U's performance the mean over their U runs with its band; else one draw."""
    reps = replicates[replicates["metric"] == "agreement"] if replicates is not None else None
    if reps is not None and reps["replicate"].nunique() >= 2:
        on_u = reps[(reps["b_measure"] == "xi") & (reps["b_role"] == "U")]
        n = on_u["replicate"].nunique()
        for k, (label, rows) in enumerate(_u_curves(on_u, None)):  # each replicate at its own A's best step
            if rows.empty:
                continue
            band = curve_band(rows, step="b_step", run="replicate")
            ax.plot(band["step"], band["mean"], "o-", ms=3, color=f"C{k}", gid=label,
                    label=f"{label}, mean of {n} replicates")
            _draw_band(ax, band, f"C{k}", label, f"{label} band", 0.2, runs="replicates")
        u_perf = perf[perf["run"].isin(set(on_u["b_run"]))]
        _with_perf(ax, curve_band(u_perf, step="step", run="run").set_index("step")["mean"],
                   f"U validation performance, mean of {u_perf['run'].nunique()} runs")
        return
    for label, rows in _u_curves(agr[(agr["b_measure"] == "xi") & (agr["b_role"] == "U")], star):
        c = rows.groupby("b_step")["value"].mean()
        ax.plot(c.index, c.values, "o-", ms=3, label=label, gid=label)
    _with_perf(ax, perf[perf["role"] == "U"].groupby("step")["value"].mean(), "U validation performance")


def agreement_curves_figure(dataset: str, agr: pd.DataFrame, perf: pd.DataFrame, path,
                            replicates: pd.DataFrame | None = None) -> None:
    """Left: each run's attention against alpha* over its own training (every B seed, and the
    frozen run F whose attention learns alone), with B's performance. Right: what the uniform
    run's probe xi^uf agrees with over its training: alpha*, the proxy xi^px and saliency g*;
    over Table 2's replicates (``replicates``: results/agreement/<dataset>.replicates.parquet)
    where there are two or more, with their band."""
    star = best_step(perf[perf["role"] == "A"])
    perf = primary(perf)
    agr = agr[agr["metric"] == "agreement"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 5.4), sharey=True)
    vs_star = agr[(agr["a_role"] == "A") & (agr["a_step"] == star) & (agr["b_measure"] == "alpha")]
    for run, c in vs_star[vs_star["b_role"] == "B"].groupby("b_run"):
        left.plot(c["b_step"], c["value"], "o-", ms=3, label=rf"A($\alpha^*$, $\alpha$ of {run})")
    frozen = agr[(agr["a_role"] == "F") & (agr["b_role"] == "A") & (agr["b_measure"] == "alpha")]
    for run, c in frozen.groupby("a_run"):
        left.plot(c["a_step"], c["value"], "s--", ms=3, label=rf"A($\alpha$ of {run} (frozen), $\alpha^*$)")
    left.set_title(f"{dataset}: attention vs alpha* over training")
    _with_perf(left, perf[perf["role"] == "B"].groupby("step")["value"].mean(), "B validation performance")
    _right_panel(right, agr, perf, star, replicates)
    right.set_title(f"{dataset}: the uniform run's probe over its training")
    for ax in (left, right):
        step_axis(ax)
        ax.set_xlabel("training step")
        percent_axis(ax, "agreement (%)" if ax is left else "")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def heatmap_figure(dataset: str, probes: dict, steps: dict, labels, n_examples: int, path) -> None:
    """alpha* and xi^uf side by side for the first ``n_examples`` probed examples.

    ``probes``/``steps``: {"alpha*": table, "xi^uf": table} and their steps;
    ``labels(example)`` -> (source tokens, target tokens).
    """
    measures = {"alpha*": load_measure(probes["alpha*"], "alpha", steps["alpha*"]),
                "xi^uf": load_measure(probes["xi^uf"], "xi", steps["xi^uf"])}
    fig, axes = plt.subplots(n_examples, 2, figsize=(10, 3.2 * n_examples), squeeze=False)
    for ex in range(n_examples):
        src, tgt = labels(ex)
        for col, (name, m) in enumerate(measures.items()):
            rows = m.keys // KEY_T == ex
            mat = m.values[rows][:, : len(src)]
            if name == "xi^uf":  # scores per row: show each row's softmax over source positions
                mat = np.exp(mat - np.nanmax(mat, axis=1, keepdims=True))
                mat = mat / np.nansum(mat, axis=1, keepdims=True)
            ax = axes[ex, col]
            image = ax.imshow(mat, aspect="auto", cmap="viridis", vmin=0)
            fig.colorbar(image, ax=ax, fraction=0.04, pad=0.02).ax.tick_params(labelsize=6)  # weight per row
            ax.set_xticks(range(len(src)), src, rotation=90, fontsize=6)
            ax.set_yticks(range(len(tgt)), tgt, fontsize=6)
            ax.set_xlabel("source token", fontsize=7)
            ax.set_ylabel("output token" if len(tgt) > 1 else "", fontsize=7)
            ax.set_title(f"example {ex}: {name} (step {steps[name]})", fontsize=8)
    fig.suptitle(f"{dataset}: attention of the standard run vs the uniform run's lexical probe (row softmax)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
