"""Estimated CPU cost of a paper-size Table 2 row (not a test).

    python benchmarks/paper_cost.py DATASET PREPARED_TRAIN.parquet [--config config/paper_cpu.yaml]

DATASET is a dataset of the config (default config/paper.yaml: sst, sms_spam, newsgroups,
multi30k, ...), whose sizes, steps, runs, checkpoints and length cut are the ones estimated;
PREPARED_TRAIN is its prepared training split (results/data/DATASET/train.parquet of any
run: the lengths of real examples, whatever the tokenizer). Times a few training steps
and a probe of one checkpoint at the paper's model size, with batches drawn from the real
length distribution (words; translation: words x 1.25 for SentencePiece pieces), and
multiplies by the paper's steps, runs and checkpoints. Prints one Markdown row:
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
import tempfile
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
from attnlearn.probing.probes import probe_checkpoints
from attnlearn.models.tasks import make_task
from attnlearn.training.train import build_model, checkpoint_steps, total_steps

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


def fake_table(task: str, lens: np.ndarray, vocab: int, rng) -> pd.DataFrame:
    seq = lambda n: [1, *rng.integers(4, vocab, max(0, n - 2)).tolist(), 2]  # noqa: E731
    if task == "translation":
        return pd.DataFrame({"src_ids": [seq(a) for a, _ in lens], "tgt_ids": [seq(b) for _, b in lens]})
    return pd.DataFrame({"ids": [seq(a) for a, in lens], "label": rng.integers(0, 2, len(lens))})


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


def main():
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
    args = ap.parse_args()
    if args.dataset == "experiments":
        return experiments_main(args)
    if args.train is None:
        ap.error("a dataset needs its prepared training split")
    torch.set_num_threads(args.threads)
    d = paper_dataset(args.dataset, args.config)
    rng = np.random.default_rng(0)
    lens = lengths(args.train, d["task"], d["tokenizer"].get("max_tokens"))
    vocab = d["tokenizer"]["vocab_size"] if d["task"] == "translation" else PAPER_VOCAB[args.dataset]
    task = make_task(d["task"], vocab)
    params = {"variant": "standard", "seed": 1, "model": d["model"], "train": d["train"]}
    model = build_model(task, params)
    optim = torch.optim.Adam(model.parameters(), lr=d["train"]["lr"])
    bs = d["train"]["batch_size"]
    table = fake_table(d["task"], lens[rng.integers(0, len(lens), bs * (args.steps + 1))], vocab, rng)
    model.train()
    times = []
    for step in range(args.steps + 1):
        b = task.batch(table, np.arange(step * bs, (step + 1) * bs))
        t0 = time.process_time()
        optim.zero_grad(set_to_none=True)
        task.loss(model, b).backward()
        optim.step()
        times.append(time.process_time() - t0)
    per_step = float(np.median(times[1:]))
    steps = total_steps(d["train"], args.n_train or len(lens))
    n_runs = sum(len(v) for v in d["runs"].values())
    ckpts = len(checkpoint_steps(d["train"]["checkpoints"], steps))
    probe_table = fake_table(d["task"], lens[rng.integers(0, len(lens), args.probe_examples)], vocab, rng)
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(model.state_dict(), Path(tmp) / "step.pt")
        t0 = time.process_time()
        probe_checkpoints(task, model, probe_table, [(0, Path(tmp) / "step.pt")], d["probe"]["measures"],
                          d["probe"]["batch_size"], torch.device("cpu"), Path(tmp) / "probe.parquet",
                          d["probe"]["chunk_elems"], progress=False)
        per_example = (time.process_time() - t0) / args.probe_examples
    n_valid = min(args.valid or d["probe"]["max_examples"], d["probe"]["max_examples"])
    train_h = per_step * steps * n_runs / 3600
    probe_h = per_example * n_valid * ckpts * n_runs / 3600
    print(f"| {args.dataset} | {per_step:.3f} | {steps:,} | {n_runs} | {train_h:.1f} | {per_example * 1000:.1f} | "
          f"{ckpts} | {n_valid:,} | {probe_h:.1f} |")


if __name__ == "__main__":
    main()
