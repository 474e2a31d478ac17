"""CPU time of a paper-size standard run's probe, with g and the norm-based weights at every
checkpoint (``probe.at_best: []``, what every probe did before) and at the run's best
checkpoints only (the default, ``[grad, norm]``). Not a test.

    python benchmarks/probe_at_best.py DATASET PREPARED_SPLIT.parquet [--config config/paper_cpu.yaml]
        [--checkpoints 9] [--examples 64] [--rounds 1]

DATASET is a dataset of the config, whose model size and probe settings (measures, batch and
chunk sizes; BLEU off: an untrained model decodes every sentence to the length limit) are
the ones timed; PREPARED_SPLIT a prepared split of it (results/data/DATASET/valid.parquet of
any run: its real lengths, as benchmarks/paper_cost.py reads them). ``--checkpoints``
checkpoints of the standard run's model, each randomly initialised from its own seed (the
measures' cost does not depend on the weights; differing weights give differing performance,
so the best checkpoint is one of them, not a tie), probed on ``--examples`` examples of the
split's lengths with random tokens (attnlearn.probing.timing.fake_examples), after a warm-up probe
of one checkpoint, both ways in turn for ``--rounds`` rounds; CPU seconds of one thread (time.process_time), the lowest of the
rounds. Prints one Markdown row: the dataset, examples, checkpoints, each way's CPU seconds and
milliseconds per example and checkpoint, the ratio, and the steps g was computed at.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import torch

from attnlearn.agreement.metric import computed_steps
from attnlearn.models.tasks import make_task
from attnlearn.probing.timing import fake_examples
from attnlearn.probing.probes import probe_checkpoints
from attnlearn.training.model import build_model

# the sibling script, found as `python benchmarks/X.py` puts the script's folder first on sys.path
from paper_cost import PAPER_VOCAB, lengths, paper_dataset

REPO = Path(__file__).resolve().parents[1]


def checkpoints(task, d: dict, n: int, folder: Path) -> tuple[torch.nn.Module, list[tuple[int, Path]]]:
    """The standard run's model and ``n`` checkpoints of it, step i initialised from seed i + 1."""
    for i in range(n):
        model = build_model(task, {"variant": "standard", "seed": i + 1, "model": d["model"], "train": d["train"]})
        torch.save(model.state_dict(), folder / f"step{i}.pt")
    return model, [(i, folder / f"step{i}.pt") for i in range(n)]


def probe_seconds(task, model, examples, ckpts, probe: dict, at_best, out: Path) -> float:
    t0 = time.process_time()
    probe_checkpoints(task, model, examples, ckpts, probe["measures"], probe["batch_size"], torch.device("cpu"),
                      out, probe["chunk_elems"], progress=False, at_best=at_best)
    return time.process_time() - t0


def main(argv: list[str] | None = None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dataset")
    ap.add_argument("split", help="a prepared split of the dataset (its lengths)")
    ap.add_argument("--config", default=REPO / "config" / "paper_cpu.yaml")
    ap.add_argument("--checkpoints", type=int, default=9)
    ap.add_argument("--examples", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    d = paper_dataset(args.dataset, args.config)
    vocab = d["tokenizer"]["vocab_size"] if d["task"] == "translation" else PAPER_VOCAB[args.dataset]
    task = make_task(d["task"], vocab)
    examples = fake_examples(d["task"], lengths(args.split, d["task"], d["tokenizer"].get("max_tokens")),
                             args.examples, vocab, np.random.default_rng(0))
    every, best = [], []
    with tempfile.TemporaryDirectory() as tmp:
        model, ckpts = checkpoints(task, d, args.checkpoints, Path(tmp))
        probe_seconds(task, model, examples, ckpts[:1], d["probe"], (), Path(tmp) / "warm.parquet")  # first calls' costs
        for _ in range(args.rounds):
            every.append(probe_seconds(task, model, examples, ckpts, d["probe"], (), Path(tmp) / "every.parquet"))
            best.append(probe_seconds(task, model, examples, ckpts, d["probe"], d["probe"]["at_best"],
                                      Path(tmp) / "best.parquet"))
        g_at = sorted(computed_steps(pq.read_table(Path(tmp) / "best.parquet"), "grad"))
    per = lambda s: 1000 * s / (args.examples * args.checkpoints)  # noqa: E731
    print(f"| {args.dataset} | {args.examples} | {args.checkpoints} | {min(every):.1f} ({per(min(every)):.1f}) | "
          f"{min(best):.1f} ({per(min(best)):.1f}) | {min(every) / min(best):.2f}x | {len(g_at)} (step {g_at}) |")


if __name__ == "__main__":
    main()
