"""What pricing every example at one length leaves out: CPU seconds of a training step on
batches whose examples all have the one length the preflight times before a dataset is
tokenized (reporting/config_cost.py's split_sizes without data: the paper's Table 9 medians, or
an assumed length) against batches of the dataset's real tokenized lengths, each padded to its
longest example as training pads it. Not a test.

    python benchmarks/one_length.py DATASET TOKENIZED_DIR [--config config/multi30k_epochs20.yaml]
        [--steps 40]

DATASET is a dataset of the config (its model, batch size and optimiser are the ones timed);
TOKENIZED_DIR a run's results/tokenized/DATASET (its train.parquet gives the real lengths, its
tokenizer.json the vocabulary). The two kinds of batch alternate, step by step, on one model
and one thread, so that a load on the machine weighs on both alike; random tokens (the step's
cost does not depend on them; attnlearn.probing.timing.fake_examples). Prints one Markdown row:
the dataset, the lengths each way (the medians; the real lengths' mean padded length of a
batch), each way's mean CPU seconds a step with its standard error, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnlearn.models.tasks import make_task
from attnlearn.probing.timing import fake_examples
from attnlearn.reporting.config_cost import split_sizes
from attnlearn.training.adam import Adam
from attnlearn.training.model import build_model
from attnlearn.training.train import train_step
from paper_cost import paper_dataset  # the sibling script (a script's folder is first on sys.path)

REPO = Path(__file__).resolve().parents[1]


def padded(examples: pd.DataFrame) -> int:
    """The positions a batch pads to: its longest source plus its longest target (or sequence)."""
    return int(sum(examples[c].map(len).max() for c in examples.columns if c.endswith("ids")))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dataset")
    ap.add_argument("tokenized", type=Path)
    ap.add_argument("--config", type=Path, default=REPO / "config" / "multi30k_epochs20.yaml")
    ap.add_argument("--steps", type=int, default=40)
    args = ap.parse_args()
    torch.set_num_threads(1)
    d = paper_dataset(args.dataset, args.config)
    vocab = json.loads((args.tokenized / "tokenizer.json").read_text())["vocab_size"]
    real = split_sizes(args.tokenized.parent, args.tokenized.name, d)[2]
    median = split_sizes(Path("/nonexistent"), args.dataset, d)[2]  # the preflight's length without data
    rng = np.random.default_rng(0)
    task = make_task(d["task"], vocab)
    model = build_model(task, {"variant": "standard", "seed": 1, "model": d["model"], "train": d["train"]})
    optim = Adam(model.parameters(), d["train"]["lr"])
    bs, cpu = d["train"]["batch_size"], torch.device("cpu")
    times, pads = {"one length": [], "real lengths": []}, {"one length": [], "real lengths": []}
    model.train()
    for step in range(args.steps + 1):  # step 0 warms up, untimed
        for way, lens in (("one length", median), ("real lengths", real)):
            examples = fake_examples(d["task"], lens, bs, vocab, rng)
            batch = task.batch(examples, np.arange(bs), cpu)
            t0 = time.process_time()
            train_step(task, model, optim, batch)
            if step:
                times[way].append(time.process_time() - t0)
                pads[way].append(padded(examples))
    (one, real_t) = (np.array(times[w]) for w in times)
    se = lambda t: t.std(ddof=1) / np.sqrt(len(t))  # noqa: E731
    print("| dataset | one length (no data) | real lengths, mean padded | steps each | one length, CPU s a step "
          "| real lengths, CPU s a step | ratio |")
    print("|---|---|---|---|---|---|---|")
    print(f"| {args.dataset} | {'+'.join(map(str, median[0]))} | {np.mean(pads['real lengths']):.1f} "
          f"| {args.steps} | {one.mean():.4f} ± {se(one):.4f} | {real_t.mean():.4f} ± {se(real_t):.4f} "
          f"| {real_t.mean() / one.mean():.2f} |")


if __name__ == "__main__":
    main()
