"""What a config's GPU jobs cost (docs/slurm.md, "First: the preflight"; docs/benchmarks.md,
"What the paper costs on a GPU"), as the two reports say it: each dataset's sizes, its training
and probing jobs as the workflow plans them (the rule passes their counts: rules/common.smk,
gpu_jobs), priced by the cost package (attnlearn.cost.jobs: a job's seconds and the jobs added
up) from the per-unit times the preflight measures on its own device (probing/timing.py) or
from measured GPU rates where no GPU is present (attnlearn.cost.rates, rule gpu_hours).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.agreement.paper import TABLE9
from attnlearn.cost.jobs import AT_BEST_SHARE, PROBES, dataset_cost, job_seconds, totals, verdict
from attnlearn.cost.rates import price
from attnlearn.probing import timing
from attnlearn.probing.measures import split_at_best
from attnlearn.training.schedule import checkpoint_steps, total_steps

# Token counts (<s> and </s> included) assumed where a dataset is not tokenized yet: about
# a Multi30k / news sentence in 8,000 SentencePiece pieces, a short review in words.
ASSUMED_LENGTHS = {"translation": (30, 32), "classification": (120,)}
NOT_PRICED = ("Not priced: the proxies (proxy, proxy_probe_train), the attention analyses and the controlled "
              "experiments; where a row says so, BLEU decoding (no GPU rate with it yet). Sizes: the tokenized "
              "data where they exist, else the paper's appendix Table 9 sizes with every example at the median "
              "length (a batch runs to its longest example: more)")


# -- sizes ----------------------------------------------------------------------------------------

# where split_sizes finds no data, it times every example at one length, which prices no batch's padding
FROM_TABLE9, FROM_ASSUMED = "paper (Table 9)", "assumed"
ONE_LENGTH = (FROM_TABLE9, FROM_ASSUMED)
LOW = "low: every example at one length; rerun after `--until tokenize`"


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
        return paper["train"], paper["valid"], cut(np.array([[m + 2 for m in paper["median"]]]), d), FROM_TABLE9
    n_train = source.get("options", {}).get("n_train")  # a split the config sets (SMS spam: 3,500)
    return n_train, None, np.array([ASSUMED_LENGTHS[d["task"]]]), FROM_ASSUMED


def vocab_size(data_dir: Path, dataset: str, d: dict) -> int:
    tokenizer = Path(data_dir) / dataset / "tokenizer.json"
    if tokenizer.exists():
        return json.loads(tokenizer.read_text())["vocab_size"]
    return d["tokenizer"]["vocab_size"]


def positions(lens: np.ndarray, task: str) -> float:
    """An example's positions (cost/rates.py): a classification example's median length
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


def checkpoints(train: dict, steps: int) -> int:
    """How many checkpoints a run of ``steps`` steps saves (train.checkpoints), each one probed."""
    return len(checkpoint_steps(train["checkpoints"], steps))


def run_seconds(train: dict, probe: dict, s_per_step: float, s_per_example: float, steps: int,
                n_valid: int | None = None, best_share: float = 0.0) -> dict:
    """cost.jobs.job_seconds of one run of the dataset's ``train`` settings, its checkpoints
    counted from train.checkpoints."""
    return job_seconds(checkpoints(train, steps), probe, s_per_step, s_per_example, steps, n_valid, best_share)


# -- timed on the jobs' own device (rule preflight) ---------------------------------------------

def measure(dataset: str, d: dict, data_dir: Path, device, steps: int, probe_examples: int) -> dict:
    """Per-step and per-example times of one dataset (probing/timing.py), and the job sizes they multiply."""
    size, vocab = sizes(data_dir, dataset, d), vocab_size(data_dir, dataset, d)
    per_step, per_example, share = timing.time_dataset(d, size["lens"], vocab, device, steps, probe_examples)
    return {"dataset": dataset, **size, "vocab": vocab, "s_per_step": per_step, "s_per_example": per_example,
            "best_share": share, "probe": d["probe"], "train": d["train"], "entry": d}


def job_minutes(m: dict) -> dict[str, float | None]:
    """Minutes of one run's train job and one probe / probe_train job of the dataset (None: the
    training set's size is unknown until the data are tokenized)."""
    if m["steps"] is None:
        return {"train": None, "probe": None, "probe_train": None}
    seconds = run_seconds(m["train"], m["probe"], m["s_per_step"], m["s_per_example"], m["steps"], m["n_valid"],
                          m["best_share"])
    return {rule: seconds[rule] / 60 for rule in ("train", "probe", "probe_train")}


def measured_cost(m: dict, jobs: dict) -> dict:
    """The dataset's planned jobs at the measured times, each job alone on this device: a stack
    of K runs takes K runs' time (its members in turn on a CPU; on a GPU its batched model is
    faster, so an upper bound there)."""
    minutes = job_minutes(m)
    if minutes["train"] is None:
        return dataset_cost(m["dataset"], jobs)
    train = [(k * minutes["train"] / 60,) * 2 for k in jobs["train"]]
    return dataset_cost(m["dataset"], jobs, train, {rule: (minutes[rule] / 60,) * 2 for rule in PROBES})


def preflight_report(found: str, measured: list[dict], limits: dict[str, float | None], device, jobs: dict) -> str:
    """The preflight's report: each estimated job beside its rule's time limit, then the config's jobs added up."""
    lines = [f"# Preflight on {device}", "", found, "",
             "| dataset | lengths | s/step | steps | s/example/checkpoint | rule | estimate (min) | limit (min) "
             "| verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for m in measured:
        for rule, minutes in job_minutes(m).items():
            if rule not in limits:
                continue
            est = "?" if minutes is None else f"{minutes:,.1f}"
            lim = "-" if limits[rule] is None else f"{limits[rule]:g}"
            said = verdict(minutes, limits[rule], rule)
            if rule == "train" and minutes is not None and m["lengths"] in ONE_LENGTH:
                said += f" ({LOW})"
            lines.append(f"| {m['dataset']} | {m['lengths']} | {m['s_per_step']:.4f} | {m['steps'] or '?'} | "
                         f"{m['s_per_example']:.4f} | {rule} | {est} | {lim} | {said} |")
    kind = "GPU" if device.type == "cuda" else "CPU"
    costs = [measured_cost(m, jobs[m["dataset"]]) for m in measured]
    lines += ["", totals(costs, f"{kind}-hours on this machine's {kind}"), "",
              "Estimates: one job each, at the config's model and batch sizes with random tokens; a stack of K runs "
              "(train.stack) K runs' time. Probes decode to the length limit (an untrained model): an upper bound."]
    if any(m["lengths"] in ONE_LENGTH for m in measured):
        lines[-1] += (f" Rows at '{FROM_TABLE9}' or '{FROM_ASSUMED}' lengths time every example at one "
                      "length, but a training batch pads to its longest example: their training estimates are low (docs/benchmarks.md "
                      "measures by how much for Multi30k). Rerun the preflight after `--until tokenize` for the "
                      "real lengths.")
    return "\n".join(lines) + "\n"


# -- priced from measured GPU rates (rule gpu_hours) ---------------------------------------------

def priced(dataset: str, d: dict, size: dict, jobs: dict, rates: list[dict], card: str, sharing: int) -> dict:
    """One dataset's GPU cost from the rates table: each job's work in positions at the rate of
    the row that cost.rates.pick chooses (with ``sharing`` jobs on the GPU; alone for the chain),
    and the rows used with what differs (``rates``: 'rule: id (notes)')."""
    if size["steps"] is None:
        return {**dataset_cost(dataset, jobs), "rates": []}
    task, p = d["task"], size["positions"]
    # a rate times every measure at a checkpoint: probe.at_best's are paid at the best ones alone,
    # at their share of a checkpoint's probe as measured on a CPU
    share = AT_BEST_SHARE[task] if split_at_best(d["probe"]["measures"], d["probe"].get("at_best", ()))[1] else 0.0
    # job_seconds at one second a position gives each job's work in positions
    work = run_seconds(d["train"], d["probe"], d["train"]["batch_size"] * p, p, size["steps"], size["n_valid"], share)
    used: dict[str, None] = {}

    def hours(rule: str, positions: float, **job) -> tuple[float, float]:
        """(GPU-hours with the run's jobs sharing the GPU, hours alone) of ``positions`` of work."""
        stage = "train" if rule == "train" else "probe"
        both, row, notes = price(rates, task, stage, p, positions, arch=d["model"].get("arch", "lstm"), card=card,
                                 sharing=sharing, dataset=dataset, **job)
        if stage == "probe" and share:
            notes = [*notes, f"g and norm at the best checkpoints only, {share:.0%} of a checkpoint's probe on a CPU"]
        used[f"{rule}: {row['id']}" + (f" ({'; '.join(notes)})" if notes else "")] = None
        return both

    stacks = {k: hours("train", k * work["train"], stack=k) for k in sorted(set(jobs["train"]))}
    probes = {"probe": hours("probe", work["probe"], bleu=bool(d["probe"].get("bleu"))),
              "probe_train": hours("probe_train", work["probe_train"]) if jobs["probe_train"] else (0.0, 0.0)}
    return {**dataset_cost(dataset, jobs, [stacks[k] for k in jobs["train"]], probes), "rates": list(used)}


def dataset_line(c: dict, size: dict) -> str:
    if c["hours"] is None:
        return f"| {c['dataset']} | {size['lengths']} | | ? | {c['jobs']['train']} | ? | ? | ? | ? | |"
    probing = c["hours"]["probe"] + c["hours"]["probe_train"]
    return (f"| {c['dataset']} | {size['lengths']} | {size['positions']:g} | {size['steps']:,} | "
            f"{c['jobs']['train']} | {c['hours']['train']:,.2f} | {probing:,.2f} | {c['hours']['train'] + probing:,.2f} "
            f"| {c['chain']:,.2f} | {'; '.join(c['rates'])} |")


def gpu_hours_report(p: dict, rates: list[dict], rates_path: Path) -> str:
    """Rule gpu_hours' report: each dataset priced from the rates table ``rates`` (read from
    ``rates_path``), naming the rows that priced it, and in total."""
    lines = [f"# GPU-hours on one {p['card']}, priced from measured rates", "",
             f"Rates: {rates_path}, the rows measured on the {p['card']} first. {p['sharing']} GPU jobs share a GPU "
             "(the run's `gpu` resource; 1 on a cluster, where each job gets a GPU of its own).", "",
             "| dataset | lengths | positions | steps | train jobs | GPU-h training | GPU-h probing | GPU-h "
             "| longest chain (h) | rates used |", "|---|---|---|---|---|---|---|---|---|---|"]
    costs = []
    for name, d in p["datasets"].items():
        size = sizes(Path(p["data_dir"]), name, d)
        costs.append(priced(name, d, size, p["jobs"][name], rates, p["card"], p["sharing"]))
        lines.append(dataset_line(costs[-1], size))
    unit = (f"GPU-hours on one {p['card']} with {p['sharing']} jobs sharing it" if p["sharing"] > 1
            else f"GPU-hours on {p['card']}s, one job a GPU")
    lines += ["", totals(costs, unit, at_once=(1, 2, 4), devices=p["card"]), "", NOT_PRICED + "."]
    return "\n".join(lines) + "\n"
