"""Training and probing throughput of the translation model (not a test).

    python benchmarks/throughput.py                     # CPU, the default's model size
    python benchmarks/throughput.py --device cuda --hidden 256 --batch 16   # paper size on a GPU
    python benchmarks/throughput.py --bleu              # probing with beam-search BLEU per checkpoint
    python benchmarks/throughput.py --device cuda --deterministic   # the cost of train.deterministic

Prints one Markdown table row per measurement: training throughput in target
tokens per second, probe throughput in checkpoints per minute on a validation
set (alpha, xi over the T x S x V logits, grad), the GPU's peak memory, with
the settings used. ``--device cuda`` takes a GPU as a job does (resolve_device).
"""

from __future__ import annotations

import argparse
import platform
import time

import torch

from attnlearn.data.prepare import prepare
from attnlearn.data.tokenize import load_sentencepiece, tokenize_translation
from attnlearn.models.tasks import make_task
from attnlearn.probing.timing import time_probe
from attnlearn.runtime.device import exact, resolve_device, sync
from attnlearn.training.model import build_model
from attnlearn.training.train import batch_indices, train_step

OPTIONS = dict(src_vocab=120, tgt_vocab=100, min_len=5, max_len=12, zipf=1.0, p_swap=0.05, p_delete=0.02,
               p_insert=0.03, n_fillers=5)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--vocab", type=int, default=600, help="SentencePiece vocabulary (the paper: 8000)")
    ap.add_argument("--valid", type=int, default=400, help="validation examples probed per checkpoint")
    ap.add_argument("--checkpoints", type=int, default=3)
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--bleu", action="store_true", help="also decode (beam 5) for BLEU at every checkpoint")
    ap.add_argument("--deterministic", action="store_true", help="under train.deterministic's flags (device.exact)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    with exact(args.deterministic):
        measure(args, device)


def measure(args, device):

    source = {"kind": "synthetic_mt", "seed": 0, "options": OPTIONS,
              "splits": {"train": 4000, "valid": args.valid, "test": 0}}
    model_bytes, tables = tokenize_translation(prepare(source, {}), args.vocab, 0)
    task = make_task("translation", load_sentencepiece(model_bytes).get_piece_size())
    params = {"seed": 1, "variant": "standard", "model": {"hidden": args.hidden, "layers": 2, "dropout": 0.0}}
    model = build_model(task, params).to(device)
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    train = tables["train"]

    tokens = 0
    for step in range(args.steps + 10):
        if step == 10:  # warm-up excluded
            sync(device)
            start, tokens = time.perf_counter(), 0
        b = task.batch(train, batch_indices(step, len(train), args.batch, 1), device)
        train_step(task, model, optim, b)
        tokens += int((b["tgt_out"] != 0).sum())
    sync(device)
    train_tps = tokens / (time.perf_counter() - start)

    probe = {"measures": ["alpha", "xi", "grad"], "batch_size": 32, "bleu": args.bleu, "beam": 5, "max_decode_len": 100}
    per_example = time_probe(task, model, probe, tables["valid"], device, args.checkpoints,
                             detok=load_sentencepiece(model_bytes).decode_ids)
    per_min = 60 / (per_example * len(tables["valid"]))

    gpu = device.type == "cuda"
    where = torch.cuda.get_device_name(device) if gpu else f"{platform.processor() or 'cpu'}"
    peak = f"{torch.cuda.max_memory_allocated(device) / 2**30:.2f}" if gpu else "-"
    print("| device | threads | hidden | batch | vocab | train target tok/s | probe ckpt/min (valid examples) | BLEU "
          "| deterministic | peak GPU GiB |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print(f"| {where} | {args.threads} | {args.hidden} | {args.batch} | {task.vocab_size} | {train_tps:,.0f} | "
          f"{per_min:.1f} ({args.valid}) | {'yes' if args.bleu else 'no'} | {'yes' if args.deterministic else 'no'} "
          f"| {peak} |")


if __name__ == "__main__":
    main()
