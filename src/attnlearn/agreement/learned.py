"""Did a run learn? Its best validation performance against what a predictor that ignores the
input scores on the same probed examples: the majority class (classification), the most
frequent target token at every position (translation, teacher-forced token accuracy). A run at
or below it has not learned, and its agreements say nothing about attention."""

import numpy as np
import pandas as pd

from attnlearn.agreement.compare import primary


def trivial_accuracy(task: str, examples: pd.DataFrame) -> float:
    """The accuracy of the input-blind predictor on ``examples`` (tokenized, as probed)."""
    if task == "classification":
        share = float(np.mean(examples["label"].to_numpy()))
        return max(share, 1.0 - share)
    if task == "translation":
        # the decoder predicts y_1..y_T </s> after <s>: every target id but the first
        targets = np.concatenate([np.asarray(t[1:], dtype=np.int64) for t in examples["tgt_ids"]])
        return float(np.bincount(targets).max() / len(targets))
    raise ValueError(f"unknown task {task!r}")


def learning_table(perf: pd.DataFrame, trivial: dict[str, float]) -> pd.DataFrame:
    """One row per (dataset, run; frozen runs left out): the best value of the task's own metric
    over checkpoints, the trivial predictor's on the same examples, and whether the run beats it."""
    main = primary(perf)
    # a frozen run trains its attention only (paper A.6): it is not meant to perform
    main = main[~main["run"].str.startswith("frozen-")]
    best = main.groupby(["dataset", "run", "metric"], sort=False)["value"].max().rename("best_perf").reset_index()
    best["trivial_perf"] = best["dataset"].map(trivial)
    best["learned"] = best["best_perf"] > best["trivial_perf"]
    return best


def not_learned_lines(table: pd.DataFrame) -> list[str]:
    """A warning per run that did not beat the trivial predictor."""
    return [f"{r.dataset}/{r.run}: best {r.metric} {r.best_perf:.3f} does not beat the input-blind "
            f"predictor's {r.trivial_perf:.3f}: this run did not learn; read its agreements as noise"
            for r in table[~table["learned"]].itertuples()]
