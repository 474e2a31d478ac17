"""Several training processes on one device: aggregate training throughput (not a test).

    python benchmarks/shared_gpu.py                                  # CPU, small model
    python benchmarks/shared_gpu.py --device cuda --processes 1 2 4 8 --vocab 8000 --hidden 256

Each process trains its own model (the pipeline's model and loss, Adam, its own seed) on
its own random batches, as separate `train` jobs sharing a GPU do. All start together
(a barrier after their warm-up steps) and run for ``--seconds``; the figure is the target
tokens (translation) or examples (classification) all processes trained per second,
against one process alone. On a GPU the step of one small model is bound by kernel
launches, so processes fill the device's idle time: this measures how many GPU jobs one
GPU should take (the profiles' `gpu` resource, docs/slurm.md). On the CPU the processes
share the cores (``--threads`` each).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import platform
import time

import torch

from attnlearn.models.tasks import make_task
from attnlearn.runtime.device import sync
from attnlearn.runtime.device import resolve_device


def batches(args, seed: int, device) -> list[dict]:
    g = torch.Generator().manual_seed(seed)

    def ids(rows, length):
        return torch.randint(4, args.vocab, (rows, length), generator=g)

    out = []
    for _ in range(8):
        if args.task == "translation":
            tgt = ids(args.batch, args.tgt_len + 1)
            out.append({"src": ids(args.batch, args.src_len).to(device),
                        "src_len": torch.full((args.batch,), args.src_len), "tgt_in": tgt[:, :-1].to(device),
                        "tgt_len": torch.full((args.batch,), args.tgt_len), "tgt_out": tgt[:, 1:].to(device)})
        else:
            out.append({"ids": ids(args.batch, args.src_len).to(device), "len": torch.full((args.batch,), args.src_len),
                        "label": torch.randint(0, 2, (args.batch,), generator=g).float().to(device)})
    return out


def model_config(args) -> dict:
    if args.task == "translation":
        return {"hidden": args.hidden, "layers": 2, "dropout": 0.0}
    return {"embed": args.hidden, "hidden": args.hidden, "att_hidden": args.hidden}


def worker(rank: int, args, barrier, results) -> None:
    torch.set_num_threads(args.threads)
    device = resolve_device(args.device)
    torch.manual_seed(rank)
    task = make_task(args.task, args.vocab)
    model = task.build(model_config(args), "standard").to(device)
    optim = torch.optim.Adam(model.parameters(), lr=1e-3)
    data = batches(args, rank, device)
    unit = args.batch * (args.tgt_len if args.task == "translation" else 1)

    def step(i):
        optim.zero_grad(set_to_none=True)
        task.loss(model, data[i % len(data)]).backward()
        optim.step()

    for i in range(args.warmup):
        step(i)
    sync(device)
    barrier.wait()
    start, steps = time.perf_counter(), 0
    while time.perf_counter() - start < args.seconds:
        step(steps)
        steps += 1
        if steps % 20 == 0:
            sync(device)
    sync(device)
    results.put((steps * unit, time.perf_counter() - start))


def measure(args, processes: int) -> float:
    ctx = mp.get_context("spawn")  # CUDA cannot be used in forked children
    barrier, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=worker, args=(r, args, barrier, results)) for r in range(processes)]
    for p in procs:
        p.start()
    done = [results.get() for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode:
            raise SystemExit(f"a worker exited with {p.exitcode}")
    return sum(units for units, _ in done) / max(seconds for _, seconds in done)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--task", choices=["translation", "classification"], default="translation")
    ap.add_argument("--processes", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--vocab", type=int, default=600)
    ap.add_argument("--hidden", type=int, default=96)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--src-len", type=int, default=16)
    ap.add_argument("--tgt-len", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1, help="torch threads per process")
    args = ap.parse_args()
    where = torch.cuda.get_device_name(0) if args.device != "cpu" and torch.cuda.is_available() else platform.processor()
    unit = "target tok/s" if args.task == "translation" else "examples/s"
    print(f"{args.task}, V={args.vocab}, H={args.hidden}, B={args.batch}, S={args.src_len}, T={args.tgt_len}, "
          f"{args.seconds:g} s each, torch {torch.__version__}, {args.device} ({where})\n")
    print(f"| processes | aggregate {unit} | per process | vs 1 process |\n|---|---|---|---|")
    base = None
    for n in args.processes:
        rate = measure(args, n)
        base = base or (rate if n == 1 else None)
        ratio = f"{rate / base:.2f}x" if base else "-"
        print(f"| {n} | {rate:,.0f} | {rate / n:,.0f} | {ratio} |", flush=True)


if __name__ == "__main__":
    main()
