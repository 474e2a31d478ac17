"""Estimated CPU cost of a paper-size Table 2 row (not a test).

    python benchmarks/paper_cost.py DATASET PREPARED_TRAIN.parquet [--config config/paper_cpu.yaml]

DATASET is a dataset of the config (default config/paper.yaml: sst, sms_spam, newsgroups,
multi30k, ...), whose sizes, steps, runs, checkpoints and length cut are the ones estimated;
PREPARED_TRAIN is its prepared training split (results/data/DATASET/train.parquet of any
run: the lengths of real examples, whatever the tokenizer). Times a few training steps
and a probe of one checkpoint at the paper's model size, with batches drawn from the real
length distribution (words; translation: words x 1.25 for SentencePiece pieces), and
multiplies by the paper's steps, runs and checkpoints (probe.at_best's measures at the best
checkpoint alone, by their timed share of a checkpoint): the preflight's estimator
(attnlearn.probing.timing, multiplied out by attnlearn.cost.jobs), in CPU seconds, the probe without BLEU. Prints one Markdown row:
seconds per step, training and probing CPU hours for the whole row.

``experiments`` times a few training steps of each controlled experiment's models at the
config's sizes (``--experiments``: a YAML mapping merged into the config's ``experiments:``
section, as Snakemake's ``--config 'experiments={...}'`` does) and multiplies by its runs
and steps; prints one Markdown row per experiment. The multi-head search's candidate count is
not known before it runs: it is estimated from ``--bad-share``, the share of candidate heads
that are bad, and every candidate is counted at its full steps for every data seed (an upper
bound: good heads stop at ``good_acc``, and a head stops at the first data seed that
disagrees).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import yaml

from attnlearn.config import load_config
from attnlearn.experiments import keyword as K
from attnlearn.experiments.data import CopyTask
from attnlearn.experiments.train import build, train_curve, train_kwargs
from attnlearn.probing import timing
from attnlearn.reporting.config_cost import run_seconds
from attnlearn.training.train import total_steps

REPO = Path(__file__).resolve().parents[1]
PIECES_PER_WORD = 1.25  # SentencePiece (8,000 pieces) on Multi30k-like text
# classification vocabularies, from the paper's parameter counts (appendix A.7): (total - 1,274,882) / 300
PAPER_VOCAB = {"imdb": 60338, "ag_news": 31065, "newsgroups": 12488, "sst": 11022, "yelp": 41368,
               "amazon": 37110, "sms_spam": 4691}


def paper_dataset(name: str, path: Path = REPO / "config" / "paper.yaml") -> dict:
    config = yaml.safe_load(Path(path).read_text())
    config["datasets"] = {name: config["datasets"][name]}
    return load_config(config, REPO / "config" / "schema.yaml")["datasets"][name]


def lengths(path: str, task: str, max_tokens: int | None = None) -> np.ndarray:
    """Token counts of the real examples, <s> and </s> included, cut at ``max_tokens``."""
    df = pd.read_parquet(path)
    if task == "translation":
        lens = np.stack([np.ceil(df[c].str.split().map(len) * PIECES_PER_WORD).astype(int) + 2
                         for c in ("src", "tgt")], 1)
    else:
        lens = (df["text"].str.split().map(len).to_numpy() + 2)[:, None]
    return lens if max_tokens is None else np.minimum(lens, max_tokens)


def experiments_config(path, override: str | None) -> dict:
    """The config's ``experiments:`` section with ``override`` merged in, schema defaults filled."""
    from snakemake.utils import update_config

    config = yaml.safe_load(Path(path).read_text())
    update_config(config, {"experiments": yaml.safe_load(override or "{}")})
    return load_config(config, REPO / "config" / "schema.yaml")["experiments"]


def seconds_per_step(spec: dict, exp: dict, heads: int, steps: int) -> float:
    """CPU seconds per training step (evaluations included) of a ``heads``-head copy model,
    after a warm-up step (the first call of each shape is slower)."""
    task = CopyTask.from_dict(spec)
    train_curve(build(task, {**exp["model"], "heads": heads}, 0), task, 1, 0, **train_kwargs(exp["train"]))
    model = build(task, {**exp["model"], "heads": heads}, 0)
    t0 = time.process_time()
    train_curve(model, task, steps, 0, **train_kwargs(exp["train"]))
    return (time.process_time() - t0) / steps


def keyword_seconds_per_step(kw: dict, steps: int) -> float:
    settings = {k: v for k, v in kw.items() if k not in ("seeds", "steps")}
    t0 = time.process_time()
    K.train_keyword(**{**settings, "steps": steps, "seed": 0})
    return (time.process_time() - t0) / steps


def experiment_rows(exp: dict, steps: int, bad_share: float) -> list[tuple]:
    """(experiment, runs, steps per run, s / step) of each experiment the section runs."""
    rows = []
    if "copying" in exp:
        for name, spec in exp["copying"]["tasks"].items():
            rows.append((f"copying {name}", len(exp["copying"]["seeds"]), spec.get("steps", exp["train"]["steps"]),
                         seconds_per_step(spec, exp, 1, steps)))
    if "multihead" in exp:
        mh, n = exp["multihead"], exp["train"]["steps"]
        candidates = min(mh["max_candidates"], int(np.ceil(mh["bad_heads"] / bad_share)))
        rows.append((f"multihead search ({candidates} candidates x {len(mh['data_seeds'])} data seeds)",
                     candidates * len(mh["data_seeds"]), n, seconds_per_step(mh["task"], exp, 1, steps)))
        rows.append((f"multihead {mh['heads']}-head models (3 scenarios x {mh['trials']} trials)", 3 * mh["trials"], n,
                     seconds_per_step(mh["task"], exp, mh["heads"], steps)))
    if "keyword" in exp:
        kw = exp["keyword"]
        rows.append(("keyword", len(kw["seeds"]), kw["steps"], keyword_seconds_per_step(kw, 5 * steps)))
    return rows


def experiments_main(args) -> None:
    exp = experiments_config(args.config, args.experiments)
    torch.set_num_threads(args.threads)
    print("| experiment | runs | steps per run | s / step | CPU h |\n|---|---|---|---|---|")
    total = 0.0
    for name, runs, steps, per_step in experiment_rows(exp, args.steps, args.bad_share):
        total += runs * steps * per_step / 3600
        print(f"| {name} | {runs} | {steps} | {per_step:.3f} | {runs * steps * per_step / 3600:.2f} |")
    print(f"| **all** | | | | **{total:.2f}** |")


def main(argv: list[str] | None = None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset", help="a dataset of the config, or 'experiments'")
    ap.add_argument("train", nargs="?", help="the dataset's prepared training split (not for experiments)")
    ap.add_argument("--config", default=REPO / "config" / "paper.yaml", help="the config whose row is estimated")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=8, help="training steps timed")
    ap.add_argument("--probe-examples", type=int, default=128, help="validation examples timed in the probe")
    ap.add_argument("--valid", type=int, help="validation examples probed per checkpoint (default probe.max_examples)")
    ap.add_argument("--n-train", type=int, help="training examples of the full split (default: the file's)")
    ap.add_argument("--experiments", help="experiments: YAML merged into the config's experiments section")
    ap.add_argument("--bad-share", type=float, default=1 / 3,
                    help="experiments: share of candidate heads that are bad (default run: 4 of 12)")
    args = ap.parse_args(argv)
    if args.dataset == "experiments":
        return experiments_main(args)
    if args.train is None:
        ap.error("a dataset needs its prepared training split")
    torch.set_num_threads(args.threads)
    d = paper_dataset(args.dataset, args.config)
    lens = lengths(args.train, d["task"], d["tokenizer"].get("max_tokens"))
    vocab = d["tokenizer"]["vocab_size"] if d["task"] == "translation" else PAPER_VOCAB[args.dataset]
    per_step, per_example, share = timing.time_dataset({**d, "probe": {**d["probe"], "bleu": False}}, lens, vocab,
                                                       torch.device("cpu"), args.steps, args.probe_examples,
                                                       clock=time.process_time)
    steps = total_steps(d["train"], args.n_train or len(lens))
    n_runs = sum(len(v) for v in d["runs"].values())
    job = run_seconds(d["train"], {**d["probe"], "bleu": False}, per_step, per_example, steps, args.valid, share)
    ckpts, n_valid = job["checkpoints"], job["n_valid"]
    train_h = job["train"] * n_runs / 3600
    probe_h = job["probe"] * n_runs / 3600
    print(f"| {args.dataset} | {per_step:.3f} | {steps:,} | {n_runs} | {train_h:.1f} | {per_example * 1000:.1f} | "
          f"{ckpts} | {n_valid:,} | {probe_h:.1f} |")


if __name__ == "__main__":
    main()
