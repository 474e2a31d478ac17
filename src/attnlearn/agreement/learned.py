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


BLIND = {"accuracy": "the majority class", "token_accuracy": "the most frequent target token"}


def _runs_words(rows: pd.DataFrame) -> str:
    """'standard-s1 (best accuracy 47.5%), uniform-s1 (50.0%) against the input-blind
    predictor's 52.5% (the majority class)': a dataset's runs, their best and the predictor's."""
    metric = rows["metric"].iloc[0]
    best = f"best {metric.replace('_', ' ')} "  # the console's words, not the table's column name
    runs = [f"{r.run} ({best if i == 0 else ''}{100 * r.best_perf:.1f}%)" for i, r in enumerate(rows.itertuples())]
    blind = f" ({BLIND[metric]})" if metric in BLIND else ""
    return f"{', '.join(runs)} against the input-blind predictor's {100 * rows['trivial_perf'].iloc[0]:.1f}%{blind}"


def not_learned_summary(table: pd.DataFrame) -> list[str]:
    """A line per dataset whose runs do not beat the input-blind predictor, with those runs, their
    best and the predictor's value: what the console says again at the run's end."""
    return [f"{dataset}: {len(rows)} run{'s' if len(rows) > 1 else ''} no better than chance, "
            f"{_runs_words(rows)}; the agreements that read {'them' if len(rows) > 1 else 'it'} are noise "
            "(results/tables/tables.md marks the findings that rest on them)"
            for dataset, rows in table[~table["learned"]].groupby("dataset", sort=False)]


def resting_on(table: pd.DataFrame, replicates: pd.DataFrame) -> dict[str, str]:
    """Dataset -> the runs that did not learn and that its Table 2 replicates read (A, B or U),
    in words (``_runs_words``): every verdict of the dataset pools those replicates."""
    out = {}
    for dataset, rows in table[~table["learned"]].groupby("dataset", sort=False):
        reps = replicates[replicates["dataset"] == dataset]
        read = {*reps["a_run"], *reps["u_run"], *(b for runs in reps["b_runs"] for b in runs)}
        rows = rows[rows["run"].isin(read)]
        if len(rows):
            out[dataset] = _runs_words(rows)
    return out


def not_learned_lines(table: pd.DataFrame) -> list[str]:
    """A warning per run that did not beat the trivial predictor."""
    return [f"{r.dataset}/{r.run}: best {r.metric} {r.best_perf:.3f} does not beat the input-blind "
            f"predictor's {r.trivial_perf:.3f}: this run did not learn; read its agreements as noise"
            for r in table[~table["learned"]].itertuples()]
