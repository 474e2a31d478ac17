"""A run's length and checkpoint steps from its ``train`` settings, without torch: the config
check reads them (an ``init.step`` must be a step the source run saves) as the training does."""

from __future__ import annotations

import math


def checkpoint_steps(schedule: dict, total: int) -> list[int]:
    """Steps from the explicit list, every ``every`` steps, and the last step."""
    steps = {s for s in schedule.get("steps", []) if s <= total}
    every = schedule.get("every")
    if every:
        steps.update(range(every, total + 1, every))
    if schedule.get("last", True):
        steps.add(total)
    return sorted(steps)


def total_steps(train: dict, n_examples: int) -> int:
    if train.get("steps"):
        return int(train["steps"])
    if not train.get("epochs"):
        raise ValueError("train: neither steps nor epochs is set (config: datasets.<dataset>.train.steps or "
                         ".epochs)")
    return int(train["epochs"]) * math.ceil(n_examples / train["batch_size"])


def saves_step(schedule: dict, step: int, total: int | None) -> bool:
    """Whether a run saves a checkpoint at ``step``; ``total`` None where the length is in epochs
    (it depends on the data): then a listed or an ``every`` step counts, and the last one is
    checked by the training that reads it."""
    if total is not None:
        return step in checkpoint_steps(schedule, total)
    every = schedule.get("every")
    return step in schedule.get("steps", []) or bool(every and step > 0 and step % every == 0)
