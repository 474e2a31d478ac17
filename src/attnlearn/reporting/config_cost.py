"""What a config's GPU jobs cost (docs/slurm.md, "First: the preflight"; docs/benchmarks.md,
"What the paper costs on a GPU"): each dataset's sizes, its training and probing jobs as the
workflow plans them (the rule passes their counts: rules/common.smk, gpu_jobs), the
device-hours they add up to, and the least wall time they can take, which is never less than
the longest chain of dependent jobs: a dataset's longest training, then its longest probe.

The preflight rule times the jobs on their own device (workflow/scripts/preflight.py); rule
gpu_hours prices them from measured GPU rates where no GPU is present (probing/rates.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.agreement.paper import TABLE9
from attnlearn.probing import cost
from attnlearn.probing.measures import split_at_best
from attnlearn.probing.rates import pick
from attnlearn.training.train import total_steps

# Token counts (<s> and </s> included) assumed where a dataset is not tokenized yet: about
# a Multi30k / news sentence in 8,000 SentencePiece pieces, a short review in words.
ASSUMED_LENGTHS = {"translation": (30, 32), "classification": (120,)}
PROBES = ("probe", "probe_train")  # with train, the jobs whose time is estimated
COUNTED = ("train", *PROBES, "proxy", "proxy_probe_train")  # the training and probing jobs counted


# -- sizes ----------------------------------------------------------------------------------------

def cut(lens: np.ndarray, d: dict) -> np.ndarray:
    """Token counts as the dataset's tokenizer cuts them (``tokenizer.max_tokens``)."""
    return np.minimum(lens, d["tokenizer"]["max_tokens"]) if d["tokenizer"].get("max_tokens") else lens


def split_sizes(data_dir: Path, dataset: str, d: dict):
    """(training examples, validation examples, token counts [n, 1 or 2], where they come from):
    the tokenized splits where they exist; else a generated source's sizes and longest
    sentence; else the paper's Table 9 sizes at its median lengths; else assumed lengths, the
    config's training size if it sets one, else unknown (None)."""
    folder = Path(data_dir) / dataset
    columns = ["src_ids", "tgt_ids"] if d["task"] == "translation" else ["ids"]
    if (folder / "train.parquet").exists():
        train = pd.read_parquet(folder / "train.parquet", columns=columns)
        lens = cut(np.stack([train[c].map(len).to_numpy() for c in columns], 1), d)
        valid = folder / "valid.parquet"
        n_valid = len(pd.read_parquet(valid, columns=columns[:1])) if valid.exists() else None
        return len(train), n_valid, lens, "tokenized"
    source = d.get("source", {})
    splits, longest = source.get("splits"), source.get("options", {}).get("max_len")
    if splits and longest:  # a generator's words are its tokens
        return splits["train"], splits.get("valid"), np.array([[longest + 2] * len(columns)]), "config"
    paper = TABLE9.get(dataset) or TABLE9.get(source.get("kind"))
    if paper:  # the paper's sizes, each example at the median length (with <s> and </s>)
        return paper["train"], paper["valid"], cut(np.array([[m + 2 for m in paper["median"]]]), d), "paper (Table 9)"
    n_train = source.get("options", {}).get("n_train")  # a split the config sets (SMS spam: 3,500)
    return n_train, None, np.array([ASSUMED_LENGTHS[d["task"]]]), "assumed"


def vocab_size(data_dir: Path, dataset: str, d: dict) -> int:
    tokenizer = Path(data_dir) / dataset / "tokenizer.json"
    if tokenizer.exists():
        return json.loads(tokenizer.read_text())["vocab_size"]
    return d["tokenizer"]["vocab_size"]


def positions(lens: np.ndarray, task: str) -> float:
    """An example's positions (probing/rates.py): a classification example's median length
    (<s> and </s> included), a translation pair's median target tokens less <s> (the tokens
    a step predicts)."""
    return float(np.median(lens[:, -1])) - (1 if task == "translation" else 0)


def sizes(data_dir: Path, dataset: str, d: dict) -> dict:
    """The sizes that multiply a dataset's per-step and per-example times: training steps
    (None: unknown until the data are tokenized), validation examples, token counts."""
    n_train, n_valid, lens, lengths = split_sizes(data_dir, dataset, d)
    steps = total_steps(d["train"], n_train or 0) if d["train"].get("steps") or n_train else None
    return {"steps": steps, "n_valid": n_valid, "lens": lens, "lengths": lengths,
            "positions": positions(lens, d["task"])}


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


# -- priced from measured GPU rates --------------------------------------------------------------

def priced(dataset: str, d: dict, size: dict, jobs: dict, rates: list[dict], card: str, sharing: int) -> dict:
    """One dataset's GPU cost from the rates table: each job's work in positions at the rate of
    the row that ``pick`` chooses (with ``sharing`` jobs on the GPU; alone for the chain), and
    the rows used with what differs (``rates``: 'rule: id (notes)')."""
    if size["steps"] is None:
        return {**dataset_cost(dataset, jobs), "rates": []}
    task, p = d["task"], size["positions"]
    # a rate times every measure at a checkpoint: probe.at_best's are paid at the best ones alone,
    # at their share of a checkpoint's probe as measured on a CPU
    share = cost.AT_BEST_SHARE[task] if split_at_best(d["probe"]["measures"], d["probe"].get("at_best", ()))[1] else 0.0
    # job_seconds at one second a position gives each job's work in positions
    work = cost.job_seconds(d["train"], d["probe"], d["train"]["batch_size"] * p, p, size["steps"], size["n_valid"],
                            share)
    used: dict[str, None] = {}

    def hours(rule: str, positions: float, **job) -> tuple[float, float]:
        """(GPU-hours with the run's jobs sharing the GPU, hours alone) of ``positions`` of work."""
        stage = "train" if rule == "train" else "probe"
        picked = [pick(rates, task, stage, p, arch=d["model"].get("arch", "lstm"), card=card, sharing=n,
                       dataset=dataset, **job) for n in (sharing, 1)]
        if None in picked:
            raise ValueError(f"the rates table has no {task} {stage} row to price {dataset}")
        (row, notes), (alone, _) = picked
        if stage == "probe" and share:
            notes = [*notes, f"g and norm at the best checkpoints only, {share:.0%} of a checkpoint's probe on a CPU"]
        used[f"{rule}: {row['id']}" + (f" ({'; '.join(notes)})" if notes else "")] = None
        return positions * row["s_per_position"] / 3600, positions * alone["s_per_position"] / 3600

    stacks = {k: hours("train", k * work["train"], stack=k) for k in sorted(set(jobs["train"]))}
    probes = {"probe": hours("probe", work["probe"], bleu=bool(d["probe"].get("bleu"))),
              "probe_train": hours("probe_train", work["probe_train"]) if jobs["probe_train"] else (0.0, 0.0)}
    return {**dataset_cost(dataset, jobs, [stacks[k] for k in jobs["train"]], probes), "rates": list(used)}
