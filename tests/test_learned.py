"""The input-blind baselines that flag a run which did not learn."""

import pandas as pd
import pytest

from attnlearn.agreement.learned import learning_table, not_learned_lines, trivial_accuracy


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
