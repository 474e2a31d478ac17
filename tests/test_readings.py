"""What each replicate's A(alpha*, xi^uf) reads, and the tests over replicates that ask whether
the column follows a reading or falls into two modes (attnlearn.agreement.readings)."""

import shutil

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnlearn.agreement.metric import KEY_T, Measure
from attnlearn.agreement.readings import (CENTRAL, READINGS, entropy, modes_test, readings_tests,
                                          replicate_reading)
from attnlearn.reporting.row_markdown import boundary_sentence
from conftest import rows_module


def test_entropy_is_zero_for_a_point_mass_and_one_for_uniform_attention_over_each_rows_own_length():
    alpha = np.array([[1.0, 0.0, np.nan], [1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, np.nan], [1.0, np.nan, np.nan]])
    # the one-position row has no choice to make and is left out
    assert entropy(alpha) == pytest.approx((0 + 1 + 1) / 3)


def test_a_replicates_reading_names_the_words_each_measure_puts_first():
    names = np.array(["<s>", "</s>", "free", "call", "hi"], dtype=object)
    sources = np.array([[0, 2, 3, 1], [0, 4, 2, 1], [0, 3, 4, 1]])
    keys = np.arange(3) * KEY_T
    alpha = Measure(keys, np.array([[0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.7, 0.1], [0.1, 0.1, 0.1, 0.7]]))
    xi = Measure(keys, np.array([[0.0, 5.0, 1.0, 0.0], [0.0, 0.0, 5.0, 0.0], [0.0, 9.0, 0.0, 0.0]]))
    central = pd.Series({"a_step": 40, "b_step": 60, "value": 2 / 3})
    r = replicate_reading(names, sources, alpha, xi, 0.9, central)
    assert (r["alpha_top_word"], r["alpha_top_share"]) == ("free", pytest.approx(2 / 3))
    assert r["alpha_words"] == "free 66.7%, </s> 33.3%"
    assert (r["xi_top_word"], r["xi_top_share"], r["same_top_word"]) == ("free", pytest.approx(2 / 3), 1.0)
    assert (r["a_step"], r["u_step"], r["best_perf"], r[CENTRAL]) == (40, 60, 0.9, pytest.approx(2 / 3))
    # one row of three puts </s> first (alpha*), none for xi^uf; alpha* and xi^uf agree on the
    # two rows that put a word first and miss on the boundary row
    assert (r["alpha_boundary_share"], r["xi_boundary_share"]) == (pytest.approx(1 / 3), 0.0)
    assert (r["agr_boundary_rows"], r["agr_word_rows"]) == (0.0, 1.0)
    share = r["alpha_boundary_share"]
    assert share * r["agr_boundary_rows"] + (1 - share) * r["agr_word_rows"] == pytest.approx(2 / 3)
    # <s> and </s> left out of both: the third row's alpha* puts `call` first (the first of two
    # equal words), where xi^uf's 9 is: every row a hit
    assert r["agr_without_boundary"] == 1.0


def test_readings_tests_find_the_reading_the_column_follows_and_holm_reads_them_as_a_family():
    rng = np.random.default_rng(1)
    n = 12
    entropy_ = rng.uniform(0.6, 0.9, n)
    frame = pd.DataFrame({"dataset": "d", "independent": [True] * n + [False],
                          **{c: np.append(rng.normal(size=n), 0.0) for c in READINGS},
                          "alpha_entropy": np.append(entropy_, 5.0),
                          CENTRAL: np.append(0.2 + entropy_ + rng.normal(0, 0.01, n), -9.0)})
    tests = readings_tests(frame).set_index("reading")
    assert (tests["n"] == n).all()  # the dependent replicate is left out
    assert tests.loc["alpha_entropy", "r"] > 0.99 and tests.loc["alpha_entropy", "p_holm"] < 0.001
    p = tests["p_value"].to_numpy()
    assert (tests["p_holm"].to_numpy() >= p).all() and tests["p_holm"].min() == pytest.approx(len(READINGS) * p.min())


def test_modes_test_tells_two_separate_clusters_from_one_normal_sample():
    rng = np.random.default_rng(2)
    two = np.concatenate([rng.normal(0.30, 0.02, 6), rng.normal(0.62, 0.02, 6)])
    one = rng.normal(0.5, 0.15, 12)
    assert modes_test(two, resamples=99)["p_value"] <= 0.02
    assert modes_test(one, resamples=99)["p_value"] > 0.05
    assert modes_test(two, resamples=99) == modes_test(two, resamples=99)  # seeded
    assert modes_test([0.1, 0.2, 0.3])["resamples"] == 0  # three values: no test


def test_reproduction_rows_reads_each_replicates_own_runs_and_only_where_they_read_the_same(tmp_path, capsys):
    """reproduction_rows.py --readings: each pooled replicate takes the readings of its own A and
    U runs from any kept folder (a grid's diagonal trains the parts' runs), but not where that
    folder's A(alpha*, xi^uf) differs (another run of the same seeds): then it has none."""

    module = rows_module("reproduction_rows")
    rng = np.random.default_rng(3)
    central = rng.uniform(0.3, 0.7, 6)
    reps = pd.DataFrame({"dataset": "sms_spam", "replicate": range(1, 7), "independent": True,
                         "a_run": [f"standard-s{i}" for i in range(1, 7)], "u_run": [f"uniform-s{i}" for i in range(1, 7)],
                         CENTRAL: central, "best_perf": 0.98})
    readings = pd.DataFrame({"dataset": "sms_spam", "replicate": 1, "independent": True, "a_run": reps["a_run"],
                             "u_run": reps["u_run"], "a_step": 100, "u_step": 50, "best_perf": 0.98,
                             CENTRAL: np.where(np.arange(6) == 0, central + 0.1, central),  # s1 came out otherwise
                             "alpha_entropy": 0.5 + central / 2, "alpha_top_word": "</s>", "alpha_top_share": 0.4,
                             "alpha_words": "</s> 40.0%", "xi_top_word": "i", "xi_top_share": rng.uniform(size=6),
                             "xi_words": "i 50.0%", "same_top_word": 0.0, "alpha_boundary_share": 0.5,
                             "xi_boundary_share": 0.5, "agr_boundary_rows": central, "agr_word_rows": central})
    attached = module.attach_readings(reps, readings)
    assert attached["has_readings"].tolist() == [False] + [True] * 5
    lines = "\n".join(module.readings_lines(reps, readings))
    assert "Readings of 5 of 6 independent replicates" in lines and "| standard-s1 |" not in lines
    row = next(line for line in lines.splitlines() if "alpha*'s entropy" in line)
    assert row.startswith("| SMS spam | alpha*'s entropy / log n | 5 | +1.00 [")  # entropy follows the column
    assert "| SMS spam | A(α\\*, ξ^uf) | 6 |" in lines  # the modes read every replicate


def test_seed_pairs_read_each_parts_a_against_its_own_b_at_bs_best_checkpoint(tmp_path, capsys):
    """reproduction_rows.py --seed-pairs (appendix A.9): per part, A's attention against B's at
    B's best checkpoint (not the largest over B's checkpoints), and between two rows the
    difference above chance with Welch's interval; a block's shared B is left out."""

    module = rows_module("reproduction_rows")
    at_best = {"sms_spam": [0.14, 0.32, 0.21], "sst": [0.36, 0.38, 0.35]}
    for dataset, values in at_best.items():
        for r, v in enumerate(values, 1):
            tables = tmp_path / dataset / f"part{r}/tables"
            tables.mkdir(parents=True)
            a, b = f"standard-s{r}", f"standard-s{r + 3}"
            pd.DataFrame({"dataset": [dataset], "replicate": [1], "a_run": [a], "u_run": [f"uniform-s{r}"],
                          "p_run": [str(r)], "b_runs": [[b]], "independent": [True], CENTRAL: [0.5]}
                         ).to_parquet(tables / "table2_replicates.parquet")
            pd.DataFrame({"dataset": dataset, "run": b, "metric": "accuracy", "step": [0, 10, 50],
                          "value": [0.5, 0.9, 0.8]}).to_parquet(tables / "performance.parquet")
            pd.DataFrame({"dataset": dataset, "metric": "agreement", "a_measure": "alpha", "b_measure": "alpha",
                          "a_run": a, "b_run": b, "a_step": 10, "b_step": [0, 10, 50], "value": [0.9, v, 0.95],
                          "baseline": 0.1}).to_parquet(tables / "agreement.parquet")
    pairs = pd.concat([module.seed_pairs(tmp_path / d) for d in at_best])
    assert pairs["at_best"].tolist() == at_best["sms_spam"] + at_best["sst"] and (pairs["max_over_b"] == 0.95).all()
    assert module.main(["--seed-pairs", str(tmp_path / "sms_spam"), str(tmp_path / "sst")]) == 0
    out = capsys.readouterr().out
    test = stats.ttest_ind(np.array(at_best["sms_spam"]) - 0.1, np.array(at_best["sst"]) - 0.1, equal_var=False)
    ci = test.confidence_interval()
    assert f"- SMS spam - SST: {100 * (np.mean(at_best['sms_spam']) - np.mean(at_best['sst'])):+.1f} " \
           f"[{100 * ci.low:+.1f}, {100 * ci.high:+.1f}], p = {test.pvalue:.2g}" in out


def test_the_readings_figure_draws_every_replicate_against_each_reading(tmp_path):
    """readings_figure: per dataset with three or more replicates, one panel per reading, a dot
    per independent replicate at (reading, A(alpha*, xi^uf) in percent), with the panel's r."""
    from attnlearn.reporting.readings_figure import readings_figure

    rng = np.random.default_rng(4)
    n = 6
    frame = pd.DataFrame({"dataset": "sms_spam", "independent": [True] * n + [False],
                          **{c: rng.uniform(size=n + 1) for c in READINGS}, CENTRAL: rng.uniform(size=n + 1)})
    drawn = readings_figure(frame, tmp_path / "r.png")
    assert (tmp_path / "r.png").stat().st_size > 10_000 and set(drawn["sms_spam"]) == set(READINGS)
    entropy_panel = drawn["sms_spam"]["alpha_entropy"]
    assert np.allclose(entropy_panel["x"], frame["alpha_entropy"][:n])
    assert np.allclose(entropy_panel["y"], 100 * frame[CENTRAL][:n])
    assert entropy_panel["r"] == pytest.approx(stats.pearsonr(frame["alpha_entropy"][:n], frame[CENTRAL][:n])[0])
    assert np.allclose(drawn["sms_spam"]["best_perf"]["x"], 100 * frame["best_perf"][:n])  # a share in percent


def test_boundary_split_pairs_each_replicates_boundary_and_word_rows():
    """boundary_split: the share of boundary rows and the paired difference of the agreement on
    boundary rows and on word rows, over the independent replicates, as scipy computes them."""
    from attnlearn.agreement.readings import boundary_split

    frame = pd.DataFrame({"independent": [True, True, True, True, False],
                          "alpha_boundary_share": [0.4, 0.6, 0.8, 0.7, 0.0],
                          "agr_boundary_rows": [0.9, 0.7, 0.5, 0.8, 0.0], "agr_word_rows": [0.1, 0.3, 0.4, 0.2, 1.0]})
    frame[CENTRAL] = [0.5, 0.6, 0.45, 0.4, 0.9]
    frame["agr_without_boundary"] = [0.2, 0.4, 0.45, 0.1, 0.9]
    b = boundary_split(frame)
    diff = np.array([0.8, 0.4, 0.1, 0.6])
    half = stats.t.ppf(0.975, 3) * diff.std(ddof=1) / 2
    assert (b["n"], b["without_n"], b["share"], b["gap"]) == (4, 4, pytest.approx(0.625), pytest.approx(diff.mean()))
    assert (b["gap_low"], b["gap_high"]) == (pytest.approx(diff.mean() - half), pytest.approx(diff.mean() + half))
    assert b["gap_p"] == pytest.approx(stats.ttest_1samp(diff, 0).pvalue)
    loss = np.array([0.3, 0.2, 0.0, 0.3])  # the column minus the column without boundary tokens
    half = stats.t.ppf(0.975, 3) * loss.std(ddof=1) / 2
    assert (b["without"], b["loss"], b["loss_p"]) == (pytest.approx(0.2875), pytest.approx(loss.mean()),
                                                      pytest.approx(stats.ttest_1samp(loss, 0).pvalue))
    assert (b["loss_low"], b["loss_high"]) == (pytest.approx(loss.mean() - half), pytest.approx(loss.mean() + half))


def _contrast_rows(tmp_path, rows):
    """Kept parts of each dataset: replicate r on standard-s<r>, uniform-s<r>, proxy r."""
    for dataset, (central, baseline) in rows.items():
        for r, v in enumerate(central, 1):
            tables = tmp_path / dataset / f"part{r}/tables"
            tables.mkdir(parents=True)
            pd.DataFrame({"dataset": [dataset], "replicate": [1], "a_run": [f"standard-s{r}"],
                          "u_run": [f"uniform-s{r}"], "p_run": [str(r)], "b_runs": [[f"standard-s{r + 6}"]],
                          "independent": [True], CENTRAL: [v], "agr_xi_proxy_xi_uniform": [0.4 + v / 5],
                          "agr_grad_xi_uniform": [v / 2], "random_baseline": [baseline], "best_perf": [0.9 + v / 10]}
                         ).to_parquet(tables / "table2_replicates.parquet")


def test_contrast_sets_one_rows_replicates_against_anothers_above_chance(tmp_path, capsys):
    """reproduction_rows.py --contrast: per column the first dataset's mean minus the other's,
    above each row's own random baseline; replicates that do not pair by seed (3 against 4) are
    independent samples: Welch's interval and Brown-Forsythe's test of the spreads, each p alone
    (exploratory: no Holm, no verdict); one dataset alone is refused."""
    module = rows_module("reproduction_rows")
    rows = {"newsgroups": ([0.29, 0.49, 0.55], 0.05), "newsgroups_no_headers": ([0.52, 0.60, 0.58, 0.61], 0.04)}
    _contrast_rows(tmp_path, rows)
    assert module.main(["--contrast", str(tmp_path / "newsgroups"), str(tmp_path / "newsgroups_no_headers")]) == 0
    out = capsys.readouterr().out
    assert "Random baselines: 20 Newsgroups 5.0; 20 Newsgroups, headers stripped 4.0." in out
    assert "Welch's 95% t interval" in out and "Exploratory: each p alone, no Holm and no verdict" in out
    ours, theirs = (np.array(rows[d][0]) - rows[d][1] for d in rows)
    test = stats.ttest_ind(ours, theirs, equal_var=False)
    line = next(x for x in out.splitlines() if x.startswith("- A(α\\*, ξ^uf) above chance"))
    ci = test.confidence_interval()
    assert f"{100 * (ours.mean() - theirs.mean()):+.1f} [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}]" in line
    assert f"p = {test.pvalue:.2g}" in line and "n = 3 and 4" in line
    # Table 2's columns the replicates hold, in its order: three agreements, the baseline (the same in
    # every replicate of each row: no t to read) and the best performance
    assert [x.split(" above chance")[0].split(", 20 Newsgroups")[0] for x in out.splitlines() if x.startswith("- ")] \
        == ["- A(α\\*, ξ^uf)", "- A(ξ^px, ξ^uf)", "- A(g\\*, ξ^uf)", "- baseline", "- best"]
    assert ": +1.0 (each row the same in every replicate: no interval, no test) (n = 3 and 4)" in out
    spread = next(x for x in out.splitlines() if x.startswith("| A(α\\*, ξ^uf), 20 Newsgroups / "))
    ratio = np.std(ours, ddof=1) / np.std(theirs, ddof=1)
    bf = stats.levene(ours, theirs, center="median").pvalue
    assert f"| {100 * np.std(ours, ddof=1):.1f} | {100 * np.std(theirs, ddof=1):.1f} | {ratio:.2f} | {bf:.2g} |" in spread
    assert "Holm" not in out.replace("no Holm", "")
    assert module.main(["--contrast", str(tmp_path / "newsgroups")]) == 2
    assert "give folders of two or more" in capsys.readouterr().err


def test_a_contrast_of_replicates_on_the_same_seeds_is_paired(tmp_path, capsys):
    """Every replicate with its twin on the same A, U and proxy seeds: the paired t test (its
    interval and p, twin by twin) and Pitman and Morgan's test of equal spreads."""
    module = rows_module("reproduction_rows")
    rows = {"newsgroups": ([0.29, 0.49, 0.55, 0.40], 0.05), "newsgroups_no_headers": ([0.52, 0.60, 0.58, 0.61], 0.04)}
    _contrast_rows(tmp_path, rows)
    assert module.main(["--contrast", str(tmp_path / "newsgroups"), str(tmp_path / "newsgroups_no_headers")]) == 0
    out = capsys.readouterr().out
    ours, theirs = (np.array(rows[d][0]) - rows[d][1] for d in rows)
    test = stats.ttest_rel(ours, theirs)
    ci = test.confidence_interval()
    line = next(x for x in out.splitlines() if x.startswith("- A(α\\*, ξ^uf) above chance"))
    assert f"{100 * (ours.mean() - theirs.mean()):+.1f} [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}]" in line
    assert f"p = {test.pvalue:.2g}" in line and "n = 4 pairs" in line and "paired by seed" in out
    spread = next(x for x in out.splitlines() if x.startswith("| A(α\\*, ξ^uf), 20 Newsgroups / "))
    assert spread.endswith(f"| {stats.pearsonr(ours + theirs, ours - theirs).pvalue:.2g} |")


def test_a_contrast_reads_run_bs_columns_over_the_replicates_that_own_their_b(tmp_path, capsys):
    """A(alpha*, xi^B) and the contextualized columns read run B: a replicate whose B is another
    replicate's A (a --parts block) is left out of them, pair and all, and a column no replicate
    of a side defines is not printed; the paired baselines' difference has its interval."""
    module = rows_module("reproduction_rows")
    rows = {"multi30k": ([0.29, 0.31, 0.30], 0.071), "multi30k_epochs20": ([0.31, 0.30, 0.32], 0.08)}
    _contrast_rows(tmp_path, rows)
    b_values = {"multi30k": [0.44, 0.45, 0.42], "multi30k_epochs20": [0.51, 0.54, 0.49]}
    for dataset, values in b_values.items():
        for r, v in enumerate(values, 1):
            path = tmp_path / dataset / f"part{r}/tables/table2_replicates.parquet"
            pd.read_parquet(path).assign(agr_alpha_xi_standard=v, ctx_perf_xi_standard=np.nan,
                                         random_baseline=rows[dataset][1] + r / 1000).to_parquet(path)
    # the 3-epoch row as one --parts block whose third replicate reads part 1's A run as its B
    parts = [tmp_path / f"multi30k/part{r}" for r in (1, 2, 3)]
    block = pd.concat([pd.read_parquet(p / "tables/table2_replicates.parquet") for p in parts], ignore_index=True)
    block.at[2, "b_runs"] = ["standard-s1"]
    for p in parts:
        shutil.rmtree(p)
    (tmp_path / "multi30k/parts1-3/tables").mkdir(parents=True)
    block.to_parquet(tmp_path / "multi30k/parts1-3/tables/table2_replicates.parquet")
    assert module.main(["--contrast", str(tmp_path / "multi30k_epochs20"), str(tmp_path / "multi30k")]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("- A(α\\*, ξ^B) above chance"))
    above = {d: np.array(v[:2]) - (rows[d][1] + np.array([1, 2]) / 1000) for d, v in b_values.items()}
    ci = stats.ttest_rel(above["multi30k_epochs20"], above["multi30k"]).confidence_interval()
    assert f"[{100 * ci.low:+.1f}, {100 * ci.high:+.1f}]" in line and line.endswith("(n = 2 pairs)")
    assert "ctx ξ^B" not in out  # no replicate defines it
    assert "- baseline, Multi30k at 20 epochs - Multi30k: +0.9 (the same difference in every pair" in out


def test_a_paired_difference_of_rounding_alone_has_no_interval(tmp_path, capsys):
    """Two rows whose baselines differ pair by pair by floating-point rounding alone (0.1 + 0.2
    against 0.3): no interval and no p, not '+0.0 [-0.0, +0.0], p = 1' or a p read from noise;
    the sds, which exist, are still printed."""
    module = rows_module("reproduction_rows")
    rows = {"multi30k": ([0.29, 0.31, 0.30], 0.07), "multi30k_epochs20": ([0.31, 0.30, 0.33], 0.07)}
    _contrast_rows(tmp_path, rows)
    baselines = {"multi30k": [0.1 + 0.2, 0.2 + 0.4, 0.7 + 0.1], "multi30k_epochs20": [0.3, 0.6, 0.8]}
    for dataset, values in baselines.items():
        for r, v in enumerate(values, 1):
            path = tmp_path / dataset / f"part{r}/tables/table2_replicates.parquet"
            pd.read_parquet(path).assign(random_baseline=v).to_parquet(path)
    assert module.main(["--contrast", str(tmp_path / "multi30k_epochs20"), str(tmp_path / "multi30k")]) == 0
    out = capsys.readouterr().out
    assert "- baseline, Multi30k at 20 epochs - Multi30k: -0.0 (the same difference in every pair: no interval, " \
           "no test) (n = 3 pairs)" in out or "- baseline, Multi30k at 20 epochs - Multi30k: +0.0 (the same " \
           "difference in every pair: no interval, no test) (n = 3 pairs)" in out
    sd = 100 * np.std([0.3, 0.6, 0.8], ddof=1)
    assert f"| baseline, Multi30k at 20 epochs / Multi30k | {sd:.1f} | {sd:.1f} | 1.00 |" in out


def test_boundary_split_reads_a_difference_without_spread_as_the_claims_table_does():
    """A paired difference the same in every replicate has no t statistic (scipy: NaN); the
    readings page reads it as claims.p_value does (0 when it is not 0), not as NaN."""
    from attnlearn.agreement.readings import boundary_split

    frame = pd.DataFrame({"independent": [True] * 3, "alpha_boundary_share": [0.5] * 3,
                          "agr_boundary_rows": [0.75, 0.5, 1.0], "agr_word_rows": [0.25, 0.0, 0.5],
                          CENTRAL: [0.625, 0.5, 0.375], "agr_without_boundary": [0.625, 0.5, 0.375]})
    b = boundary_split(frame)
    assert (b["gap"], b["gap_p"]) == (pytest.approx(0.5), 0.0)
    assert (b["loss"], b["loss_p"]) == (pytest.approx(0.0), 1.0)


def test_the_page_says_so_when_alpha_never_puts_a_boundary_token_first():
    """20 Newsgroups' alpha* never puts <s> or </s> first: the boundary rows' agreement is then
    undefined, and the page says that rather than 'over the 0 replicates ... +nan'."""
    from attnlearn.agreement.readings import boundary_split

    frame = pd.DataFrame({"independent": [True] * 3, "alpha_boundary_share": [0.0] * 3,
                          "agr_boundary_rows": [np.nan] * 3, "agr_word_rows": [0.5, 0.4, 0.6],
                          CENTRAL: [0.5, 0.4, 0.6], "agr_without_boundary": [0.5, 0.375, 0.625]})
    text = boundary_sentence("20 Newsgroups", boundary_split(frame))
    assert "nan" not in text and "over the 3 replicates" in text and "no replicate has both kinds of row" in text
    assert "the column minus it: +0.0 [" in text


def test_the_page_gives_no_interval_where_one_replicate_has_both_kinds_of_row():
    """The header row's parts 1-3: alpha* put <s> or </s> first in one replicate only, and the
    sentence read '-38.2 [+nan, +nan] points (paired t, p = nan)'. One difference gives no
    interval; the page says so and gives that replicate's difference."""
    from attnlearn.agreement.readings import boundary_split

    frame = pd.DataFrame({"independent": [True] * 3, "alpha_boundary_share": [0.0, 0.006, 0.0],
                          "agr_boundary_rows": [np.nan, 0.0, np.nan], "agr_word_rows": [0.35, 0.382, 0.41],
                          CENTRAL: [0.35, 0.38, 0.41], "agr_without_boundary": [0.35, 0.38, 0.41]})
    text = boundary_sentence("20 Newsgroups", boundary_split(frame))
    assert "nan" not in text, text
    assert "only one replicate has both kinds of row, too few for an interval" in text
    assert "word rows is -38.2 points" in text


def test_a_row_of_one_replicate_reads_without_nan_or_an_empty_table(tmp_path, capsys):
    """A row with one part kept (Multi30k at 20 epochs, part 1): the readings said
    '-0.2 [+nan, +nan] points (paired t, p = nan)' and printed the correlations' table with no
    row; and --readings printed the row's table and claims again, though every page prints them
    in a block of their own."""
    import shutil

    from conftest import REPO

    row = tmp_path / "multi30k_epochs20"
    shutil.copytree(REPO / "reproduction/rows/multi30k_epochs20/part1", row / "part1")
    assert rows_module("reproduction_rows").main(["--readings", str(row)]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out and "| dataset | claim |" not in out and "A(ξ^px, ξ^uf) | A(g" not in out
    assert out.startswith("Readings of 1 of 1 independent replicates:")
    assert "over the 1 replicate: α\\* puts a boundary token (`<s>`, `</s>`) first in 1.8 percent of rows " \
           "(one replicate: no interval)" in out
    assert "the column minus it: -0.2 points (one replicate: no interval, no test)." in out
    assert out.rstrip().endswith("Whether the column follows a reading: not tested, fewer than 3 replicates with readings.")


def test_position_split_reads_the_rows_where_alpha_puts_a_marked_position_first():
    """position_split (the header split of paper_rows/header_rows.py): which rows alpha and xi
    put a marked position first, the agreement on alpha's such rows and on the rest, and the
    agreement with the marked positions left out of both measures."""
    from attnlearn.agreement.metric import agreement_rows
    from attnlearn.agreement.readings import position_split

    nan = np.nan
    alpha = np.array([[0.1, 0.7, 0.2, nan], [0.6, 0.1, 0.2, 0.1], [0.2, 0.3, 0.5, nan]])
    xi = np.array([[0.2, 0.5, 0.3, nan], [0.1, 0.6, 0.2, 0.1], [0.1, 0.2, 0.7, nan]])
    mask = np.array([[False, True, False, False], [False, True, False, False], [False, True, True, False]])
    rows = pd.DataFrame({"hit": agreement_rows(alpha, xi)})
    split = position_split(rows, {"alpha": alpha, "xi": xi}, mask)
    # alpha's first: positions 1, 0, 2 (marked, not, marked); xi's: 1, 1, 2 (all marked)
    assert (split["alpha_share"], split["xi_share"]) == (pytest.approx(2 / 3), 1.0)
    hit = rows["hit"].to_numpy()
    assert (split["agr_in"], split["agr_out"]) == (pytest.approx(hit[[0, 2]].mean()), pytest.approx(hit[1]))
    left = agreement_rows(np.where(mask, nan, alpha), np.where(mask, nan, xi))
    assert split["agr_without"] == pytest.approx(left.mean())


def test_a_reading_the_same_in_every_replicate_says_so_instead_of_an_empty_r():
    """SST's alpha* never puts <s> or </s> first, so that reading is 0 in every replicate and
    has no correlation: the table printed '- [-, -]' as if the test had broken."""
    from attnlearn.agreement.readable import readings_tests_frame

    tests = readings_tests(pd.DataFrame({"dataset": ["sst"] * 4, "independent": [True] * 4,
                                         CENTRAL: [0.2, 0.25, 0.3, 0.28],
                                         **{c: [0.0] * 4 for c in READINGS}}))
    frame = readings_tests_frame(tests)
    assert (frame["r [95% CI]"] == "none: the same in every replicate").all()
