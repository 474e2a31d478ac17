"""The translation probe's gradient saliency on a CPU: the graph cut at the output layer's
input (probes._saliency_batched) against the same batched backward passes through the whole
graph, the V-wide output layer included (what the probe ran before). Not a test.

    python benchmarks/saliency.py [--threads 1] [--repeats 3] [--vocab 8000]

The model is config/paper_cpu.yaml's Multi30k model (LSTM, H = 256, embeddings 256),
randomly initialised (seed 0); each batch holds the probe's 32 pairs with source and target
lengths drawn from [L/2, L] and one pair of length L. Checks that both give the same tensor
bit for bit, then prints one Markdown row per L: CPU milliseconds each way and the speed-up.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
import yaml

from attnlearn.config import load_config
from attnlearn.models.sites import gold_token_logprobs
from attnlearn.probing.probes import MEASURES, Probe
from attnlearn.models.tasks import make_task
from attnlearn.training.model import build_model

REPO = Path(__file__).resolve().parents[1]
LENGTHS = (12, 22, 44)  # Multi30k's probed pairs: short, median, longest (tokens with <s> / </s>)


def uncut(task, model, b, chunk_elems: int) -> torch.Tensor:
    """The saliency [B, T, S] by batched backward passes from the log-probabilities themselves."""
    B, T = b["tgt_out"].shape
    per_chunk = max(1, chunk_elems // max(1, B * T * task.vocab_size))
    with torch.enable_grad():
        scale = torch.ones(b["src"].shape, requires_grad=True)
        logp = gold_token_logprobs(task.run(model, b, scale=scale)["logits"], b["tgt_out"])
        grads = []
        for t0 in range(0, T, per_chunk):
            t1 = min(t0 + per_chunk, T)
            steps = torch.arange(t0, t1)
            one_hot = torch.zeros(t1 - t0, B, T)
            one_hot[steps - t0, :, steps] = 1.0
            grads.append(torch.autograd.grad(logp, scale, one_hot, retain_graph=t1 < T, is_grads_batched=True)[0])
    return torch.cat(grads).transpose(0, 1)


def batch(vocab: int, longest: int, size: int, gen: torch.Generator) -> dict:
    def padded(lengths):
        ids = torch.zeros(size, longest, dtype=torch.long)
        for i, n in enumerate(lengths):
            ids[i, :n] = torch.randint(4, vocab, (n,), generator=gen)
        return ids

    lengths = torch.randint(longest // 2, longest + 1, (2, size), generator=gen)
    lengths[:, 0] = longest
    src, tgt = padded(lengths[0]), padded(lengths[1])
    return {"src": src, "src_len": lengths[0], "tgt_in": tgt[:, :-1], "tgt_len": lengths[1] - 1,
            "tgt_out": tgt[:, 1:]}


def cpu_ms(fn, repeats: int) -> tuple[float, torch.Tensor]:
    start = time.process_time()
    for _ in range(repeats):
        out = fn()
    return (time.process_time() - start) / repeats * 1000, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--vocab", type=int, default=8000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = load_config(yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text()), REPO / "config/schema.yaml")
    row = config["datasets"]["multi30k"]
    task = make_task("translation", args.vocab)
    model = build_model(task, {"task": "translation", "variant": "standard", "seed": 0, "model": row["model"],
                               "train": row["train"], "device": "cpu"}).eval()
    probe = Probe(task, model, row["probe"]["chunk_elems"])
    gen = torch.Generator().manual_seed(0)
    print("| longest pair (tokens) | uncut (ms) | cut at the output layer (ms) | speed-up |")
    print("|---|---|---|---|")
    for longest in LENGTHS:
        b = batch(args.vocab, longest, row["probe"]["batch_size"], gen)
        before, reference = cpu_ms(lambda: uncut(task, model, b, probe.chunk_elems), args.repeats)
        after, cut = cpu_ms(lambda: MEASURES["grad"](probe, b, None), args.repeats)
        if not torch.equal(reference, cut):
            raise SystemExit(f"L = {longest}: the cut saliency differs from the uncut one "
                             f"(max {float((reference - cut).abs().max()):.3g})")
        print(f"| {longest} | {before:,.0f} | {after:,.0f} | {before / after:.2f}x |")


if __name__ == "__main__":
    main()
