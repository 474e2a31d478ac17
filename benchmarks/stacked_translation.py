"""K translation runs trained as one stacked model against the same K runs one after another
(not a test; docs/benchmarks.md, "Stacked training"): benchmarks/stacked.py's translation twin.

    python benchmarks/stacked_translation.py --device cuda --stacks 1 8 16 --repeats 3   # Multi30k-sized
    python benchmarks/stacked_translation.py --vocab 400 --hidden 16 --stacks 1 2 --steps 2   # a tiny CPU check

The defaults are Multi30k's model and batch (V = 8,000, H = 256, 2 layers, dropout 0.5,
B = 16 sentence pairs per member), source and target rows of random length between
``--min-len`` and ``--max-len``. Each of the K members has its own initial weights, its own
batches and its own dropout stream, as the members of a ``train.stack`` job do. "separate"
steps each member's own ``Seq2Seq`` in turn, with its own Adam (what K ``train`` jobs one after
another cost); "stacked" is what a ``train.stack`` job steps on the device: on a GPU (or with
``--batched``) the one ``StackedSeq2Seq`` (models/stacked_seq2seq.py) over the K batches padded
to the longest rows of all, each member's dropout masks from its own generator; on a CPU the K
models in turn in one process with one Adam, each under its own generator (training/train.py
``members_step``). The figures are aggregate sentence pairs and real target tokens per second
over all K members, and the padded positions the stack computes beyond what the separate runs
compute (the stack's output layer runs at every target position, the separate runs' at real
ones only). With ``--repeats R`` the two are timed R times each, alternated, and "stacked /
separate" is the mean of the R ratios with its 95% t interval.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import pandas as pd
import torch

from attnlearn.models.tasks import StackedTranslationTask, TranslationTask
from attnlearn.runtime.device import resolve_device
from attnlearn.training.train import members_step, train_step

# the sibling script, found as `python benchmarks/X.py` puts the script's folder first on sys.path
from stack_timing import add_timing_options, alternated, device_label, ratio_cell


def rows(args, K: int, rounds: int) -> tuple[pd.DataFrame, list[list[np.ndarray]]]:
    """Random sentence pairs (ids 4..V-1, lengths drawn apart) and, per member and round, the
    indices of its batch: member k's rows are its own, as a stack member's are."""
    rng = np.random.default_rng(args.seed)
    n = K * rounds * args.batch

    def sentences():
        return [list(rng.integers(4, args.vocab, rng.integers(args.min_len, args.max_len + 1))) for _ in range(n)]

    table = pd.DataFrame({"src_ids": sentences(), "tgt_ids": sentences()})
    return table, [list(member) for member in np.arange(n).reshape(K, rounds, args.batch)]


def measure(args, K: int, device) -> dict:
    batched = args.batched or device.type != "cpu"  # what train.stack does on the device
    task = TranslationTask(args.vocab)
    cfg = {"hidden": args.hidden, "layers": args.layers, "dropout": args.dropout}
    members = []
    for k in range(K):  # member k's weights from seed k, its dropout from its own stream (below)
        torch.manual_seed(k)
        members.append(task.build(cfg, "standard"))
    rounds = 4
    table, idx = rows(args, K, rounds)
    data = [[task.batch(table, idx[k][r], device) for r in range(rounds)] for k in range(K)]

    adapter = StackedTranslationTask(task)
    stack = adapter.build(members).to(device)
    stack.start_generators(list(range(K)), [torch.Generator().manual_seed(k).get_state() for k in range(K)])
    stack_optim = torch.optim.Adam(stack.parameters(), lr=1e-3)
    stacked_data = [adapter.batch(table, [idx[k][r] for k in range(K)], device) for r in range(rounds)]
    copies = [copy.deepcopy(m).to(device) for m in members]  # the members in turn, in one process
    joint = torch.optim.Adam([p for m in copies for p in m.parameters()], lr=1e-3)
    rngs = [{"torch": torch.Generator().manual_seed(k).get_state()} for k in range(K)]  # a CPU's members in turn

    members = [m.to(device) for m in members]
    optims = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in members]

    def separate(i):
        for k in range(K):
            train_step(task, members[k], optims[k], data[k][i % rounds])

    def stacked(i):
        if batched:
            train_step(adapter, stack, stack_optim, stacked_data[i % rounds])  # the members' summed losses
        else:
            members_step(task, copies, joint, [data[k][i % rounds] for k in range(K)], rngs)

    t_sep, t_stack, ratio = alternated(separate, stacked, args, device)
    real = sum(int(b["tgt_len"].sum()) for member in data for b in member) / rounds
    cells = ("src", "tgt_in")
    own_pad = sum(b[c].numel() for member in data for b in member for c in cells) / rounds
    stack_pad = sum(b[c].numel() for b in stacked_data for c in cells) / rounds
    pairs = K * args.batch * args.steps
    return {"K": K, "sep_ex": pairs / t_sep, "stack_ex": pairs / t_stack, "sep_tok": real * args.steps / t_sep,
            "stack_tok": real * args.steps / t_stack, "padding": stack_pad / own_pad - 1,
            "step_ms": 1000 * t_stack / args.steps, "ratio": ratio}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", type=int, nargs="+", default=[1, 8, 16])
    ap.add_argument("--vocab", type=int, default=8000)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--min-len", type=int, default=5)
    ap.add_argument("--max-len", type=int, default=30)
    add_timing_options(ap)
    args = ap.parse_args(argv)
    device = resolve_device(args.device)
    where = device_label(device)
    print(f"translation, V={args.vocab}, H={args.hidden}, {args.layers} layers, dropout {args.dropout}, "
          f"B={args.batch}, rows of {args.min_len}-{args.max_len} tokens, {args.steps} steps, torch "
          f"{torch.__version__}, {device} ({where}), {torch.get_num_threads()} threads, "
          f"{'batched' if args.batched or device.type != 'cpu' else 'members in turn'}\n")
    print("| K | separate pairs/s | stacked pairs/s | separate tgt tok/s | stacked tgt tok/s | stacked step | "
          "stacked / separate | extra padded positions |\n|---|---|---|---|---|---|---|---|")
    for K in args.stacks:
        r = measure(args, K, device)
        ratio = ratio_cell(r["ratio"])
        print(f"| {K} | {r['sep_ex']:,.0f} | {r['stack_ex']:,.0f} | {r['sep_tok']:,.0f} | {r['stack_tok']:,.0f} | "
              f"{r['step_ms']:.1f} ms | {ratio} | {100 * r['padding']:.0f}% |", flush=True)


if __name__ == "__main__":
    main()
