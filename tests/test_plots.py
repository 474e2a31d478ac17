"""The contextualized-agreement figure (paper Figure 2): the B runs' mean curve with its band."""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnlearn.reporting.plots import band_label, contextualized_figure, curve_band

STEPS = [0, 10, 100, 1000]
STAR = 1000
# C(step) of each B run, and each B run's validation accuracy
C = {"B1": [0.10, 0.40, 0.60, 0.80], "B2": [0.15, 0.30, 0.70, 0.85], "B3": [0.05, 0.50, 0.65, 0.95]}
PERF = {"B1": [0.50, 0.60, 0.80, 0.90], "B2": [0.50, 0.70, 0.85, 0.92], "B3": [0.50, 0.55, 0.75, 0.88]}


def rows(a, b, values, a_step=STAR, b_run=None):
    (a_role, a_measure), (b_role, b_measure) = a, b
    return [{"dataset": "d", "a_measure": a_measure, "a_run": a_role, "a_role": a_role, "a_step": a_step,
             "b_measure": b_measure, "b_run": b_run or b_role, "b_role": b_role, "b_step": s,
             "metric": "agreement", "value": v, "baseline": 0.1, "n_rows": 10} for s, v in zip(STEPS, values)]


def frames(b_runs):
    agr = rows(("A", "alpha"), ("U", "xi"), [0.1, 0.3, 0.5, 0.4])
    perf = [{"dataset": "d", "run": "A", "role": "A", "step": s, "metric": "accuracy", "value": v}
            for s, v in zip(STEPS, [0.5, 0.7, 0.8, 0.9])]
    for r in b_runs:
        agr += rows(("A", "alpha"), ("B", "alpha"), C[r], b_run=r)
        agr += rows(("A", "alpha"), ("B", "xi"), [v / 2 for v in C[r]], b_run=r)
        agr += rows(("A", "alpha"), ("B", "alpha"), [0.0] * 4, a_step=10, b_run=r)  # not alpha*'s step
        perf += [{"dataset": "d", "run": r, "role": "B", "step": s, "metric": "accuracy", "value": v}
                 for s, v in zip(STEPS, PERF[r])]
    return pd.DataFrame(agr), pd.DataFrame(perf)


def t_interval(values):
    v = np.asarray(values, dtype=float)
    half = stats.t.ppf(0.975, len(v) - 1) * v.std(ddof=1) / np.sqrt(len(v))
    return v.mean() - half, v.mean() + half


def test_curve_band_is_the_t_interval_with_three_runs_and_min_max_below():
    agr, _ = frames(["B1", "B2", "B3"])
    sel = agr[(agr.b_role == "B") & (agr.b_measure == "alpha") & (agr.a_step == STAR)]
    band = curve_band(sel)
    assert band["step"].tolist() == STEPS and band["n"].tolist() == [3] * 4 and set(band["band"]) == {"t"}
    for i, s in enumerate(STEPS):
        values = [C[r][i] for r in C]
        low, high = stats.t.interval(0.95, 2, loc=np.mean(values), scale=stats.sem(values))
        assert band.loc[i, "mean"] == pytest.approx(np.mean(values))
        assert (band.loc[i, "low"], band.loc[i, "high"]) == pytest.approx((low, high))
    assert band_label(band) == "95% t interval of the mean over 3 B runs"

    two = curve_band(sel[sel.b_run != "B3"])
    assert set(two["band"]) == {"minmax"} and band_label(two) == "min-max over 2 B runs"
    assert two["low"].tolist() == [min(a, b) for a, b in zip(C["B1"], C["B2"])]
    assert two["high"].tolist() == [max(a, b) for a, b in zip(C["B1"], C["B2"])]

    one = curve_band(sel[sel.b_run == "B1"])
    assert one["mean"].tolist() == one["low"].tolist() == one["high"].tolist() == C["B1"]
    assert band_label(one) is None

    mixed = curve_band(sel[~((sel.b_run == "B3") & (sel.b_step == 0))])  # B3 lacks step 0
    assert mixed["band"].tolist() == ["minmax", "t", "t", "t"]
    assert band_label(mixed) == "95% t interval of the mean over B runs (min-max at steps with < 3 runs)"


def _drawn(monkeypatch, agr, perf, path):
    """Draw the figure; return its axes (agreement, performance) instead of closing it."""
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    contextualized_figure("d", "classification", agr, perf, path)
    monkeypatch.undo()
    fig = figs[0]
    ax, ax2 = fig.axes
    return fig, ax, ax2


def _band_bounds(ax, gid):
    """(steps, low, high) of the fill_between tagged ``gid``: at each step its lowest and highest y."""
    (band,) = [c for c in ax.collections if c.get_gid() == gid]
    xy = np.concatenate([p.vertices for p in band.get_paths()])
    steps = sorted(set(xy[:, 0]))
    return (steps, [xy[xy[:, 0] == s, 1].min() for s in steps], [xy[xy[:, 0] == s, 1].max() for s in steps])


def _line(ax, gid):
    (line,) = [ln for ln in ax.lines if ln.get_gid() == gid]
    return list(line.get_xdata()), list(line.get_ydata())


def test_figure_draws_the_b_runs_t_interval_as_a_band(monkeypatch, tmp_path):
    agr, perf = frames(["B1", "B2", "B3"])
    fig, ax, ax2 = _drawn(monkeypatch, agr, perf, tmp_path / "c.png")
    assert (tmp_path / "c.png").stat().st_size > 10_000
    for axis, gid, curves in ((ax, "C", C), (ax2, "perf", PERF)):
        steps, low, high = _band_bounds(axis, f"{gid} band")
        assert steps == STEPS
        bounds = [t_interval([curves[r][i] for r in curves]) for i in range(len(STEPS))]
        assert low == pytest.approx([lo for lo, _ in bounds]) and high == pytest.approx([hi for _, hi in bounds])
        x, y = _line(axis, gid)
        assert x == STEPS and y == pytest.approx(np.mean([curves[r] for r in curves], axis=0))
    labels = ax.get_legend().get_texts()
    assert any(t.get_text() == "C: 95% t interval of the mean over 3 B runs" for t in labels)
    assert any(t.get_text() == "B accuracy: 95% t interval of the mean over 3 B runs" for t in labels)
    # the reference lines stay: max A(alpha*, xi^uf) = 0.5, max A(alpha*, xi^B) = mean of the halves' max
    hlines = {round(ln.get_ydata()[0], 6) for ln in ax.lines if ln.get_gid() is None and len(set(ln.get_ydata())) == 1}
    assert {0.5, 0.1, round(np.mean([C[r][-1] for r in C]) / 2, 6)} <= hlines
    plt.close(fig)


def test_one_b_run_draws_its_curve_and_no_band(monkeypatch, tmp_path):
    agr, perf = frames(["B2"])
    fig, ax, ax2 = _drawn(monkeypatch, agr, perf, tmp_path / "c.png")
    assert not [c for a in (ax, ax2) for c in a.collections if c.get_gid()]
    assert _line(ax, "C") == (STEPS, C["B2"]) and _line(ax2, "perf") == (STEPS, PERF["B2"])
    assert not any("interval" in t.get_text() or "min-max" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close(fig)


def test_figures_show_percent_with_legends_off_the_data(monkeypatch, tmp_path):
    """Both figures' agreement and performance axes read in percent, the tables' unit, and their
    legends sit below the axes, where they cover no curve (agreement_curves' sat inside, on the
    curves' tails). Read from the drawn figures, not their pixels."""
    from matplotlib import ticker

    from attnlearn.reporting.plots import agreement_curves_figure

    agr, perf = frames(["B1", "B2", "B3"])
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    contextualized_figure("d", "classification", agr, perf, tmp_path / "c.png")
    agreement_curves_figure("d", agr, perf, tmp_path / "a.png")
    monkeypatch.undo()
    for fig in figs:
        fig.canvas.draw()
        for ax in fig.axes:
            assert isinstance(ax.yaxis.get_major_formatter(), ticker.PercentFormatter), ax.get_ylabel()
            assert ax.get_ylim() == (0, 1.02)
        for legend in (ax.get_legend() for ax in fig.axes):
            if legend is None:
                continue
            box = legend.get_window_extent()
            for ax in fig.axes:  # entirely below every axes' plotting area
                assert box.y1 <= ax.get_window_extent().y0 + 1, (box, ax.get_window_extent())
    labels = [t.get_text() for t in figs[0].axes[0].get_legend().get_texts()]
    assert any(text.startswith("random baseline = ") and text.endswith("%") for text in labels), labels


def test_replicates_figure_draws_every_replicate_the_interval_and_the_papers_value(tmp_path):
    """Table 2 as distributions: each column's dots are its replicates' values, the bar is
    the prediction interval of table2_intervals, and the cross the paper's value where it has one."""
    from attnlearn.agreement.replicates import interval_table
    from attnlearn.reporting.replicates_figure import replicates_figure

    reps = pd.DataFrame([{"dataset": ds, "replicate": r, "independent": True, **{c: 0.5 for c in REPLICATE_VALUES},
                          "agr_alpha_xi_uniform": v, "a_run": f"standard-s{r}", "b_runs": [f"standard-s{r + 3}"]}
                         for ds in ("sst", "mine")
                         for r, v in enumerate([0.29, 0.49, 0.55], 1)])
    drawn = replicates_figure(reps, interval_table(reps), tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 10_000
    assert drawn["sst"]["agr_alpha_xi_uniform"]["values"] == [0.29, 0.49, 0.55]
    assert drawn["sst"]["agr_alpha_xi_uniform"]["paper"] == pytest.approx(0.1985)
    low, high = drawn["sst"]["agr_alpha_xi_uniform"]["pi"]
    assert low < 0.29 and high > 0.55
    assert np.isnan(drawn["mine"]["agr_alpha_xi_uniform"]["paper"])  # not a paper dataset: no cross


REPLICATE_VALUES = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "agr_alpha_xi_standard",
                    "random_baseline", "ctx_perf_xi_uniform", "ctx_perf_xi_standard", "best_perf",
                    "ctx_perf_xi_uniform_conv", "ctx_perf_xi_standard_conv", "ctx_perf_xi_proxy_xi_uniform",
                    "ctx_perf_grad_xi_uniform"]


def test_replicates_figure_draws_what_table2_intervals_prints_for_every_column_and_dataset(monkeypatch, tmp_path):
    """For synthetic_cls the figure once drew three 'ctx xi^B' dots (the paper's convention,
    mean 99.2) where tables.md prints `-` and the intervals table `1/3 | 98.8`. Every column of
    every dataset now draws the values table2_intervals is computed from: as many dots as its n,
    their mean its mean, its prediction interval, and n/m under a column some replicates leave
    undefined."""
    from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
    from attnlearn.agreement.replicates import interval_table
    from attnlearn.reporting.replicates_figure import replicates_figure

    rng = np.random.default_rng(0)
    reps = pd.DataFrame([{"dataset": ds, "replicate": r, "independent": True,
                          **{c: float(rng.uniform(0.2, 0.9)) for c in REPLICATE_VALUES},
                          "a_run": f"standard-s{r}", "b_runs": [f"standard-s{r + 3}"]}
                         for ds in ("synthetic_cls", "sst", "mine") for r in (1, 2, 3)])
    cls = reps["dataset"] == "synthetic_cls"
    # the case: no B checkpoint reaches the agreement in two replicates; the convention's
    # column stands in the best performance there
    reps.loc[cls & (reps["replicate"] > 1), "ctx_perf_xi_standard"] = np.nan
    reps.loc[cls & (reps["replicate"] == 1), "ctx_perf_xi_standard"] = 0.988
    reps.loc[cls, "ctx_perf_xi_standard_conv"] = [0.988, 0.995, 0.993]
    reps.loc[reps["dataset"] == "mine", "ctx_perf_xi_uniform"] = np.nan  # undefined everywhere
    intervals = interval_table(reps)
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    drawn = replicates_figure(reps, intervals, tmp_path / "r.png")
    monkeypatch.undo()
    for (dataset, column), iv in intervals.set_index(["dataset", "column"]).iterrows():
        if column not in TABLE2_VALUE_COLUMNS:
            continue
        entry = drawn[dataset][column]
        assert entry["n"] == len(entry["values"]) == iv["n"], (dataset, column)
        assert entry["n_replicates"] == iv["n_replicates"]
        if iv["n"]:
            assert np.mean(entry["values"]) == pytest.approx(iv["mean"]) == pytest.approx(entry["mean"])
        else:
            assert np.isnan(iv["mean"]) and np.isnan(entry["mean"])
        assert entry["pi"] == pytest.approx((iv["pi_low"], iv["pi_high"]), nan_ok=True)
    assert set(drawn) == set(intervals["dataset"])
    assert all(set(columns) == set(TABLE2_VALUE_COLUMNS) for columns in drawn.values())
    assert drawn["synthetic_cls"]["ctx_perf_xi_standard"]["values"] == [0.988]  # one dot, not the convention's three
    panels = {ax.get_title().split(":")[0]: ax for ax in figs[0].axes}
    ticks = [t.get_text() for t in panels["synthetic_cls"].get_xticklabels()]
    assert ticks[TABLE2_VALUE_COLUMNS.index("ctx_perf_xi_standard")] == "ctx ξ^B\nn = 1/3"
    assert ticks[0] == "A(α*, ξ^uf)"  # defined in every replicate: the label alone
    assert "- (undefined)" in [t.get_text() for t in panels["mine"].texts]  # undefined everywhere: the tables' mark


def test_agreement_curves_draw_the_replicates_mean_and_band(monkeypatch, tmp_path):
    """agreement_curves.png's right panel over Table 2's replicates (each its own A, U and
    proxy): per curve the replicates' mean and its 95% t band, read from the drawn figure; with
    one replicate, that draw alone and no band."""
    from attnlearn.reporting.plots import agreement_curves_figure

    agr, perf = frames(["B1", "B2", "B3"])
    curves = {1: [0.1, 0.3, 0.5, 0.4], 2: [0.2, 0.4, 0.6, 0.6], 3: [0.1, 0.2, 0.7, 0.5]}
    # each replicate's alpha* at its own A's best step (replicate 2's A peaks earlier)
    reps = pd.concat([pd.DataFrame(rows(("A", "alpha"), ("U", "xi"), v, b_run=f"U{r}", a_step=100 if r == 2 else STAR))
                      .assign(replicate=r) for r, v in curves.items()], ignore_index=True)
    perf = pd.concat([perf] + [pd.DataFrame({"dataset": "d", "run": f"U{r}", "role": "U" if r == 1 else "-",
                                             "step": STEPS, "metric": "accuracy", "value": 0.5})
                               for r in curves], ignore_index=True)
    figs = []
    monkeypatch.setattr(plt, "close", figs.append)
    agreement_curves_figure("d", agr, perf, tmp_path / "a.png", reps)
    agreement_curves_figure("d", agr, perf, tmp_path / "b.png", reps[reps["replicate"] == 1])
    monkeypatch.undo()
    label = r"A($\alpha^*$, $\xi^{uf}$)"
    right = figs[0].axes[1]
    x, y = _line(right, label)
    assert x == STEPS and y == pytest.approx(np.mean(list(curves.values()), axis=0))
    steps, low, high = _band_bounds(right, f"{label} band")
    bounds = [t_interval([curves[r][i] for r in curves]) for i in range(len(STEPS))]
    assert steps == STEPS and low == pytest.approx([lo for lo, _ in bounds])
    assert high == pytest.approx([hi for _, hi in bounds])
    one = figs[1].axes[1]
    assert _line(one, label) == (STEPS, [0.1, 0.3, 0.5, 0.4]) and not [c for c in one.collections if c.get_gid()]
    for fig in figs:
        plt.close(fig)
