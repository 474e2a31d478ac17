"""Table 2 / Table 10 derivation from a hand-built long agreement table."""

import numpy as np
import pandas as pd
import pytest

from attnlearn.agreement.tables import contextualized, markdown_report, table2, table10


def rows(a, b, steps, values, a_step=200, metric="agreement", baseline=0.1, b_run=None):
    (a_role, a_measure), (b_role, b_measure) = a, b
    return [{"dataset": "d", "a_measure": a_measure, "a_run": a_role, "a_role": a_role, "a_step": a_step,
             "b_measure": b_measure, "b_run": b_run or b_role, "b_role": b_role, "b_step": s, "metric": metric,
             "value": v, "baseline": baseline + s / 1000, "n_rows": 10} for s, v in zip(steps, values)]


@pytest.fixture
def tables():
    steps = [0, 100, 200]
    agr = pd.DataFrame(
        rows(("A", "alpha"), ("U", "xi"), steps, [0.1, 0.5, 0.4])
        + rows(("A", "grad"), ("U", "xi"), steps, [0.2, 0.3, 0.1])
        + rows(("P", "xi_px"), ("U", "xi"), steps, [0.6, 0.2, 0.2], a_step=5)
        + rows(("A", "alpha"), ("B", "xi"), steps, [0.0, 0.2, 0.6], b_run="B1")
        + rows(("A", "alpha"), ("B", "xi"), steps, [0.0, 0.4, 0.2], b_run="B2")
        + rows(("A", "alpha"), ("B", "alpha"), steps, [0.1, 0.45, 0.9], b_run="B1")
        + rows(("A", "alpha"), ("B", "alpha"), steps, [0.1, 0.65, 0.9], b_run="B2")
        + [dict(r, a_step=s, b_step=200) for r, s in zip(rows(("F", "alpha"), ("A", "alpha"), steps, [0.2, 0.3, 0.25]),
                                                          steps)]
        + [dict(r, a_step=s, b_step=200) for r, s in zip(rows(("U", "xi"), ("A", "alpha"), steps, [0.3, 0.7, 0.6]),
                                                          steps)])
    perf = pd.DataFrame([{"dataset": "d", "run": r, "role": r[0], "step": s, "metric": "accuracy", "value": v}
                         for r, vals in {"A": [0.5, 0.8, 0.9], "B1": [0.5, 0.6, 0.9], "B2": [0.5, 0.8, 0.9]}.items()
                         for s, v in zip(steps, vals)])
    return agr, perf


def test_table2_takes_maxima_and_the_baseline_at_the_max(tables):
    agr, perf = tables
    row = table2(agr, perf, {"d": "classification"}).iloc[0]
    assert row["agr_alpha_xi_uniform"] == 0.5 and row["random_baseline"] == pytest.approx(0.2)
    assert row["agr_grad_xi_uniform"] == 0.3 and row["agr_xi_proxy_xi_uniform"] == 0.6
    assert row["agr_alpha_xi_standard"] == pytest.approx(0.4)  # mean over B1, B2 per step, then max
    assert row["best_perf"] == 0.9


def test_xi_standard_reads_the_first_b_run_as_the_reference_does(tables):
    agr, perf = tables  # B1's curve peaks at 0.6, B2's at 0.4, their mean at 0.4
    first = table2(agr, perf, {"d": "classification"}, xi_b_runs={"d": "B1"}).iloc[0]
    assert first["agr_alpha_xi_standard"] == pytest.approx(0.6)
    assert first["ctx_perf_xi_standard"] == pytest.approx(0.9)  # first C > 0.6 at step 200
    assert table2(agr, perf, {"d": "classification"}, xi_b_runs={"d": "B2"}).iloc[0]["agr_alpha_xi_standard"] == 0.4


def test_contextualized_performance_is_at_the_first_step_above(tables):
    agr, perf = tables
    row = table2(agr, perf, {"d": "classification"}).iloc[0]
    # C(step) = mean(alpha* vs alpha^B) = [0.1, 0.55, 0.9]; mean B performance = [0.5, 0.7, 0.9]
    assert row["ctx_perf_xi_uniform"] == pytest.approx(0.7)  # first C > 0.5 at step 100
    assert row["ctx_perf_xi_standard"] == pytest.approx(0.7)  # first C > 0.4 at step 100
    curve = pd.Series([0.1, 0.2], index=[0, 1])
    assert np.isnan(contextualized(0.5, curve, pd.Series([0.3, 0.4], index=[0, 1])))


def test_best_step_of_a_picks_alpha_star(tables):
    agr, perf = tables
    perf = perf.copy()
    perf.loc[(perf.run == "A") & (perf.step == 100), "value"] = 0.95  # now alpha* is at step 100
    row = table2(agr, perf, {"d": "classification"}).iloc[0]
    assert np.isnan(row["agr_alpha_xi_uniform"])  # no rows for a_step=100 in this table


def test_table10(tables):
    agr, perf = tables
    row = table10(agr, perf).iloc[0]
    assert row["agr_alpha_frozen_alpha_star"] == 0.3 and row["agr_xi_uniform_alpha_star"] == 0.7


def test_markdown_shows_percentages(tables):
    agr, perf = tables
    md = markdown_report({"Table 10": table10(agr, perf)})
    assert "## Table 10" in md and "| d | 30.0 | 70.0 |" in md


def test_paper_comparison_sets_our_values_beside_the_papers():
    from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS, paper_comparison

    ours = pd.DataFrame([{"dataset": "sst", **{c: 0.5 for c in TABLE2_VALUE_COLUMNS}},
                         {"dataset": "synthetic_mt", **{c: 0.5 for c in TABLE2_VALUE_COLUMNS}}])
    t11 = pd.DataFrame([{"dataset": "sst", "agr_xi_proxy_xi_uniform": 0.3, "agr_xi_logreg_xi_uniform": 0.4}])
    bleu = pd.DataFrame([{"dataset": "multi30k", **{c: 0.1 for c in TABLE2_VALUE_COLUMNS}}])
    cmp = paper_comparison(ours, t11, bleu).set_index(["table", "column"])
    assert set(cmp["dataset"]) == {"sst", "multi30k"}  # the paper has no synthetic rows
    assert cmp.loc[("table2", "agr_alpha_xi_uniform"), "paper"] == pytest.approx(0.1985)  # two decimals
    assert cmp.loc[("table2", "best_perf"), "difference"] == pytest.approx(0.5 - 0.8353)
    assert ("table2", "ctx_perf_grad_xi_uniform") not in cmp.index  # not a column of ours here
    assert cmp.loc[("table2_bleu", "best_perf"), "paper"] == pytest.approx(0.3789)  # Multi30k's BLEU 37.9
    assert cmp.loc[("table11", "agr_xi_logreg_xi_uniform"), "paper"] == pytest.approx(0.46)


def test_table11_and_seed_spread(tables):
    from attnlearn.agreement.tables import seed_spread, table11

    agr, perf = tables
    lr = pd.DataFrame(rows(("P", "xi_lr"), ("U", "xi"), [0, 100, 200], [0.3, 0.7, 0.5], a_step=5))
    t11 = table11(pd.concat([agr, lr])).iloc[0]
    assert (t11["agr_xi_proxy_xi_uniform"], t11["agr_xi_logreg_xi_uniform"]) == (0.6, 0.7)
    assert table11(agr).empty  # no logistic regression rows: no Table 11 row
    spread = seed_spread(agr, perf).set_index("quantity")
    assert spread.loc["agr_alpha_xi_standard", ["n_runs", "mean", "min", "max"]].tolist() == [2, 0.5, 0.4, 0.6]
    assert spread.loc["agr_alpha_xi_standard", "sd"] == pytest.approx(np.std([0.6, 0.4], ddof=1))
    assert spread.loc["best_perf_standard", "n_runs"] == 3


def test_step_axis_starts_at_step_zero():
    """Agreement curves over training steps: a symlog axis left to autoscale starts near
    -10^2 and spends half the figure on negative steps."""
    import matplotlib.pyplot as plt

    from attnlearn.reporting.plots import step_axis

    fig, ax = plt.subplots()
    ax.plot([0, 5, 10, 100, 1000], [0.1, 0.2, 0.4, 0.6, 0.7])
    step_axis(ax)
    assert ax.get_xscale() == "symlog" and ax.get_xlim()[0] == 0 and ax.get_xlim()[1] >= 1000
    plt.close(fig)


def test_markdown_tables_render_as_an_html_page():
    from attnlearn.reporting.pages import markdown_html
    from attnlearn.agreement.tables import markdown_report

    page = markdown_html("# Tables\n\n" + markdown_report({"Table 2": pd.DataFrame(
        {"dataset": ["a<b"], "agr": [0.5], "ctx": [float("nan")]})}))
    assert "<h1>Tables</h1>" in page and "<h2>Table 2</h2>" in page
    assert "<th>dataset</th><th>agr</th><th>ctx</th>" in page
    assert "<td>a&lt;b</td><td class='num'>50.0</td><td class='num'>&ndash;</td>" in page


def test_contextualized_figure_draws_table_2s_xi_b_value(tables, tmp_path):
    """The figure's max A(alpha*, xi^B) line is Table 2's: the first B run's curve where
    tables.xi_standard is first (it had drawn the B runs' mean beside the table's first)."""
    from attnlearn.reporting.plots import contextualized_figure

    agr, perf = tables
    drawn = contextualized_figure("d", "classification", agr, perf, tmp_path / "c.png", xi_b_run="B1")
    assert drawn["agr_alpha_xi_standard"] == pytest.approx(0.6)
    assert (tmp_path / "c.png").stat().st_size > 0


def test_bleu_variant_picks_alpha_star_at_the_best_bleu_checkpoint(tables):
    """Appendix: with BLEU as the performance, alpha* is run A's attention at its best-BLEU
    checkpoint (100 here), not at its best token-accuracy one (200)."""
    agr, perf = tables
    bleu = perf.assign(metric="bleu", value=lambda p: p["value"].where(p["step"] != 100, 0.95))
    at_100 = pd.DataFrame(rows(("A", "alpha"), ("U", "xi"), [0, 100, 200], [0.2, 0.25, 0.3], a_step=100)
                          + rows(("A", "alpha"), ("B", "alpha"), [0, 100, 200], [0.1, 0.2, 0.5], a_step=100, b_run="B1"))
    row = table2(pd.concat([agr, at_100]), pd.concat([perf, bleu]), {"d": "translation"}, perf_metric="bleu").iloc[0]
    assert row["agr_alpha_xi_uniform"] == 0.3 and row["best_perf"] == 0.95
    assert row["ctx_perf_xi_uniform"] == pytest.approx(0.9)  # C = 0.5 > 0.3 first at step 200
    assert table2(pd.concat([agr, at_100]), pd.concat([perf, bleu]), {"d": "translation"}).iloc[0][
        "agr_alpha_xi_uniform"] == 0.5  # the token-accuracy table keeps step 200


def test_appendix_contextualizes_the_proxy_and_saliency_columns(tables):
    agr, perf = tables
    row = table2(agr, perf, {"d": "classification"}).iloc[0]
    # C(step) = [0.1, 0.55, 0.9]: A(xi^px, xi^uf) = 0.6 is first passed at step 200 (perf 0.9),
    # A(g*, xi^uf) = 0.3 at step 100 (perf 0.7)
    assert row["ctx_perf_xi_proxy_xi_uniform"] == pytest.approx(0.9)
    assert row["ctx_perf_grad_xi_uniform"] == pytest.approx(0.7)


def test_tables_md_says_what_was_found_in_one_unit_with_a_legend():
    """tables.md opens with the claims' verdicts in words (n = 1 said to mean no interval), uses
    percent throughout (the claims too), explains every column in the paper's notation, marks
    bounds past 0 or 100, prints undefined values one way and says why a table is empty."""
    from attnlearn.agreement.claims import claims_table
    from attnlearn.agreement.readable import PAST, SHARED, document, claims_frame, intervals_frame
    from attnlearn.agreement.replicates import interval_table

    base = {"independent": True, "random_baseline": 0.1, "agr_xi_proxy_xi_uniform": 0.5, "agr_grad_xi_uniform": 0.5,
            "agr_alpha_xi_standard": 0.6, "ctx_perf_xi_uniform_conv": 0.9, "ctx_perf_xi_uniform": 0.9,
            "ctx_perf_xi_standard": 0.8, "ctx_perf_xi_standard_conv": 0.8, "best_perf": 0.95,
            "ctx_perf_xi_proxy_xi_uniform": 0.9, "ctx_perf_grad_xi_uniform": 0.9}
    rotate = {r: {"a_run": f"standard-s{r}", "b_runs": [f"standard-s{r % 3 + 1}"]} for r in (1, 2, 3)}
    reps = pd.DataFrame([{**base, "dataset": "wide", "replicate": r, "agr_alpha_xi_uniform": v, **rotate[r]}
                         for r, v in enumerate([0.05, 0.5, 0.9], 1)]
                        + [{**base, "dataset": "one", "replicate": 1, "agr_alpha_xi_uniform": 0.4, **rotate[1]}])
    claims = claims_table(reps, blind={"wide": 0.5, "one": 0.5})
    md = document({"Table 2 over replicates": intervals_frame(interval_table(reps)),
                   "Claims": claims_frame(claims), "Crossed design": pd.DataFrame(columns=["dataset"])},
                  claims, ["wide", "one"], {"Crossed design": "the replicates are not a crossed design"})
    found = md.split("## What was found")[1].split("## Columns")[0]
    assert "**wide** (n = 3 replicates)" in found and "read as one family (Holm" in found
    assert "**one** (n = 1 replicate): one draw has no interval" in found
    legend = md.split("## Columns")[1].split("## Table 2")[0]
    assert "`agr_alpha_xi_uniform`: A(α*, ξ^uf)" in legend and "`ctx_perf_xi_standard_conv`" in legend
    assert PAST in md.split("## Table 2 over replicates")[1]  # wide's A(alpha*, xi^uf): 48.3 [-57.7†, ...]
    assert "nan" not in md and "None" not in md
    claim_rows = [line for line in md.split("## Claims")[1].splitlines() if line.startswith("| wide")]
    comparable = next(row for row in claim_rows if "uniform_probe_comparable_to_standard" in row)
    assert comparable.split("|")[6].strip() == "50.0"  # the threshold 0.5 in percent, as every value
    assert "No rows: the replicates are not a crossed design." in md
    # wide's replicates share their B runs (rotate): the columns and claims that read B say so
    assert f"3/3 {SHARED}" in next(row for row in md.splitlines() if row.startswith("| wide | agr_alpha_xi_standard"))
    assert SHARED not in next(row for row in md.splitlines() if row.startswith("| wide | agr_alpha_xi_uniform"))
    assert comparable.split("|")[4].strip() == f"3 {SHARED}"
    # the claim that reads B over shared B runs says so where its numbers are
    assert f"- C-perf(A(alpha*, xi^uf)) (paper's convention) - an input-blind predictor's performance {SHARED}:" in found
    assert f"{SHARED}: read over replicates that share their B runs" in found


def test_tables_md_opens_with_the_findings_in_words_with_their_numbers():
    """What was found says each claim's number with its interval (not its identifier alone), its
    threshold, its verdicts and p, then Table 2's columns against the paper's values with
    their intervals, a deterministic column to the decimals that tell it from the paper's;
    then the legend and the tables, in that order, whatever the config."""
    from attnlearn.agreement.claims import claims_table
    from attnlearn.agreement.readable import claims_frame, document, intervals_frame
    from attnlearn.agreement.replicates import interval_table

    values = {"agr_alpha_xi_uniform": [0.18, 0.22, 0.21], "agr_xi_proxy_xi_uniform": [0.60, 0.62, 0.61],
              "agr_grad_xi_uniform": [0.2, 0.25, 0.3], "agr_alpha_xi_standard": [0.3, 0.28, 0.26],
              "random_baseline": [0.0797] * 3, "ctx_perf_xi_uniform": [0.7, 0.75, float("nan")],
              "ctx_perf_xi_uniform_conv": [0.7, 0.75, 0.8], "ctx_perf_xi_standard": [0.8] * 3,
              "ctx_perf_xi_standard_conv": [0.8] * 3, "best_perf": [0.83, 0.84, 0.82],
              "ctx_perf_xi_proxy_xi_uniform": [0.8] * 3, "ctx_perf_grad_xi_uniform": [0.8] * 3}
    reps = pd.DataFrame({"dataset": "sst", "replicate": [1, 2, 3], "independent": True,
                         "a_run": ["standard-s1", "standard-s2", "standard-s3"],
                         "b_runs": [["standard-s4"], ["standard-s5"], ["standard-s6"]], **values})
    claims, intervals = claims_table(reps, blind={"sst": 0.5}), interval_table(reps, {"sst": 872})
    md = document({"Table 2 over replicates": intervals_frame(intervals), "Claims": claims_frame(claims)},
                  claims, ["sst"], intervals=intervals)
    assert md.index("## What was found") < md.index("## Columns") < md.index("## Table 2 over replicates") \
        < md.index("## Claims")
    found = md.split("## What was found")[1].split("## Columns")[0]
    first = claims.iloc[0]
    estimate = claims_frame(claims).iloc[0]["estimate [95% CI]"]  # the claims table's own cell
    assert f"  - {first['statistic']}: {estimate}, threshold 0.0: {first['verdict']} alone, " in found
    assert "alpha_xi_uniform_above_baseline" not in found  # words, not identifiers
    paper = next(line for line in found.splitlines() if "Table 2 against the paper" in line)
    # 60-62 against the paper's 33.57: outside, with the 872 texts' error held; 7.97 in every
    # replicate against 8.39: inside once that error is (a per-text value varies by at most p(1 - p))
    outside, inside = paper.split("outside our interval: ")[1].split("; inside: ")
    assert "A(ξ^px, ξ^uf) 61" in outside and "against the paper's 33.57" in outside
    assert "the random baseline 8.0 [2.4, 13.6] against the paper's 8.39" in inside
    iv = intervals.set_index("column").loc["agr_alpha_xi_uniform"]
    assert (f"A(α*, ξ^uf) {100 * iv['mean']:.1f} [{100 * iv['pi_low']:.1f}, {100 * iv['pi_high']:.1f}] "
            "against the paper's 19.85") in inside
    assert "contextualized A(α*, ξ^uf) 72.5 [" in inside and "(n = 2 of 3) against the paper's 78.16" in inside
    assert "nan" not in found and "None" not in found


def test_an_interval_prints_the_decimals_that_tell_it_from_the_papers_value():
    """"6.2 [6.2, 6.2] against 6.20, outside" tells a reader nothing: a zero-width interval is
    printed to the decimals that differ from the paper's two, and any interval to the decimals at
    which its printed bounds read the paper's value as the bounds do."""
    from attnlearn.agreement.readable import interval

    assert interval(0.06196, 0.06196, 0.06196, against=0.062) == "6.196 [6.196, 6.196]"
    assert interval(0.062, 0.062, 0.062, against=0.062) == "6.20 [6.20, 6.20]"  # the paper's value: inside
    assert interval(0.052, 0.05114, 0.053, against=0.0511) == "5.200 [5.114, 5.300]"  # 5.1 would read inside
    assert interval(0.485, 0.245, 0.726, against=0.6508) == "48.5 [24.5, 72.6]"  # one decimal says it
    assert interval(0.06196, 0.06196, 0.06196) == "6.2 [6.2, 6.2]"  # no paper value: nothing to tell apart
    assert interval(float("nan"), float("nan"), float("nan"), against=0.062) == "- [-, -]"


def _probes(rng, measures_by_run, steps=(0, 10), examples=20, length=5):
    """Random probe tables: run -> the measures it carries, every step and example one row."""
    from attnlearn.data.probe_table import probe_table

    out = {}
    for run, measures in measures_by_run.items():
        run_steps = steps if not run.startswith("proxy") else (0,)
        n = len(run_steps) * examples
        out[run] = probe_table({"step": np.repeat(run_steps, examples), "example": np.tile(np.arange(examples),
                                len(run_steps)), "t": np.zeros(n), "n": np.full(n, length),
                                "measures": {m: rng.random(n * length) for m in measures}})
    return out


def test_table10_per_replicate_is_each_replicates_own_single_draw_table10():
    """Replicate r with a frozen run F_r: Table 10 is what the single-draw table10 gives on its
    own runs (A_r, U_r, F_r, alpha*_r at A_r's best step), replicate 1 the pipeline's
    table10.parquet row; a replicate without a frozen run has no row, and adding frozen runs
    leaves Table 2's replicates as they were."""
    from attnlearn.agreement.compare import Comparator, performance_frame, replicate_design, replicate_frame
    from attnlearn.agreement.replicates import replicate_table
    from attnlearn.agreement.tables import TABLE10_REPLICATE_COLUMNS, table10_replicates

    rng = np.random.default_rng(0)
    standard, uniform, proxies, frozen = ["standard-s1", "standard-s2"], ["uniform-s1", "uniform-s2"], \
        ["proxy-s0", "proxy-s1"], ["frozen-s1", "frozen-s2", "frozen-s3"]
    probes = _probes(rng, {**{r: ("alpha", "xi") for r in standard}, **{r: ("xi",) for r in uniform},
                           **{r: ("alpha",) for r in frozen}, **{p: ("xi_px",) for p in proxies}})
    perf = {r: pd.DataFrame({"step": [0, 10], "metric": "accuracy", "value": v})
            for r, v in zip(standard + uniform + frozen, rng.random((7, 2)))}
    perf_frame = performance_frame("d", perf)
    with_f = replicate_design(standard, uniform, proxies, frozen=frozen[:1])  # replicate 2 has no F
    frame = replicate_frame("d", probes, perf, with_f)
    table = table10_replicates(frame, perf_frame, {"d": with_f})
    assert list(table.columns) == TABLE10_REPLICATE_COLUMNS
    assert table[["replicate", "a_run", "u_run", "f_run"]].values.tolist() == [
        [1, "standard-s1", "uniform-s1", "frozen-s1"]]
    runs = {r: t for r, t in probes.items() if not r.startswith("proxy")}
    single = table10(Comparator("d", runs, perf, probes["proxy-s0"]).build(), perf_frame).iloc[0]  # F = frozen-s1
    assert table.iloc[0]["agr_alpha_frozen_alpha_star"] == single["agr_alpha_frozen_alpha_star"]
    assert table.iloc[0]["agr_xi_uniform_alpha_star"] == single["agr_xi_uniform_alpha_star"]
    both = replicate_design(standard, uniform, proxies, frozen=frozen[1:])  # other frozen runs, one each
    table = table10_replicates(replicate_frame("d", probes, perf, both), perf_frame, {"d": both})
    assert list(table["f_run"]) == ["frozen-s2", "frozen-s3"]
    order = ["standard-s2", "standard-s1", "uniform-s2", "frozen-s3"]  # replicate 2 as a single draw
    own = {r: probes[r] for r in order}
    single = table10(Comparator("d", own, {r: perf[r] for r in order}, probes["proxy-s1"]).build(),
                     performance_frame("d", {r: perf[r] for r in order})).iloc[0]
    assert table.iloc[1][["agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]].tolist() == [
        single["agr_alpha_frozen_alpha_star"], single["agr_xi_uniform_alpha_star"]]
    assert table[["agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]].notna().all().all()
    # Table 2 per replicate reads none of Table 10's rows
    none = replicate_design(standard, uniform, proxies)
    tasks = {"d": "classification"}
    pd.testing.assert_frame_equal(replicate_table(frame, perf_frame, tasks, {"d": with_f}),
                                  replicate_table(replicate_frame("d", probes, perf, none), perf_frame, tasks,
                                                  {"d": none}))
    empty = table10_replicates(replicate_frame("d", probes, perf, none), perf_frame, {"d": none})
    assert empty.empty and list(empty.columns) == TABLE10_REPLICATE_COLUMNS


def test_table11_per_replicate_reads_the_one_logistic_regression_against_each_replicates_own_uniform_run():
    """Table 11 once per replicate (table11_replicates): the L2 logistic regression is fitted once
    per dataset, by the first proxy seed's job, so until now only replicate 1 (whose proxy is that
    one) had A(xi^lr, xi^uf). Replicate 1 is the single-draw table11 on its runs; replicate 2
    reads the same regression against its own uniform run and its own proxy's xi^px (Table 2's
    column); Table 2's replicates are as they were."""
    from attnlearn.agreement.compare import (Comparator, performance_frame, replicate_design, replicate_frame,
                                             replicate_roles)
    from attnlearn.agreement.replicates import replicate_table
    from attnlearn.agreement.tables import TABLE11_REPLICATE_COLUMNS, table11, table11_replicates

    rng = np.random.default_rng(3)
    standard, uniform, proxies = ["standard-s1", "standard-s2"], ["uniform-s1", "uniform-s2"], ["proxy-s0", "proxy-s1"]
    probes = _probes(rng, {**{r: ("alpha", "xi", "grad") for r in standard}, **{r: ("xi",) for r in uniform},
                           "proxy-s0": ("xi_px", "xi_lr"), "proxy-s1": ("xi_px",)})
    perf = {r: pd.DataFrame({"step": [0, 10], "metric": "accuracy", "value": v})
            for r, v in zip(standard + uniform, rng.random((4, 2)))}
    design, tasks = replicate_design(standard, uniform, proxies), {"d": "classification"}
    frame = replicate_frame("d", probes, perf, design)
    table = table11_replicates(frame, {"d": design})
    assert list(table.columns) == TABLE11_REPLICATE_COLUMNS and table["replicate"].tolist() == [1, 2]
    assert table[["u_run", "p_run"]].values.tolist() == [["uniform-s1", "proxy-s0"], ["uniform-s2", "proxy-s1"]]
    single = lambda a, b, u, p: table11(Comparator("d", {r: probes[r] for r in (a, b, u)},
                                                   {r: perf[r] for r in (a, b, u)}, probes[p]).build()).iloc[0]
    first = single("standard-s1", "standard-s2", "uniform-s1", "proxy-s0")
    assert table.iloc[0]["agr_xi_proxy_xi_uniform"] == pytest.approx(first["agr_xi_proxy_xi_uniform"])
    assert table.iloc[0]["agr_xi_logreg_xi_uniform"] == pytest.approx(first["agr_xi_logreg_xi_uniform"])
    second = single("standard-s2", "standard-s1", "uniform-s2", "proxy-s0")  # the regression against U_2
    assert table.iloc[1]["agr_xi_logreg_xi_uniform"] == pytest.approx(second["agr_xi_logreg_xi_uniform"])
    reps = replicate_table(frame, performance_frame("d", perf), tasks, {"d": design})
    assert table.iloc[1]["agr_xi_proxy_xi_uniform"] == pytest.approx(reps.iloc[1]["agr_xi_proxy_xi_uniform"])
    assert table.iloc[1]["agr_xi_proxy_xi_uniform"] != pytest.approx(second["agr_xi_proxy_xi_uniform"])
    lr_rows = frame[frame["a_measure"] == "xi_lr"]
    assert lr_rows.groupby("replicate")["a_role"].first().to_dict() == {1: "P", 2: "L"}
    without = {r: t for r, t in probes.items() if r != "proxy-s0"} | {"proxy-s0": probes["proxy-s0"].drop(["xi_lr"])}
    plain = replicate_table(replicate_frame("d", without, perf, design), performance_frame("d", perf), tasks,
                            {"d": design})
    pd.testing.assert_frame_equal(reps, plain)
    assert "proxy-s0" not in replicate_roles(design[1])


def test_kendall_per_replicate_is_each_replicates_own_table2_kendall():
    """The appendix's Kendall's tau once per replicate (table2_kendall_replicates): replicate 1
    is the pipeline's table2_kendall row (the single-draw comparator on the same runs),
    replicate 2 the single draw on its own runs, but for the columns that read B, left out
    where the B runs are the other replicate's A runs (a pool leaves them out; they were most
    of the cost); a replicate whose B runs are its own keeps them."""
    from attnlearn.agreement.compare import (Comparator, performance_frame, replicate_design, replicate_frame,
                                             without_shared_b)
    from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
    from attnlearn.agreement.replicates import B_COLUMNS, KENDALL_REPLICATE_COLUMNS, kendall_replicate_table

    rng = np.random.default_rng(1)
    standard, uniform, proxies = ["standard-s1", "standard-s2"], ["uniform-s1", "uniform-s2"], ["proxy-s0", "proxy-s1"]
    probes = _probes(rng, {**{r: ("alpha", "xi", "grad") for r in standard}, **{r: ("xi",) for r in uniform},
                           **{p: ("xi_px",) for p in proxies}})
    perf = {r: pd.DataFrame({"step": [0, 10], "metric": "accuracy", "value": v})
            for r, v in zip(standard + uniform, rng.random((4, 2)))}
    design, tasks = replicate_design(standard, uniform, proxies), {"d": "classification"}
    frame = replicate_frame("d", probes, perf, without_shared_b(design), metrics=("kendall_tau",))
    assert set(frame["metric"]) == {"kendall_tau"} and "B" not in set(frame["b_role"])
    table = kendall_replicate_table(frame, performance_frame("d", perf), tasks, {"d": design})
    assert list(table.columns) == KENDALL_REPLICATE_COLUMNS and table["replicate"].tolist() == [1, 2]
    for rep, a, u, p in ((0, "standard-s1", "uniform-s1", "proxy-s0"), (1, "standard-s2", "uniform-s2", "proxy-s1")):
        b = design[rep]["xi_b_run"]
        order = [a, b, u]
        single = table2(Comparator("d", {r: probes[r] for r in order}, {r: perf[r] for r in order}, probes[p]).build(),
                        performance_frame("d", {r: perf[r] for r in order}), tasks, "kendall_tau").iloc[0]
        mine = table.iloc[rep]
        for column in TABLE2_VALUE_COLUMNS:
            if column in B_COLUMNS:
                assert np.isnan(mine[column]), (rep, column)
            else:
                assert mine[column] == pytest.approx(single[column], nan_ok=True), (rep, column)
    assert table["agr_alpha_xi_uniform"].notna().all() and (table["random_baseline"] == 0).all()
    # one replicate whose B run is no other replicate's A: its B columns are kept, as the single draw's
    own = replicate_design(standard, uniform[:1], proxies[:1])
    assert without_shared_b(own) == own
    kept = kendall_replicate_table(replicate_frame("d", probes, perf, own, metrics=("kendall_tau",)),
                                   performance_frame("d", perf), tasks, {"d": own}).iloc[0]
    order = ["standard-s1", "standard-s2", "uniform-s1"]
    single = table2(Comparator("d", {r: probes[r] for r in order}, {r: perf[r] for r in order},
                               probes["proxy-s0"]).build(), performance_frame("d", {r: perf[r] for r in order}), tasks,
                    "kendall_tau").iloc[0]
    assert kept["agr_alpha_xi_standard"] == pytest.approx(single["agr_alpha_xi_standard"])
    assert not np.isnan(kept["agr_alpha_xi_standard"])
