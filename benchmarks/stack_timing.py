"""Timing shared by the stacked-training benchmarks (stacked.py, stacked_translation.py): a
stacked step against its members' separate steps, alternated so a drift in the machine's speed
hits both, and the command-line options both take."""

from __future__ import annotations

import platform
import time

import torch

from attnlearn.runtime.device import sync
from attnlearn.statistics import t_interval


def timed(step, n_steps: int, warmup: int, device) -> float:
    """Seconds for ``n_steps`` calls of ``step(i)`` after ``warmup`` untimed ones."""
    for i in range(warmup):
        step(i)
    sync(device)
    start = time.perf_counter()
    for i in range(n_steps):
        step(i)
    sync(device)
    return time.perf_counter() - start


def alternated(separate, stacked, args, device) -> tuple[float, float, dict]:
    """Mean seconds of the separate and the stacked steps over ``args.repeats`` timings of each,
    ABBA order, and the speed-up's mean with its 95% t interval over the repeats."""
    ratios, t_sep, t_stack = [], 0.0, 0.0
    for r in range(args.repeats):
        order = [(separate, "sep"), (stacked, "stack")][:: 1 if r % 2 == 0 else -1]
        took = {name: timed(step, args.steps, args.warmup, device) for step, name in order}
        ratios.append(took["sep"] / took["stack"])
        t_sep, t_stack = t_sep + took["sep"] / args.repeats, t_stack + took["stack"] / args.repeats
    return t_sep, t_stack, t_interval(ratios)


def add_timing_options(ap) -> None:
    """The options both benchmarks take: where, how long, and how often."""
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batched", action="store_true", help="on a CPU too, the one batched model (what a GPU "
                    "stack trains); by default a CPU stack steps its members in turn, as train.stack does there")
    ap.add_argument("--repeats", type=int, default=1, help="timings of each, alternated; with 2 or more the "
                    "ratio's mean over them gets its 95%% t interval")


def device_label(device) -> str:
    """The GPU's name, or the CPU's, for the benchmark's heading."""
    return torch.cuda.get_device_name(0) if device.type == "cuda" else platform.processor() or platform.machine()


def ratio_cell(ratio) -> str:
    """The speed-up as a table cell: its mean, with its 95% interval where repeats give one."""
    mean, low, high, n = ratio
    return f"{mean:.2f}x" + (f" [{low:.2f}, {high:.2f}] (n = {n})" if n > 1 else "")
