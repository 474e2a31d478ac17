"""A job's seconds from its sizes and the time a unit of its work takes, and a config's jobs
added up (docs/slurm.md, "First: the preflight"; docs/benchmarks.md, "What the paper costs on a
GPU"): the device-hours they take and the least wall time they can take, which is never less
than the longest chain of dependent jobs: a dataset's longest training, then its longest probe.

The one estimator of the preflight (per-unit times it measured, probing/timing.py), of rule
gpu_hours (work in positions at measured GPU rates, cost/rates.py) and of
benchmarks/paper_cost.py (CPU seconds of a paper-size row).
"""

from __future__ import annotations

import math

# The share of a standard run's probe of one checkpoint that probe.at_best's measures (g and the
# norm-based weights) take on a CPU, at paper size (benchmarks/probe_at_best.py, docs/benchmarks.md,
# "g and norm at the best checkpoints only"). A GPU rate of cost/gpu_rates.tsv times every
# measure at a checkpoint; pricing takes this share off all but the best checkpoints.
AT_BEST_SHARE = {"translation": 0.87, "classification": 0.59}
PROBES = ("probe", "probe_train")  # with train, the jobs whose time is estimated
COUNTED = ("train", *PROBES, "proxy", "proxy_probe_train")  # the training and probing jobs counted
TIGHT = 0.7  # an estimate above this share of its limit is flagged: real lengths vary


def best_checkpoints(probe: dict, checkpoints: int, train_split: bool = False) -> int:
    """How many checkpoints a probe computes probe.at_best's measures at, at most: the best by each
    metric it has (the task's own; BLEU where probed, never on the training split)."""
    return min(checkpoints, 1 + bool(probe.get("bleu") and not train_split))


def job_seconds(checkpoints: int, probe: dict, s_per_step: float, s_per_example: float, steps: int,
                n_valid: int | None = None, best_share: float = 0.0) -> dict:
    """Seconds of one run's jobs: ``train`` (``steps`` steps), ``probe`` (``checkpoints``
    checkpoints, as train.checkpoints saves them; ``n_valid`` validation examples, at most
    probe.max_examples; None: that cap) and ``probe_train`` (probe.max_examples training
    examples), with the ``checkpoints`` and ``n_valid`` they count. ``s_per_example``: a probed
    example at one checkpoint with every measure; ``best_share``: the share of that which
    probe.at_best's measures take, paid at the best checkpoints alone (an upper bound for the
    runs that probe none of them)."""
    cap = probe["max_examples"]
    n_valid = min(n_valid or cap, cap)

    def per_example(train_split: bool) -> float:
        best = best_checkpoints(probe, checkpoints, train_split)
        return s_per_example * (checkpoints - (checkpoints - best) * best_share)

    return {"train": s_per_step * steps, "probe": per_example(False) * n_valid,
            "probe_train": per_example(True) * cap, "checkpoints": checkpoints, "n_valid": n_valid}


def verdict(minutes: float | None, limit: float | None, rule: str) -> str:
    """An estimated job's time against its rule's time limit, with the runtime to set."""
    if minutes is None:
        return "unknown until the data are tokenized (rerun the preflight after `--until tokenize`)"
    if limit is None:
        return "no limit set"
    if minutes > limit:
        return f"OVER the limit: raise {rule}'s runtime to at least {math.ceil(minutes * 1.5)} in the profile"
    if minutes > TIGHT * limit:
        return f"tight: consider {rule}'s runtime {math.ceil(minutes * 1.5)} in the profile"
    return "ok"


# -- the config's jobs added up ------------------------------------------------------------------

def dataset_cost(dataset: str, jobs: dict, train: list | None = None, probes: dict | None = None) -> dict:
    """One dataset's jobs as planned (``jobs``: each counted rule's jobs, ``train`` the runs of
    each train job), their device-hours per rule and their longest chain of dependent jobs: the
    longest training, then the longest probe of its run. ``train``: (device-hours, hours alone
    on a device) of each train job, in the order of jobs["train"]; ``probes``: the same of one
    job of each probe rule. None: unknown until the data are tokenized."""
    counts = {rule: len(jobs["train"]) if rule == "train" else jobs[rule] for rule in COUNTED}
    if train is None:
        return {"dataset": dataset, "jobs": counts, "hours": None, "chain": None}
    hours = {"train": sum(h for h, _ in train), **{rule: jobs[rule] * probes[rule][0] for rule in PROBES}}
    chain = (max((alone for _, alone in train), default=0)
             + max((probes[rule][1] for rule in PROBES if jobs[rule]), default=0))
    return {"dataset": dataset, "jobs": counts, "hours": hours, "chain": chain}


def totals(costs: list[dict], kind: str, at_once=(1, 8, 32), devices: str | None = None) -> str:
    """The config's jobs added up: their number as planned, the device-hours of its trainings
    and probes (``kind``: which hours), and the least wall time with ``at_once`` jobs side by side
    (or as many ``devices``): the hours spread over them, never less than the longest chain of
    dependent jobs."""
    jobs = {rule: sum(c["jobs"][rule] for c in costs) for rule in COUNTED}
    known = [c for c in costs if c["hours"] is not None]
    hours = sum(sum(c["hours"].values()) for c in known)
    line = (f"Total: {sum(jobs.values())} training and probing jobs as planned "
            f"({', '.join(f'{n} {rule}' for rule, n in jobs.items())}), {hours:,.1f} {kind} (the train, probe "
            f"and probe_train jobs; proxies not estimated)")
    if known:
        longest = max(known, key=lambda c: c["chain"])
        side_by_side = (lambda n: f"{n} {devices}{'s' * (n > 1)}") if devices else (lambda n: f"{n} at once")
        walls = ", ".join(f"{side_by_side(n)} {max(hours / n, longest['chain']):,.1f} h" for n in at_once)
        line += (f"; wall time at best {walls}: never less than the longest chain of dependent jobs, "
                 f"{longest['dataset']}'s longest training then its longest probe, {longest['chain']:,.1f} h.")
    unknown = [c["dataset"] for c in costs if c["hours"] is None]
    if unknown:
        line += f" Not counted (sizes unknown until tokenized): {', '.join(sorted(unknown))}."
    return line
