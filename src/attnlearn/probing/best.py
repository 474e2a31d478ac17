"""A run's best checkpoint, from its probe's performance records (``step``, ``metric``,
``value``): where alpha* and g* are read, the earliest on ties.

Torch-free and in the probing stage so that the probe and the agreement stage decide it by one
rule: the probe computes the measures only the best checkpoints are read of (``probe.at_best``)
there, from its own records, and the tables read alpha* and g* there (agreement/compare.py).
"""

from __future__ import annotations


def primary(perf):
    """The rows of the task's own metric (token accuracy or accuracy), without BLEU."""
    return perf[perf["metric"] != "bleu"]


def best_step(perf, metric: str | None = None) -> int:
    """Checkpoint with the best validation performance (the earliest on ties) by the task's own
    metric, or by ``metric`` ("bleu": the appendix's BLEU variant picks alpha* by BLEU)."""
    perf = primary(perf) if metric is None else perf[perf["metric"] == metric]
    return int(perf.loc[perf["value"].idxmax(), "step"])


def best_steps(perf) -> list[int]:
    """Every checkpoint a table reads a run's best of: its best step by each metric it has (the
    task's own; BLEU where probed), sorted."""
    return sorted({best_step(perf, metric) for metric in perf["metric"].unique()})
