"""The controlled experiments' intervals (src/attnlearn/experiments/summary.py), the summary rule's
tables and the multi-head trials' distinct head sets."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnlearn.experiments import copying as E
from attnlearn.experiments import multihead as M
from attnlearn.experiments import summary as S
from attnlearn.statistics import wilson

REPO = Path(__file__).resolve().parents[1]
Z2 = stats.norm.ppf(0.975) ** 2


def curves(final: dict, converged_at: dict, steps=(0, 100, 200)) -> pd.DataFrame:
    """A copying table: per seed, token accuracy rising to ``final`` and its convergence step."""
    rows = []
    for seed, acc in final.items():
        first = converged_at.get(seed, float("nan"))
        rows += [{"task": "t", "seed": seed, "step": s, "token_acc": acc * s / steps[-1], "attn_acc": acc / 2,
                  "converged": acc >= 0.95, "steps_to_converge": first} for s in steps]
    return pd.DataFrame(rows)


def test_run_intervals_bracket_the_mean_and_use_the_right_runs():
    final = {0: 1.0, 1: 0.98, 2: 0.2, 3: 0.99}  # 3 of 4 converged, at steps 100, 150, 200
    table = curves(final, {0: 100.0, 1: 150.0, 2: 190.0, 3: 200.0})  # seed 2 touched 0.95, fell back
    rows = S.copying_intervals(table).set_index("quantity")
    assert (rows["low"] <= rows["value"]).all() and (rows["value"] <= rows["high"]).all()
    share = rows.loc["converged"]
    assert (share["value"], share["n"], share["interval"]) == (0.75, 4, "wilson")
    assert (share["low"], share["high"]) == pytest.approx(wilson(3, 4))
    steps = rows.loc["steps_to_converge"]  # over the converged seeds only: 100, 150, 200
    half = stats.t.ppf(0.975, 2) * 50 / np.sqrt(3)
    assert steps["value"] == 150 and steps["n"] == 3
    assert (steps["low"], steps["high"]) == pytest.approx((150 - half, 200))  # cut at the run's last step
    acc = rows.loc["final_token_acc"]  # the final evaluation, not the mean over the curve
    assert acc["value"] == pytest.approx(np.mean(list(final.values())))
    assert acc["high"] == 1.0 and acc["low"] == pytest.approx(acc["value"] - stats.t.ppf(0.975, 3)
                                                              * np.std(list(final.values()), ddof=1) / 2)


def test_one_run_has_no_interval_and_the_markdown_says_k_of_n():
    table = curves({0: 0.5, 1: 0.97}, {1: 100.0})
    long = S.copying_intervals(table)
    text = S.markdown(long, "task")
    assert "| t | 2 | 1/2 = 0.500 [0.095, 0.905] | 100 |" in text  # one converged run: no steps interval
    wide = S.wide(long, "task")
    assert {"converged", "converged_low", "converged_high", "final_token_acc_high"} <= set(wide.columns)


def test_keyword_intervals_are_over_seeds_with_the_paired_gap():
    rng = np.random.default_rng(0)
    rows = [{"seed": seed, "step": step, "accuracy": 0.9, "keyword": k, "after": 0.0, "uniform": 0.0, "last": k + gap}
            for seed, (k, gap) in enumerate(zip(rng.normal(5, 1, 4), [0.1, 0.2, 0.3, 0.4])) for step in range(0, 60, 10)]
    long = S.keyword_intervals(pd.DataFrame(rows))
    gap = long[long["quantity"] == "last_minus_keyword"].iloc[-1]
    assert gap["value"] == pytest.approx(0.25) and gap["n"] == 4
    # paired: the seeds' spread in keyword (sd 1) does not widen the gap's interval (sd 0.13)
    assert gap["high"] - gap["low"] == pytest.approx(2 * stats.t.ppf(0.975, 3) * np.std([.1, .2, .3, .4], ddof=1) / 2)
    assert set(long["step"]) == {0, 10, 20, 30, 40, 50}


def test_band_is_the_mean_over_runs_per_step():
    table = curves({0: 1.0, 1: 0.5, 2: 0.0}, {})
    band = S.band(table, "task", "token_acc", (0, 1)).set_index("step")
    assert band.loc[200, "value"] == pytest.approx(0.5) and band.loc[200, "low"] == 0.0
    assert (band["low"] <= band["value"]).all() and (band["value"] <= band["high"]).all()


def heads(seeds):
    return [(s, {"seed": s}) for s in seeds]


def test_trials_of_a_scenario_have_distinct_head_sets():
    bad, good = heads(range(10, 15)), heads(range(20, 22))
    sets = M.head_sets("all_bad", good, bad, 4, 10, 0)
    keys = [frozenset(s for s, _ in h) for h in sets]
    assert len(sets) == 5 == len(set(keys))  # C(5, 4) = 5 distinct sets for 10 trials
    assert len(M.head_sets("all_bad", good, bad[:4], 4, 3, 0)) == 1  # K bad heads: one set in any order
    one_good = M.head_sets("one_good", good, bad, 4, 6, 0)
    assert len({frozenset(s for s, _ in h) for h in one_good}) == 6
    assert all(sum(s >= 20 for s, _ in h) == 1 and len(h) == 4 for h in one_good)
    assert M.head_sets("one_good", [], bad, 4, 3, 0) == [] and M.head_sets("all_bad", good, bad[:3], 4, 3, 0) == []


def uses(sets):
    return pd.Series([s for h in sets for s, _ in h]).value_counts()


def test_the_balanced_draw_spreads_the_trials_over_the_heads():
    """20 all-bad trials of 8 heads from 10 found heads must share heads (each serves 16 trials
    on average); the balanced draw makes each serve 15 to 17, where the random draw lets some
    serve many more than others. Both give distinct sets."""
    bad, good = heads(range(10, 20)), heads(range(30, 40))
    balanced = M.head_sets("all_bad", good, bad, 8, 20, 0)
    at_random = M.head_sets("all_bad", good, bad, 8, 20, 0, draw="random")
    for sets in (balanced, at_random):
        assert len({frozenset(s for s, _ in h) for h in sets}) == 20
    assert uses(balanced).max() - uses(balanced).min() <= 2
    assert uses(at_random).max() - uses(at_random).min() > uses(balanced).max() - uses(balanced).min()
    one_good = M.head_sets("one_good", good, bad, 8, 50, 0)
    assert uses(one_good)[[s for s, _ in good]].tolist() == [5] * 10  # 50 trials over 10 good heads


def test_the_multihead_contrasts_are_read_family_wise_with_the_head_as_unit():
    """Each contrast's shares as k/n, its difference from head_level (tests/test_head_inference.py),
    Holm over the two contrasts; head_sharing counts each found head's trials."""
    rows = [{"scenario": s, "trial": t, "step": 200, "converged": (t * 7) % 10 < k, "heads": f"{t % 6} {(t + 1) % 6}",
             "good_head": pd.NA} for s, k in (("all_bad", 7), ("one_good", 10), ("random", 10)) for t in range(10)]
    table = pd.DataFrame(rows).astype({"good_head": "Int64"})
    tests = S.multihead_tests(table).set_index("contrast")
    good = tests.loc["one_good - all_bad"]
    assert (good["converged_a"], good["trials_a"], good["converged_b"], good["trials_b"]) == (10, 10, 7, 10)
    assert good["difference"] == pytest.approx(0.3) and good["test"] == "head_level_t"
    order = np.argsort(tests["p_value"].to_numpy())
    assert tests["p_holm"].iloc[order[0]] == pytest.approx(min(1, 2 * tests["p_value"].iloc[order[0]]))
    sharing = S.head_sharing(table).set_index("scenario")
    assert sharing.loc["all_bad", "heads"] == 6 and sharing.loc["all_bad", "most_uses"] == 4
    assert "random" not in sharing.index


@pytest.mark.process
def test_summary_rule_writes_every_experiments_intervals(tmp_path):
    """The rule's script, run by hand from a job file: one long table with every experiment's
    rows, each interval around its value, and the Markdown with the same numbers."""
    copying = curves({0: 1.0, 1: 0.2}, {0: 100.0})
    multihead = copying.rename(columns={"task": "scenario", "seed": "trial"}).assign(scenario="random")
    keyword = pd.DataFrame([{"seed": seed, "step": step, "accuracy": 1.0, "keyword": 2.0 + seed, "after": 1.0,
                             "uniform": 1.5, "last": 2.5 + seed} for seed in (0, 1) for step in (0, 50)])
    tables = {"copying": copying, "copy_counts": E.copy_counts("t", {"vocab": 4, "length": 4}, 20, 0),
              "multihead": multihead, "keyword": keyword}
    for name, frame in tables.items():
        frame.to_parquet(tmp_path / f"{name}.parquet")
    job = {"input": {"tables": [f"{name}.parquet" for name in tables]},
           "output": {"markdown": "experiments.md", "intervals": "intervals.parquet", "tests": "tests.parquet"}}
    (tmp_path / "job.json").write_text(json.dumps(job))
    subprocess.run([sys.executable, str(REPO / "workflow/scripts/experiments_summary.py"), "job.json"], cwd=tmp_path,
                   check=True, capture_output=True)
    long = pd.read_parquet(tmp_path / "intervals.parquet")
    assert set(long["experiment"]) == {"copying", "multihead", "keyword"}
    assert list(long.columns) == ["experiment", "group", *S.COLUMNS]
    ok = long.dropna(subset=["low"])
    assert len(ok) and ((ok["low"] <= ok["value"]) & (ok["value"] <= ok["high"])).all()
    gap = long[(long["quantity"] == "last_minus_keyword") & (long["group"] == "50")].iloc[0]
    assert (gap["value"], gap["low"], gap["high"]) == (0.5, 0.5, 0.5)  # the same gap in both seeds
    text = (tmp_path / "experiments.md").read_text()
    assert "| t | 2 | 1/2 = 0.500 [0.095, 0.905] |" in text and "## Multi-head" in text


@pytest.mark.process
def test_paper_cost_estimates_each_experiment():
    """benchmarks/paper_cost.py experiments: one row per copy distribution, the multi-head search
    and models, and the keyword toy, at the config's counts with --experiments merged in."""
    out = subprocess.run([sys.executable, str(REPO / "benchmarks/paper_cost.py"), "experiments", "--config",
                          str(REPO / "tests/configs/tiny.yaml"), "--steps", "2", "--experiments",
                          "{multihead: {trials: 7}}"], capture_output=True, text=True, check=True).stdout
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ")[1:] for line in out.splitlines()[2:]}
    assert {"copying perm6of6", "copying perm6of9", "keyword", "**all**"} <= set(rows)
    models = next(v for k, v in rows.items() if k.startswith("multihead 2-head models"))
    assert models[0] == "21" and models[1] == "20"  # 3 scenarios x 7 trials, 20 steps each
    search = next(v for k, v in rows.items() if k.startswith("multihead search"))
    assert search[0] == "3"  # 2 bad heads at a third bad would take 6 candidates; max_candidates is 3
