"""Sweeps: a config's sweep planned into datasets (src/attnlearn/sweeps.py through
config.load_config), its errors named by file and line, the data its values share, the lexical
knob of synthetic_mt, and the pooling of a sweep's replicates (src/attnlearn/agreement/sweep.py).
In-process only: the end-to-end sweep is tests/test_sweep_workflow.py."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from attnlearn import sweeps
from attnlearn.agreement import sweep as S
from attnlearn.agreement.plans import evaluate, load_plan
from attnlearn.agreement.replicates import AGREEMENT_COLUMNS, REPLICATE_COLUMNS, VALUE_COLUMNS
from attnlearn.config import ConfigError, load_config
from attnlearn.data.synthetic import synthetic_mt
from conftest import MT_OPTIONS

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
TINY = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())


def tiny_sweep(**sweep) -> dict:
    """tiny.yaml's tiny_mt alone, swept."""
    return {"device": "cpu", "datasets": {"tiny_mt": copy.deepcopy(TINY["datasets"]["tiny_mt"])},
            "sweeps": {"lr": {"base": "tiny_mt", "key": "train.lr", "values": [0.001, 0.01, 0.1], **sweep}}}


def load_text(tmp_path, text: str) -> dict:
    path = tmp_path / "sweep.yaml"
    path.write_text(text)
    return load_config(yaml.safe_load(text), SCHEMA, source=str(path), warn=lambda m: None)


def error_lines(tmp_path, text: str) -> list[str]:
    with pytest.raises(ConfigError) as e:
        load_text(tmp_path, text)
    return str(e.value).splitlines()[1:]


# --- planning -----------------------------------------------------------------------------


def test_each_value_is_a_dataset_with_the_key_set_and_table2_replicates():
    config = load_config(tiny_sweep(replicates=3), SCHEMA, warn=lambda m: None)
    assert sorted(config["datasets"]) == ["lr_0", "lr_1", "lr_2", "tiny_mt"]
    assert [config["datasets"][f"lr_{i}"]["train"]["lr"] for i in range(3)] == [0.001, 0.01, 0.1]
    for i in range(3):
        d = config["datasets"][f"lr_{i}"]
        # as a seeded row lists them: replicate r = standard r, uniform r, proxy r - 1
        assert d["runs"]["standard"] == [1, 2, 3] and d["runs"]["uniform"] == [1, 2, 3]
        assert d["proxy"]["seeds"] == [0, 1, 2]
        assert not d["runs"]["frozen"] and not d["runs"]["additive"]  # no sweep column reads them
        # everything else is the base entry's
        base = config["datasets"]["tiny_mt"]
        assert d["model"] == base["model"] and d["source"] == base["source"]
    sweep = config["sweeps"]["lr"]
    assert sweep["datasets"] == ["lr_0", "lr_1", "lr_2"] and sweep["values"] == [0.001, 0.01, 0.1]
    assert sweep["data"] is True and sweep["replicates"] == 3


def test_one_replicate_still_has_a_b_run():
    config = load_config(tiny_sweep(replicates=1), SCHEMA, warn=lambda m: None)
    assert config["datasets"]["lr_0"]["runs"]["standard"] == [1, 2]
    assert config["datasets"]["lr_0"]["runs"]["uniform"] == [1] and config["datasets"]["lr_0"]["proxy"]["seeds"] == [0]


def test_a_sweeps_name_in_only_selects_its_values_and_leaves_the_base_out():
    config = load_config({**tiny_sweep(), "only": ["lr"]}, SCHEMA, warn=lambda m: None)
    assert sorted(config["datasets"]) == ["lr_0", "lr_1", "lr_2"]


def test_a_generator_option_and_the_training_sets_size_are_keys():
    config = load_config(tiny_sweep(key="source.options.p_lexical", values=[0.0, 1.0]), SCHEMA, warn=lambda m: None)
    assert [config["datasets"][f"lr_{i}"]["source"]["options"]["p_lexical"] for i in range(2)] == [0.0, 1.0]
    assert config["sweeps"]["lr"]["data"] is False  # the data differ: each value prepares its own
    config = load_config(tiny_sweep(key="source.splits.train", values=[60, 120]), SCHEMA, warn=lambda m: None)
    assert [config["datasets"][f"lr_{i}"]["source"]["splits"]["train"] for i in range(2)] == [60, 120]


def test_a_config_without_sweeps_resolves_as_before():
    """No `sweeps` key is added: the config's settings hash (the summaries' stamp) and every
    rule's params stay as they were."""
    config = copy.deepcopy(TINY)
    resolved = load_config(config, SCHEMA, warn=lambda m: None)
    assert "sweeps" not in resolved and sorted(resolved["datasets"]) == sorted(TINY["datasets"])


def test_values_share_the_data_where_the_key_leaves_it_as_it_is():
    config = load_config(tiny_sweep(), SCHEMA, warn=lambda m: None)
    assert sweeps.data_of(config) == {"lr_1": "lr_0", "lr_2": "lr_0"}
    config = load_config({**tiny_sweep(), "only": ["lr_1", "lr_2"]}, SCHEMA, warn=lambda m: None)
    assert sweeps.data_of(config) == {"lr_2": "lr_1"}  # the first selected value prepares them
    for key, values in (("tokenizer.vocab_size", [60, 80]), ("source.seed", [0, 1])):
        config = load_config(tiny_sweep(key=key, values=values), SCHEMA, warn=lambda m: None)
        assert sweeps.data_of(config) == {}


def test_the_plan_lists_every_value():
    config = load_config(tiny_sweep(), SCHEMA, warn=lambda m: None)
    lines = sweeps.describe(config)
    assert lines[0].startswith("sweep lr: train.lr of tiny_mt over 3 values, 3 replicates each")
    assert "data prepared once, by lr_0" in lines[0]
    assert lines[1:] == ["  lr_0: train.lr = 0.001", "  lr_1: train.lr = 0.01", "  lr_2: train.lr = 0.1"]


# --- errors: named, with the file and line, before any job --------------------------------


SWEEP_TEXT = """\
device: cpu
datasets:
  base:
    task: classification
    source:
      kind: synthetic_cls
      splits: {train: 120, valid: 20, test: 10}
      options: {vocab: 40, keywords_per_class: 2, min_len: 4, max_len: 8, zipf: 1.0, min_keywords: 1,
                max_keywords: 2, p_opposite: 0.2}
    tokenizer: {glove_vocab: false}
    train: {steps: 20}
sweeps:
  s:
    base: base
    key: KEY
    values: VALUES
"""


def sweep_text(key="train.lr", values="[0.01, 0.1]"):
    return SWEEP_TEXT.replace("KEY", key).replace("VALUES", values)


@pytest.mark.parametrize("key, says", [
    ("train.lrr", "train.lrr: train has no key 'lrr' (known: "),
    ("modle.hidden", "modle.hidden: a dataset entry has no key 'modle'"),
    ("train.lr.x", "train.lr takes a value, not keys below it"),
    ("runs.standard", "runs.standard cannot be swept: the runs are Table 2's replicates"),
    ("proxy.seeds", "proxy.seeds cannot be swept"),
    ("task", "task cannot be swept"),
])
def test_a_bad_key_is_named_at_its_line(tmp_path, key, says):
    (line,) = error_lines(tmp_path, sweep_text(key=key))
    assert line.startswith(f"{tmp_path / 'sweep.yaml'}:15: sweeps.s.key: ") and says in line


def test_an_unknown_generator_option_is_the_keys_error_said_once(tmp_path):
    (line,) = error_lines(tmp_path, sweep_text(key="source.options.p_opposit"))
    assert line.startswith(f"{tmp_path / 'sweep.yaml'}:15: sweeps.s.key: unknown option 'p_opposit'")
    assert "did you mean 'p_opposite'?" in line


def test_an_empty_list_is_named_with_its_key(tmp_path):
    (line,) = error_lines(tmp_path, sweep_text(values="[]"))
    assert line == f"{tmp_path / 'sweep.yaml'}:16: sweeps.s.values: an empty list: give train.lr at least one value"


def test_a_bad_value_is_named_at_its_item(tmp_path):
    text = sweep_text(values="\n      - 0.01\n      - fast")
    (line,) = error_lines(tmp_path, text)
    assert line == f"{tmp_path / 'sweep.yaml'}:18: datasets.s_1.train.lr: 'fast' is not of type 'number'"


def test_a_problem_of_the_base_entry_is_said_once_at_the_base(tmp_path):
    text = sweep_text().replace("train: {steps: 20}", "train: {steps: 20, bogus: 1}")
    (line,) = error_lines(tmp_path, text)  # base and both values have it: one line
    assert line.startswith(f"{tmp_path / 'sweep.yaml'}:11: datasets.base.train: unknown key 'bogus'")


def test_a_missing_base_a_repeated_value_and_a_taken_name(tmp_path):
    lines = error_lines(tmp_path, sweep_text(values="[0.1, 0.1]").replace("base: base\n", "base: other\n"))
    assert any(":14: sweeps.s.base: names 'other'" in line for line in lines)
    assert any(":16: sweeps.s.values: train.lr: each value once (repeated: 0.1)" in line for line in lines)
    text = sweep_text().replace("sweeps:", "  s_0:\n    task: classification\nsweeps:")
    assert any("would be named ['s_0']" in line for line in error_lines(tmp_path, text))


# --- the lexical knob -----------------------------------------------------------------------


def test_p_lexical_one_is_todays_corpus_and_lower_values_change_only_target_words():
    today = synthetic_mt(n_sentences=200, seed=4, **MT_OPTIONS)
    assert today.equals(synthetic_mt(n_sentences=200, seed=4, p_lexical=1.0, **MT_OPTIONS))
    frames = {p: synthetic_mt(n_sentences=200, seed=4, p_lexical=p, **MT_OPTIONS) for p in (0.0, 0.5, 0.9)}
    changed = {}
    for p, frame in frames.items():
        # the sentences, the edits and the gold links are the values' common draw
        for col in ("src", "align_src", "align_tgt"):
            assert frame[col].map(tuple).equals(today[col].map(tuple)), (p, col)
        words = [(i, j) for i, (a, b) in enumerate(zip(frame["tgt"], today["tgt"]))
                 for j, (x, y) in enumerate(zip(a.split(), b.split())) if x != y]
        changed[p] = set(words)
    # a lower value replaces a superset of the words a higher one replaces
    assert changed[0.9] <= changed[0.5] <= changed[0.0] and len(changed[0.0]) > len(changed[0.9])


def test_p_lexical_zero_leaves_no_target_word_depending_on_its_source_word():
    """At 0, a linked target word is the entry of a fresh draw: how often it equals the source
    word's own entry is the chance agreement of two independent draws."""
    options = {**MT_OPTIONS, "zipf": 0.0}  # uniform words: the chance is about 1 / tgt_vocab
    full = synthetic_mt(n_sentences=600, seed=1, **options)
    none = synthetic_mt(n_sentences=600, seed=1, p_lexical=0.0, **options)
    same = [a.split()[t] == b.split()[t] for a, b, ts in zip(full["tgt"], none["tgt"], full["align_tgt"]) for t in ts]
    assert np.mean(same) < 3 / MT_OPTIONS["tgt_vocab"]
    with pytest.raises(ValueError, match="p_lexical"):
        synthetic_mt(n_sentences=5, seed=0, p_lexical=1.5, **MT_OPTIONS)


def test_the_lexical_sweep_config_and_its_plan_are_valid():
    config = load_config(yaml.safe_load((REPO / "config" / "sweep_lexical.yaml").read_text()), SCHEMA,
                         warn=lambda m: None)
    sweep = config["sweeps"]["lexical"]
    assert len(sweep["values"]) >= 5 and sweep["values"][0] == 0 and sweep["values"][-1] == 1
    assert sweep["replicates"] >= 3 and sorted(config["datasets"]) == sorted(sweep["datasets"])
    plan = load_plan(REPO / sweep["plan"])
    assert {c for t in plan["tests"] for c in t["columns"]} <= {"value", *S.COLUMNS}


# --- pooling --------------------------------------------------------------------------------


def fake_replicates(values=(0.0, 0.5, 1.0), n=3, seed=0) -> tuple[pd.DataFrame, dict]:
    """table2_replicates rows of a sweep whose columns rise with the value, and the sweep."""
    rng = np.random.default_rng(seed)
    rows = []
    for i, v in enumerate(values):
        for r in range(1, n + 1):
            row = {c: np.nan for c in REPLICATE_COLUMNS}
            row.update(dataset=f"s_{i}", replicate=r, a_run=f"standard-s{r}", u_run=f"uniform-s{r}",
                       p_run=f"proxy-s{r - 1}", b_runs=[f"standard-s{r % n + 1}"], xi_b_run=f"standard-s{r % n + 1}",
                       independent=True, task="translation", perf_metric="token_accuracy")
            row.update({c: float(np.clip(0.2 + 0.4 * v + rng.normal(0, 0.05), 0, 1)) for c in VALUE_COLUMNS})
            row.update({f"{c}_boot_sd": 0.01 for c in AGREEMENT_COLUMNS})
            rows.append(row)
    # a crossed design's off-diagonal replicate is not independent: left out of every interval
    rows.append({**rows[0], "replicate": 99, "independent": False, "agr_alpha_xi_uniform": 0.99})
    sweep = {"name": "s", "key": "train.lr", "base": "b", "values": list(values), "replicates": n,
             "datasets": [f"s_{i}" for i in range(len(values))]}
    return pd.DataFrame(rows), sweep


def test_the_sweep_table_pools_each_value_over_its_independent_replicates():
    reps, sweep = fake_replicates()
    gold = pd.DataFrame([{"dataset": f"s_{i}", "replicate": r, "agr_alpha_gold": 0.1 * i + 0.01 * r,
                          "gold_hit_alpha": 0.5, "gold_baseline": 0.2} for i in range(3) for r in (1, 2, 3)])
    rows = S.sweep_replicates(reps, sweep, gold)
    assert len(rows) == 9 and set(rows["value"]) == {0.0, 0.5, 1.0} and 99 not in set(rows["replicate"])
    table = S.pooled(rows)
    assert len(table) == 3 * len(S.COLUMNS)
    cell = table[(table["dataset"] == "s_1") & (table["column"] == "agr_alpha_xi_uniform")].iloc[0]
    values = rows.loc[rows["dataset"] == "s_1", "agr_alpha_xi_uniform"].to_numpy()
    t = stats.t.ppf(0.975, 2)
    assert cell["n"] == 3 and cell["mean"] == pytest.approx(values.mean())
    assert cell["ci_high"] - cell["mean"] == pytest.approx(t * values.std(ddof=1) / np.sqrt(3))
    assert cell["pi_high"] - cell["mean"] == pytest.approx(t * values.std(ddof=1) * np.sqrt(1 + 1 / 3))
    # on fresh examples the prediction interval adds the examples' error (2 x the bootstrap variance)
    assert cell["pi_high_fresh"] - cell["mean"] == pytest.approx(
        t * np.sqrt(values.std(ddof=1) ** 2 * (1 + 1 / 3) + 2 * 0.01 ** 2))
    gold_cell = table[(table["dataset"] == "s_2") & (table["column"] == "agr_alpha_gold")].iloc[0]
    assert gold_cell["mean"] == pytest.approx(0.22) and gold_cell["n"] == 3
    assert table.loc[table["column"] == "agr_alpha_xi_standard", "b_shared"].all()  # rotate: B shared


def test_the_trend_is_read_over_the_replicates_not_the_means():
    reps, sweep = fake_replicates()
    rows = S.sweep_replicates(reps, sweep)
    trend = S.trend(rows).set_index("column")
    row = trend.loc["agr_alpha_xi_uniform"]
    fit = stats.linregress(rows["value"], rows["agr_alpha_xi_uniform"])
    assert row["n"] == 9 and row["slope"] == pytest.approx(fit.slope) and row["p_value"] == pytest.approx(fit.pvalue)
    half = stats.t.ppf(0.975, 7) * fit.stderr
    assert (row["slope_ci_low"], row["slope_ci_high"]) == pytest.approx((fit.slope - half, fit.slope + half))
    assert row["r_ci_low"] < row["r"] < row["r_ci_high"] and row["slope"] > 0
    # Pearson's t test is the slope's: the plan's correlation test reads the same p
    assert stats.pearsonr(rows["value"], rows["agr_alpha_xi_uniform"]).pvalue == pytest.approx(row["p_value"])
    assert np.isnan(trend.loc["agr_alpha_gold", "slope"])  # no gold column given: nothing to read


def test_a_value_that_is_no_number_has_a_table_but_no_trend():
    reps, sweep = fake_replicates()
    sweep["values"] = ["sum", "mean", "max"]
    rows = S.sweep_replicates(reps, sweep)
    assert rows["value"].isna().all() and list(rows["value_text"].unique()) == ["sum", "mean", "max"]
    assert S.trend(rows)["slope"].isna().all() and S.pooled(rows)["n"].max() == 3


def test_the_plan_is_confirmatory_only_when_committed_before_the_first_training():
    t0 = datetime(2026, 11, 28, 3, tzinfo=timezone.utc)
    assert S.plan_status(t0, t0 + timedelta(minutes=1), False)[0] == "confirmatory"
    assert S.plan_status(t0 + timedelta(minutes=1), t0, False)[0] == "exploratory"
    assert S.plan_status(t0, t0 + timedelta(minutes=1), True) == ("exploratory",
                                                                 "the plan differs from its committed version")
    assert S.plan_status(None, t0, False)[0] == "exploratory"


def test_the_lexical_plan_reads_the_sweep_table():
    reps, sweep = fake_replicates(values=(0.0, 0.25, 0.5, 0.75, 1.0))
    gold = pd.DataFrame([{"dataset": f"s_{i}", "replicate": r, "agr_alpha_gold": 0.1 * i + 0.01 * r,
                          "gold_hit_alpha": 0.5, "gold_baseline": 0.2} for i in range(5) for r in (1, 2, 3)])
    rows = S.sweep_replicates(reps, sweep, gold)
    results = evaluate(load_plan(REPO / "docs" / "plans" / "sweep_lexical.yaml"), rows, confirmatory=True)
    assert list(results["n"]) == [15, 15] and (results["verdict"] == "holds").all()


def test_the_markdown_and_the_figure_show_every_value(tmp_path):
    reps, sweep = fake_replicates()
    rows = S.sweep_replicates(reps, sweep)
    table, trend = S.pooled(rows), S.trend(rows)
    text = S.markdown(sweep, table, trend)
    section = text[text.index("### A(α*, ξ^uf)"):]
    assert all(f"| {v} | s_{i} |" in section for i, v in enumerate(sweep["values"]))
    assert "## Trend over the replicates" in text and "| A(α*, ξ^uf) | 9 |" in text
    from attnlearn.reporting.sweep_figure import sweep_figure

    drawn = sweep_figure(rows, table, trend, sweep["key"], tmp_path / "sweep.png")
    assert (tmp_path / "sweep.png").stat().st_size > 0
    assert drawn["agr_alpha_xi_uniform"]["x"] == [0.0, 0.5, 1.0] and "agr_alpha_gold" not in drawn


def test_the_pages_table_has_a_row_per_value_and_marks_the_columns_reading_b():
    reps, sweep = fake_replicates()
    table = S.pooled(S.sweep_replicates(reps, sweep))
    ci = S.wide(sweep, table, ["agr_alpha_xi_uniform", "agr_alpha_xi_standard", "agr_alpha_gold"])
    assert list(ci["train.lr"]) == ["0.0", "0.5", "1.0"] and list(ci.columns[1:]) == ["A(α*, ξ^uf)", "A(α*, ξ^B)",
                                                                                     "A(α*, gold)"]
    cell = table[(table["value_index"] == 0) & (table["column"] == "agr_alpha_xi_uniform")].iloc[0]
    assert ci.iloc[0, 1].startswith(f"{100 * cell['mean']:.1f} [") and "‡" in ci.iloc[0, 2]
    assert (ci["A(α*, gold)"] == "-").all()  # no gold given: undefined, not 0
    pi = S.wide(sweep, table, ["agr_alpha_xi_uniform"], cell="pi")
    # a bound past 0 or 100 is marked: a bound of the interval, not a possible value
    assert pi.iloc[0, 1].replace("†", "") == f"[{100 * cell['pi_low']:.1f}, {100 * cell['pi_high']:.1f}]"


def test_a_slope_per_unit_of_a_large_key_keeps_two_significant_digits_of_its_interval():
    """A hidden size moves the agreement by hundredths of a point per unit: one decimal printed
    SMS spam's sweep as +0.0 [-0.1, +0.2], a flat line to the eye; a flat column stays short,
    and a column with no r prints "-" (the kept sweep's page printed "+nan")."""
    assert S.slope_cell(0.0004, -0.0014, 0.0022) == "+0.04 [-0.14, +0.22]"
    assert S.slope_cell(0.461, 0.375, 0.547) == "+46.1 [+37.5, +54.7]"
    assert S.slope_cell(0.0, 0.0, 0.0) == "+0.0 [+0.0, +0.0]"
    assert S.slope_cell(float("nan"), float("nan"), float("nan")) == "-"
    trend = pd.DataFrame([{**S.trend_row(np.array([1.0, 2, 3]), np.array([0.5, 0.5, 0.5])),
                           "column": "random_baseline"}])
    cells = S.trend_cells(trend).iloc[0]
    assert cells["r [95% CI]"] == "-" and cells["p"] == "-" and cells["Spearman rho (p)"] == "-"


def test_a_column_constant_up_to_rounding_has_no_trend_in_the_table_the_plan_or_the_figure(tmp_path):
    """The issue's sweep: a random baseline equal in every replicate but for its last digits read
    r = -1.00 [-1.00, -1.00], p = 1e-20 and Spearman -1.00; a contextualized column at 0.0 in
    every replicate. Both say "constant: no trend", in the table, the plan and the figure, whose
    panels keep the whole scale."""
    reps, sweep = fake_replicates()
    reps["random_baseline"] = [0.07970000000000001 if i % 2 else 0.0797 for i in range(len(reps))]
    reps["ctx_perf_xi_standard"] = 0.0
    rows = S.sweep_replicates(reps, sweep)
    assert rows["random_baseline"].nunique() == 2  # apart by rounding alone
    trend = S.trend(rows).set_index("column")
    for col in ("random_baseline", "ctx_perf_xi_standard"):
        assert trend.loc[col, "constant"] and trend[["r", "p_value", "slope", "slope_ci_low", "spearman_rho"]].loc[
            col].isna().all()
    assert not trend.loc["agr_alpha_xi_uniform", "constant"] and trend.loc["agr_alpha_xi_uniform", "r"] > 0
    cells = S.trend_cells(trend.reset_index()).set_index("column")
    flat = cells.loc["random baseline"]
    assert flat["slope (points per unit) [95% CI]"] == "constant: no trend"
    assert (flat[["r [95% CI]", "p", "Spearman rho (p)"]] == "-").all()
    assert cells.loc["contextualized A(α*, ξ^B)", "slope (points per unit) [95% CI]"] == "constant: no trend"
    assert "-1.00" not in S.trend_cells(trend.reset_index()).to_string()
    # a plan's correlation over the constant column
    plan = evaluate({"name": "p", "alpha": 0.05, "tests": [
        {"id": "baseline_moves", "kind": "correlation", "columns": ["value", "random_baseline"], "null_value": 0,
         "expect": "greater"}]}, rows, confirmatory=True)
    assert plan["verdict"].tolist() == ["undetermined"]
    text = S.markdown(sweep, S.pooled(rows), trend.reset_index(), plan, "confirmatory")
    assert "| baseline_moves |  | 9 | constant: no trend | - | - | undetermined |" in text
    from attnlearn.reporting.sweep_figure import sweep_figure

    drawn = sweep_figure(rows, S.pooled(rows), trend.reset_index(), sweep["key"], tmp_path / "sweep.png")
    for col in ("random_baseline", "ctx_perf_xi_standard"):
        assert drawn[col]["title"].endswith("\nconstant: no trend") and drawn[col]["ylim"] == (-0.02, 1.02)
    assert "slope" in drawn["agr_alpha_xi_uniform"]["title"]
