"""Our translation model against the authors' reference implementation, side by side (not a test).

    python benchmarks/vs_reference.py                       # fetches the reference at a pinned commit
    python benchmarks/vs_reference.py --reference PATH      # a checkout of Sea-Snell/AttentionDynamics,
                                                            # or its translation/seq2seq_model.py

The reference code is never copied into this repository: it is fetched at run time
(translation/seq2seq_model.py of Sea-Snell/AttentionDynamics at commit REF_COMMIT,
checked against its sha256) into ~/.cache/attnlearn/, or read from the path given.

Both models at the paper's size (V = 8,000, H = 256, 2 layers, dropout 0.5 in
training), on the same batches, in one process, timed in alternation:

- train: one training step's forward and backward pass (batch 16, S = T = 16);
- probe: alpha and xi over the T x S x V logits of one checkpoint (batch 32, S = T = 16):
  ours through ``probe_checkpoints``, the reference as its eval_dump does it
  (``get_state_scores2`` one example at a time, attention from a batched pass);
- memory: the peak resident memory a probe adds (batch 32, S = T = 48), each side in a
  fresh subprocess.

Prints a Markdown table: median seconds per call of each side and the ratio
(the reference's time over ours: above 1 means ours is faster; memory: ours over the
reference's).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnlearn.config import TASK_DEFAULTS
from attnlearn.probing.probes import probe_checkpoints
from attnlearn.models.tasks import make_task
from attnlearn.training.model import build_model

REF_COMMIT = "45774617fc90e85069cb6f5212fb5f1aad5f6a30"
REF_FILE = "translation/seq2seq_model.py"
REF_SHA256 = "5dfb24bb704cc163d93655e7193eb4f975ec5e76030abb704402a4db642833fc"
REF_URL = f"https://raw.githubusercontent.com/Sea-Snell/AttentionDynamics/{REF_COMMIT}/{REF_FILE}"
V, H = 8000, 256


def reference_source(path: str | None) -> Path:
    """The reference model's source file: the path given, or the pinned download."""
    if path:
        p = Path(path)
        return p / REF_FILE if p.is_dir() else p
    cached = Path.home() / ".cache" / "attnlearn" / "reference" / REF_COMMIT / "seq2seq_model.py"
    if not cached.exists():
        data = urllib.request.urlopen(REF_URL, timeout=60).read()
        if hashlib.sha256(data).hexdigest() != REF_SHA256:
            sys.exit(f"{REF_URL}: sha256 mismatch; expected {REF_SHA256}")
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp")
        tmp.write_bytes(data)
        os.replace(tmp, cached)
    return cached


def load_reference(path: Path):
    """The reference's model class, from its file run as a module of its own (not installed)."""
    return runpy.run_path(str(path), run_name="reference_seq2seq_model")["Seq2seq"]


def examples(n: int, length: int, seed: int) -> pd.DataFrame:
    """Token-id sequences <s> ... </s> of lengths between length/2 and length (pad 0)."""
    rng = np.random.default_rng(seed)

    def seq():
        return [1, *rng.integers(4, V, rng.integers(length // 2, length - 1)).tolist(), 2]

    return pd.DataFrame({"src_ids": [seq() for _ in range(n)], "tgt_ids": [seq() for _ in range(n)]})


def time_major(b) -> tuple[torch.Tensor, torch.Tensor]:
    """Our batch as the reference reads it: [S, B] source and [T + 1, B] target, pad 0."""
    tgt = torch.cat([b["tgt_in"][:, :1], b["tgt_out"]], 1)
    return b["src"].T.contiguous(), tgt.T.contiguous()


def models(ref_cls, dropout: float):
    task = make_task("translation", V)
    ours = build_model(task, {"seed": 0, "variant": "standard",
                              "model": {"hidden": H, "layers": 2, "dropout": dropout}})
    torch.manual_seed(0)
    ref = ref_cls(device="cpu", vocab_size=V, hidden_dim=H, dropout=dropout, num_layers=2, pad_id=0, full_model=True)
    return task, ours, ref


CLOCKS = {"cpu": time.process_time, "wall": time.perf_counter}
clock = CLOCKS["cpu"]


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times)


def alternate(fns: dict, repeats: int, warmup: int = 2) -> dict:
    """Median seconds per call of each function, calls interleaved so that load hits both alike."""
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    times = {k: [] for k in fns}
    for _ in range(repeats):
        for k, fn in fns.items():
            times[k].append(median_time(fn, 1))
    return {k: statistics.median(v) for k, v in times.items()}


def train_step_times(ref_cls, repeats: int) -> dict:
    task, ours, ref = models(ref_cls, 0.5)
    b = task.batch(examples(16, 16, 1), np.arange(16))
    src, tgt = time_major(b)
    ours.train(), ref.train()

    def ours_step():
        ours.zero_grad(set_to_none=True)
        task.loss(ours, b).backward()

    def ref_step():
        ref.zero_grad(set_to_none=True)
        ref.compute_loss(src, tgt)["loss"].backward()

    return alternate({"ours": ours_step, "reference": ref_step}, repeats)


def reference_probe(ref, src, tgt, one_by_one: bool):
    """What the reference's eval_dump computes for alpha and xi (eval_model.py): xi by
    ``get_state_scores2`` in training mode with dropout 0 (autograd on), on the whole batch or,
    as its eval_dump does, one example at a time; alpha from a batched pass without gradients."""
    ref.train()
    if one_by_one:
        xi = [ref.get_state_scores2(src[:, i:i + 1], tgt[:, i:i + 1])[0] for i in range(src.shape[1])]
    else:
        xi = ref.get_state_scores2(src, tgt)
    ref.eval()
    with torch.no_grad():
        enc, mask, hidden = ref.encode(src)
        _, _, alpha = ref.decode(tgt[:-1], hidden, enc, mask)
    return xi, alpha


def probe_setup(ref_cls, n: int, length: int, folder: Path):
    task, ours, ref = models(ref_cls, 0.0)
    table = examples(n, length, 2)
    ckpt = folder / "step0.pt"
    torch.save(ours.state_dict(), ckpt)
    src, tgt = time_major(task.batch(table, np.arange(n)))
    return {
        "ours": lambda: probe_checkpoints(task, ours, table, [(0, ckpt)], ["alpha", "xi"], n, torch.device("cpu"),
                                          folder / "probe.parquet", TASK_DEFAULTS["translation"]["probe"]["chunk_elems"],
                                          progress=False),
        "reference": lambda: reference_probe(ref, src, tgt, one_by_one=False),
        "reference_one_by_one": lambda: reference_probe(ref, src, tgt, one_by_one=True),
    }


def probe_times(ref_cls, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return alternate(probe_setup(ref_cls, 32, 16, Path(tmp)), repeats, warmup=1)


def status_bytes(key: str) -> int:
    """VmRSS (resident now) or VmHWM (its peak) of this process, from /proc (Linux)."""
    return int(next(line for line in open("/proc/self/status") if line.startswith(key)).split()[1]) * 1024


def peak_memory_child(ref_path: str, side: str, length: int) -> None:
    """In a fresh process: the peak resident memory one probe call adds, printed as JSON."""
    with tempfile.TemporaryDirectory() as tmp:
        fn = probe_setup(load_reference(Path(ref_path)), 32, length, Path(tmp))[side]
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # the peak (VmHWM) restarts from here, past the set-up's own peak
        before = status_bytes("VmRSS")
        fn()
        peak = status_bytes("VmHWM")
    print(json.dumps({"side": side, "peak_added_bytes": peak - before}))


def peak_memory(ref_path: Path, length: int) -> dict:
    out = {}
    for side in ("ours", "reference", "reference_one_by_one"):
        proc = subprocess.run([sys.executable, __file__, "--child", side, "--reference", str(ref_path),
                               "--length", str(length)], capture_output=True, text=True, check=True)
        out[side] = json.loads(proc.stdout.strip().splitlines()[-1])["peak_added_bytes"]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reference", help="a checkout of the reference repository, or its seq2seq_model.py")
    ap.add_argument("--repeats", type=int, default=20, help="timed calls per side")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--clock", choices=sorted(CLOCKS), default="cpu",
                    help="cpu: this process's CPU seconds (steady on a shared machine); wall: elapsed seconds")
    ap.add_argument("--child", choices=["ours", "reference", "reference_one_by_one"], help=argparse.SUPPRESS)
    ap.add_argument("--length", type=int, default=48, help="S = T of the memory measurement")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    global clock
    clock = CLOCKS[args.clock]
    if args.child:
        return peak_memory_child(args.reference, args.child, args.length)
    path = reference_source(args.reference)
    ref_cls = load_reference(path)
    train = train_step_times(ref_cls, args.repeats)
    probe = probe_times(ref_cls, max(3, args.repeats // 4))
    memory = peak_memory(path, args.length)
    print(f"reference: {REF_FILE} at {REF_COMMIT[:7]}; torch {torch.__version__}, {args.threads} thread(s), "
          f"{args.clock} clock\n")
    print("| measure | reference | ours | ratio |\n|---|---|---|---|")
    for name, t in (("training step, fwd + bwd, batch 16, S = T = 16 (s)", train),
                    ("probe alpha + xi, batch 32, S = T = 16 (s)", probe)):
        print(f"| {name} | {t['reference']:.4f} | {t['ours']:.4f} | {t['reference'] / t['ours']:.2f}x as fast |")
    one = probe["reference_one_by_one"]
    print(f"| the same probe, the reference one example at a time as its eval_dump runs it (s) | {one:.4f} | "
          f"{probe['ours']:.4f} | {one / probe['ours']:.2f}x as fast |")
    for key, label in (("reference", "batched"), ("reference_one_by_one", "one example at a time")):
        print(f"| probe peak memory added, batch 32, S = T = {args.length}, reference {label} (MB) | "
              f"{memory[key] / 2**20:.0f} | {memory['ours'] / 2**20:.0f} | "
              f"{memory['ours'] / memory[key]:.3f} of the reference's |")


if __name__ == "__main__":
    main()
