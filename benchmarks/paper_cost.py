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
from attnlearn.probes import probe_checkpoints
from attnlearn.tasks import make_task
from attnlearn.train import build_model, checkpoint_steps, total_steps

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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("train")
    ap.add_argument("--config", default=REPO / "config" / "paper.yaml", help="the config whose row is estimated")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=8, help="training steps timed")
    ap.add_argument("--probe-examples", type=int, default=128, help="validation examples timed in the probe")
    ap.add_argument("--valid", type=int, help="validation examples probed per checkpoint (default probe.max_examples)")
    ap.add_argument("--n-train", type=int, help="training examples of the full split (default: the file's)")
    args = ap.parse_args()
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
