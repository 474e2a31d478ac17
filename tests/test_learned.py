"""The input-blind baselines that flag a run which did not learn."""

import pandas as pd
import pytest

from attnlearn.agreement.learned import learning_table, not_learned_lines, not_learned_summary, resting_on, trivial_accuracy
from attnlearn.agreement.readable import NOT_LEARNED, findings
from attnlearn.runtime.at_end import lines_at_end, say_at_end
from attnlearn.runtime.console import Console


def test_majority_class_and_most_frequent_target_token():
    assert trivial_accuracy("classification", pd.DataFrame({"label": [1, 0, 1, 1, 0]})) == pytest.approx(0.6)
    assert trivial_accuracy("classification", pd.DataFrame({"label": [0, 0, 0, 1]})) == pytest.approx(0.75)
    # <s> (id 1) is read, never predicted; </s> (id 2) is predicted once per sentence
    pairs = pd.DataFrame({"tgt_ids": [[1, 5, 5, 2], [1, 7, 2]]})
    assert trivial_accuracy("translation", pairs) == pytest.approx(2 / 5)


def test_a_run_at_or_below_the_baseline_is_flagged_and_frozen_runs_are_left_out():
    rows = [("cls", "standard-s1", 0, 0.55), ("cls", "standard-s1", 10, 0.90), ("cls", "uniform-s1", 10, 0.60),
            ("cls", "frozen-s1", 10, 0.10)]
    perf = pd.DataFrame([(d, r, s, "accuracy", v) for d, r, s, v in rows],
                        columns=["dataset", "run", "step", "metric", "value"])
    bleu = perf.assign(metric="bleu", value=0.99)  # BLEU is not the task's own metric
    table = learning_table(pd.concat([perf, bleu]), {"cls": 0.6})
    assert table[["run", "best_perf", "learned"]].values.tolist() == [["standard-s1", 0.9, True],
                                                                       ["uniform-s1", 0.6, False]]
    lines = not_learned_lines(table)
    assert len(lines) == 1 and lines[0].startswith("cls/uniform-s1: best accuracy 0.600 does not beat")


def _two_datasets():
    rows = [("moods", "standard-s1", 0.475), ("moods", "standard-s2", 0.90), ("moods", "uniform-s1", 0.50),
            ("moods", "tanhmax-s1", 0.40), ("mt", "standard-s1", 0.6), ("mt", "uniform-s1", 0.7)]
    perf = pd.DataFrame([(d, r, 10, "accuracy" if d == "moods" else "token_accuracy", v) for d, r, v in rows],
                        columns=["dataset", "run", "step", "metric", "value"])
    return learning_table(perf, {"moods": 0.525, "mt": 0.3})


def test_a_dataset_whose_runs_did_not_learn_is_one_line_with_its_runs_and_both_numbers():
    assert not_learned_summary(_two_datasets()) == [
        "moods: 3 runs no better than chance, standard-s1 (best accuracy 47.5%), uniform-s1 (50.0%), tanhmax-s1 "
        "(40.0%) against the input-blind predictor's 52.5% (the majority class); the agreements that read them are "
        "noise (results/tables/tables.md marks the findings that rest on them)"]
    assert not_learned_summary(learning_table(pd.DataFrame(columns=["dataset", "run", "step", "metric", "value"]),
                                              {})) == []
    translation = _two_datasets().assign(trivial_perf=0.75).pipe(lambda t: t.assign(learned=t["best_perf"] > 0.75))
    assert not_learned_summary(translation)[1].startswith(
        "mt: 2 runs no better than chance, standard-s1 (best token accuracy 60.0%), uniform-s1 (70.0%) against the "
        "input-blind predictor's 75.0% (the most frequent target token)")


def test_the_console_says_it_again_at_the_run_s_end(tmp_path):
    """The tables job's words for the end, in its log among others, are the run's last lines
    before a failed job's error; a job that leaves none adds nothing."""
    log = tmp_path / "tables.log"
    with open(log, "w") as f:
        print("WARNING: moods/standard-s1: best accuracy 0.475 does not beat ...", file=f)
        for line in not_learned_summary(_two_datasets()):
            say_at_end(f"WARNING: {line}", stream=f)
        print("x" * 20000, file=f)  # later lines: the words are read from the whole log
    assert lines_at_end(log.read_text()) == [f"WARNING: {not_learned_summary(_two_datasets())[0]}"]
    c = Console()
    c.record({"event": "job_info", "jobid": 1, "rule_name": "tables", "log": [str(log)], "created": 0})
    c.record({"event": "job_info", "jobid": 2, "rule_name": "prepare_data", "log": [str(tmp_path / "none.log")],
              "created": 0})
    c.record({"event": "job_finished", "job_id": 1, "created": 5})
    c.record({"event": "job_finished", "job_id": 2, "created": 5})
    assert c.summary() == [f"WARNING: {not_learned_summary(_two_datasets())[0]}"]
    assert Console().summary() == []


def test_tables_md_marks_each_verdict_that_rests_on_runs_that_did_not_learn():
    """A verdict of moods pools replicates that read standard-s1 (A of replicate 1) and
    uniform-s1 (U): said first in moods' block and beside each of its verdicts; tanhmax-s1,
    which no replicate reads, is not named; mt's runs learned, its verdicts are unmarked."""
    table = _two_datasets()
    reps = pd.DataFrame({"dataset": ["moods", "moods", "mt"], "a_run": ["standard-s1", "standard-s2", "standard-s1"],
                         "u_run": ["uniform-s1"] * 3, "b_runs": [["standard-s2"], ["standard-s1"], []]})
    resting = resting_on(table, reps)
    assert resting == {"moods": "standard-s1 (best accuracy 47.5%), uniform-s1 (50.0%) against the input-blind "
                                "predictor's 52.5% (the majority class)"}
    claims = pd.DataFrame({"dataset": ["moods", "moods", "mt"], "statistic": ["A(α*, ξ^uf) − baseline"] * 3,
                           "n": 2, "estimate": 0.1, "ci_low": 0.05, "ci_high": 0.15, "threshold": 0.0,
                           "verdict": "holds", "verdict_holm": "holds", "p_value": 0.01})
    intervals = pd.DataFrame({"dataset": ["moods", "mt"], "column": "agr_alpha_xi_uniform", "paper": [0.2, float("nan")],
                              "n": 2, "n_replicates": 2, "mean": 0.3, "pi_low": 0.25, "pi_high": 0.35,
                              "paper_in_pi": False})
    text = findings(claims, intervals, not_learned=resting).splitlines()
    assert text[0].startswith("- **moods** (n = 2 replicates)")
    assert text[1] == (f"  - **Runs that did not learn**, read by these replicates: {resting['moods']}. Their "
                       f"agreements are noise, and so is every verdict below marked {NOT_LEARNED}.")
    assert text[2].endswith(f"holds under Holm (p = 0.01 before the correction) {NOT_LEARNED}.")
    assert text[3].endswith(NOT_LEARNED + ".") and "against the paper's 20.00" in text[4]
    assert text[5].startswith("- **mt**")
    assert NOT_LEARNED not in "\n".join(text[6:]) and text[7] == "  - The paper reports no Table 2 row for this dataset."
    assert findings(claims) == findings(claims, not_learned={})
