"""The multi-head inference with the head as the unit (src/attnlearn/experiments/head_inference.py)
on synthetic trials whose answer is known, and the per-trial table the multihead rule keeps."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attnlearn.experiments import multihead as M
from attnlearn.experiments import summary as S
from attnlearn.experiments.head_inference import head_level
from attnlearn.statistics import t_interval

REPO = Path(__file__).resolve().parents[1]


def pooled_trials(rng, head_sd: float, noise_sd: float, mu=(0.0, 1.0), k=3, bad=10, good=10, trials=24):
    """all_bad and one_good trials drawn as the experiment draws them (``head_sets``, balanced)
    from one pool of ``bad`` bad and ``good`` good heads, each head with its own effect (sd
    ``head_sd``, the same in both scenarios), a trial's value the scenario's mean ``mu`` plus
    its heads' effects and its own noise: the true means are ``mu`` over new pools."""
    effect = dict(enumerate(rng.normal(0, head_sd, bad + good)))
    pool = [(h, None) for h in range(bad)]
    goods = [(h, None) for h in range(bad, bad + good)]
    rows = []
    for scenario, m in zip(("all_bad", "one_good"), mu):
        for t, heads in enumerate(M.head_sets(scenario, goods, pool, k, trials, int(rng.integers(1 << 30)))):
            seeds = [h for h, _ in heads]
            g = next((h for h in seeds if h >= bad), None)
            rows.append({"scenario": scenario, "trial": t, "heads": " ".join(map(str, seeds)), "good_head": g,
                         "y": m + sum(effect[h] for h in seeds) + rng.normal(0, noise_sd)})
    return pd.DataFrame(rows).astype({"good_head": "Int64"})


def test_trials_that_share_no_head_get_the_t_interval():
    """No head in two trials: nothing to share, so the interval is the t interval of the mean."""
    rng = np.random.default_rng(0)
    y = rng.normal(size=12)
    trials = pd.DataFrame({"scenario": "random", "trial": range(12), "heads": [f"{2 * i} {2 * i + 1}" for i in range(12)],
                           "good_head": pd.array([None] * 12, dtype="Int64"), "y": y})
    est = head_level(trials, "y", {"random": 1.0})
    mean, low, high, n = t_interval(y)
    assert (est.value, est.low, est.high, est.df, est.heads) == pytest.approx((mean, low, high, n - 1, 0))


def test_shared_heads_widen_the_interval_to_what_new_pools_would_give():
    """Heads with large effects, each in 7 of 24 trials: over 100 pools the head-level interval
    holds the true mean (0, over new pools) in 95% or more; the t interval that takes the 24
    trials as independent holds it in far fewer, and its SE is a fraction of the estimate's
    spread over pools. Where heads have no effect, the head-level interval still holds it."""
    rng = np.random.default_rng(1)
    hits, naive_hits, estimates, naive_se = [], [], [], []
    for _ in range(100):
        trials = pooled_trials(rng, head_sd=1.0, noise_sd=0.5)
        est = head_level(trials, "y", {"all_bad": 1.0})
        _, low, high, _ = t_interval(trials.loc[trials["scenario"] == "all_bad", "y"])
        hits.append(est.low <= 0 <= est.high)
        naive_hits.append(low <= 0 <= high)
        estimates.append(est.value)
        naive_se.append((high - low) / 2 / 2.07)
        assert est.df == 9  # 10 bad heads
    assert np.mean(hits) >= 0.93 and np.mean(naive_hits) <= 0.7
    assert np.mean(naive_se) < 0.5 * np.std(estimates)
    nil = [head_level(pooled_trials(rng, head_sd=0.0, noise_sd=1.0), "y", {"all_bad": 1.0}) for _ in range(40)]
    assert np.mean([e.low <= 0 <= e.high for e in nil]) >= 0.93


def test_the_contrast_of_two_scenarios_drawing_on_one_pool():
    """one_good - all_bad, true difference 1 over new pools; both scenarios share the bad heads
    (their effects the same in both, which the contrast can cancel): the head-level interval
    holds 1 in 95% or more of 100 pools, and a difference of 0 is rejected in most."""
    rng = np.random.default_rng(2)
    hits, rejected = [], []
    for _ in range(100):
        est = head_level(pooled_trials(rng, head_sd=0.5, noise_sd=0.3), "y", {"one_good": 1.0, "all_bad": -1.0})
        hits.append(est.low <= 1 <= est.high)
        rejected.append(est.p_value < 0.05)
    assert np.mean(hits) >= 0.93 and np.mean(rejected) >= 0.8


def test_no_interval_where_the_design_cannot_give_one():
    """One trial, or every trial alike: no interval (not a point), the estimate still given."""
    rng = np.random.default_rng(3)
    trials = pooled_trials(rng, 1.0, 1.0)
    one = head_level(trials[trials["trial"] == 0], "y", {"all_bad": 1.0})
    assert np.isnan(one.low) and not np.isnan(one.value)
    alike = head_level(trials.assign(y=1.0), "y", {"all_bad": 1.0})
    assert alike.value == 1.0 and np.isnan(alike.low) and alike.se == 0.0
    missing = head_level(trials, "y", {"all_bad": 1.0, "random": -1.0})
    assert np.isnan(missing.value)


def test_multihead_summary_reads_the_trials_with_the_head_as_unit():
    """The summary's all_bad and one_good rows and the contrasts come from head_level; the random
    scenario (fresh heads) keeps Wilson; a table written before good_head takes one_good's last
    head as its good head."""
    rng = np.random.default_rng(4)
    trials = pooled_trials(rng, 0.3, 0.3)
    trials = trials.assign(converged=trials["y"] > 0.5, step=200, token_acc=0.5, attn_acc=0.5,
                           steps_to_converge=np.where(trials["y"] > 0.5, 150.0, np.nan))
    random = pd.DataFrame({"scenario": "random", "trial": range(10), "heads": [f"{100 + i}" for i in range(10)],
                           "good_head": pd.array([None] * 10, dtype="Int64"), "converged": [True] * 9 + [False],
                           "step": 200, "token_acc": 0.9, "attn_acc": 0.9, "steps_to_converge": 120.0})
    table = pd.concat([trials.drop(columns="y"), random], ignore_index=True)
    long = S.multihead_intervals(table).set_index(["scenario", "quantity"])
    assert long.loc[("all_bad", "converged"), "interval"] == "heads_share"
    assert long.loc[("random", "converged"), "interval"] == "wilson"
    found = trials[trials["scenario"] == "all_bad"]
    expected = head_level(found.assign(c=found["converged"].astype(float)), "c", {"all_bad": 1.0})
    assert long.loc[("all_bad", "converged"), "value"] == pytest.approx(expected.value)
    assert long.loc[("all_bad", "converged"), "low"] == pytest.approx(max(expected.low, 0))
    tests = S.multihead_tests(table).set_index("contrast")
    assert list(tests.index) == ["one_good - all_bad", "random - all_bad"] and (tests["test"] == "head_level_t").all()
    assert tests.loc["one_good - all_bad", "df"] == 9
    # the good head named by the table, or (older tables) one_good's last head: the same numbers
    older = S.multihead_tests(table.drop(columns="good_head"))
    pd.testing.assert_frame_equal(older.set_index("contrast"), tests)
    assert "heads as units" in S.tests_markdown(S.multihead_tests(table), S.head_sharing(table))


def test_trial_table_keeps_one_row_per_trial(monkeypatch):
    """multihead.trial_table: one row per (scenario, trial) with its heads, its good head (one_good
    only), the base and data seeds and its last evaluation."""
    spec, model = {"vocab": 6, "length": 3}, {"hidden": 8}
    train = {"steps": 4, "batch_size": 8, "lr": 1e-2, "eval_every": 2, "eval_samples": 10}
    mh = {"heads": 2, "good_heads": 1, "bad_heads": 2, "data_seeds": [0], "good_acc": 0.95, "bad_acc": 0.6,
          "max_candidates": 5, "base_seed": 0, "head_seed": 100, "random_head_seed": 1000, "combo_seed": 0,
          "trials": 2, "combo_data_seed": 7}
    labels = iter(["good", "bad", "bad"])
    monkeypatch.setattr(M, "classify_head", lambda *a, **k: (next(labels), [0.0]))
    base, good, bad, _ = M.find_heads(spec, model, train, mh)
    table = M.multihead(spec, model, train, mh, base, good, bad, 0.95)
    trials = M.trial_table(table, mh["base_seed"], mh["combo_data_seed"])
    assert list(trials.columns) == M.TRIAL_COLUMNS
    # all_bad: the one set of the 2 bad heads; one_good: 2 sets (a bad head and the good one); random: 2
    assert len(trials) == table.drop_duplicates(["scenario", "trial"]).shape[0] == 5
    assert (trials["data_seed"] == 7).all() and (trials["steps"] == 4).all()
    one_good = trials[trials["scenario"] == "one_good"]
    assert (one_good["good_head"] == 100).all() and trials.loc[trials["scenario"] != "one_good", "good_head"].isna().all()
    last = table[table["step"] == 4].set_index(["scenario", "trial"])["token_acc"]
    assert trials.set_index(["scenario", "trial"])["final_token_acc"].to_dict() == last.to_dict()


@pytest.mark.process
def test_multihead_rule_script_writes_the_trial_table(tmp_path):
    """The rule's script, run from a job file at toy size, writes the per-trial table beside the
    curves and the candidates."""
    mh = {"task": {"vocab": 6, "length": 3}, "heads": 2, "good_heads": 1, "bad_heads": 2, "data_seeds": [0],
          "good_acc": 0.99, "bad_acc": 0.98, "max_candidates": 3, "base_seed": 0, "head_seed": 100,
          "random_head_seed": 1000, "combo_seed": 0, "trials": 2, "combo_data_seed": 0}
    job = {"input": {}, "output": {"table": "multihead.parquet", "heads": "heads.parquet", "trials": "trials.parquet"},
           "params": {"multihead": mh, "model": {"hidden": 8}, "device": "cpu", "threshold": 0.9,
                      "train": {"steps": 4, "batch_size": 8, "lr": 1e-2, "eval_every": 2, "eval_samples": 10}}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    subprocess.run([sys.executable, str(REPO / "workflow/scripts/multihead.py"), "job.json"], cwd=tmp_path, check=True,
                   capture_output=True)
    trials = pd.read_parquet(tmp_path / "trials.parquet")
    curves = pd.read_parquet(tmp_path / "multihead.parquet")
    assert list(trials.columns) == M.TRIAL_COLUMNS
    assert len(trials) == len(curves.drop_duplicates(["scenario", "trial"])) and "random" in set(trials["scenario"])
