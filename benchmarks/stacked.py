"""K classification runs trained as one stacked model against the same K runs one after another
(not a test; docs/benchmarks.md, "Stacked training").

    python benchmarks/stacked.py                                       # CPU, small model
    python benchmarks/stacked.py --device cuda --stacks 1 4 16 --vocab 20000 --hidden 256 --embed 300

Each of the K members has its own initial weights and its own batches (rows of random
length between ``--min-len`` and ``--max-len``), as the members of a ``train.stack`` job do.
"separate" steps each member's own ``Classifier`` in turn, with its own Adam (what K
``train`` jobs one after another cost); "stacked" is what a ``train.stack`` job steps on the
device: on a GPU (or with ``--batched``) the one ``StackedClassifier`` (models/stacked.py) over
the K batches padded to the longest row of all; on a CPU the K models in turn in one process with
one Adam (training/train.py ``members_step``). The figures are
aggregate examples and real (unpadded) tokens per second over all K members, and the
padded positions the stack computes beyond what the separate runs compute. With ``--repeats R``
the two are timed R times each, alternated, and "stacked / separate" is the mean of the R
ratios with its 95% t interval.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np
import pandas as pd
import torch

from attnlearn.models.tasks import ClassificationTask, StackedTask
from attnlearn.runtime.device import resolve_device
from attnlearn.training.train import members_step, train_step

# the sibling script, found as `python benchmarks/X.py` puts the script's folder first on sys.path
from stack_timing import add_timing_options, alternated, device_label, ratio_cell


def rows(args, K: int, rounds: int) -> tuple[pd.DataFrame, list[list[np.ndarray]]]:
    """A table of random rows (ids of --min-len to --max-len tokens, a label) and, per member and
    round, the indices of its batch: member k's rows are its own, as a stack member's are."""
    rng = np.random.default_rng(args.seed)
    n = K * rounds * args.batch
    table = pd.DataFrame({"ids": [list(rng.integers(1, args.vocab, rng.integers(args.min_len, args.max_len + 1)))
                                  for _ in range(n)], "label": rng.integers(0, 2, n)})
    blocks = np.arange(n).reshape(K, rounds, args.batch)
    return table, [list(member) for member in blocks]



def measure(args, K: int, device) -> dict:
    batched = args.batched or device.type != "cpu"  # what train.stack does on the device
    task = ClassificationTask(args.vocab)
    cfg = {"embed": args.embed, "hidden": args.hidden, "att_hidden": args.hidden}
    members = []
    for k in range(K):
        torch.manual_seed(k)
        members.append(task.build(cfg, "standard").to(device))
    rounds = 4
    table, idx = rows(args, K, rounds)
    data = [[task.batch(table, idx[k][r], device) for r in range(rounds)] for k in range(K)]
    optims = [torch.optim.Adam(m.parameters(), lr=1e-3) for m in members]

    def separate(i):
        for k in range(K):
            train_step(task, members[k], optims[k], data[k][i % rounds])

    stack_task = StackedTask(task)
    stack = stack_task.build([m.cpu() for m in members]).to(device)
    stack_optim = torch.optim.Adam(stack.parameters(), lr=1e-3)
    stacked_data = [stack_task.batch(table, [idx[k][r] for k in range(K)], device) for r in range(rounds)]
    copies = [copy.deepcopy(m).to(device) for m in members]  # the members in turn, in one process
    joint = torch.optim.Adam([p for m in copies for p in m.parameters()], lr=1e-3)

    def stacked(i):
        if batched:
            train_step(stack_task, stack, stack_optim, stacked_data[i % rounds])  # the members' summed losses
        else:
            members_step(task, copies, joint, [data[k][i % rounds] for k in range(K)])

    members = [m.to(device) for m in members]
    t_sep, t_stack, ratio = alternated(separate, stacked, args, device)
    real = sum(int(b["len"].sum()) for member in data for b in member) / rounds
    own_pad = sum(b["ids"].numel() for member in data for b in member) / rounds
    stack_pad = sum(b["ids"].numel() for b in stacked_data) / rounds
    return {"K": K, "sep_ex": K * args.batch * args.steps / t_sep, "stack_ex": K * args.batch * args.steps / t_stack,
            "sep_tok": real * args.steps / t_sep, "stack_tok": real * args.steps / t_stack,
            "padding": stack_pad / own_pad - 1, "ratio": ratio}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stacks", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--vocab", type=int, default=2000)
    ap.add_argument("--embed", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--min-len", type=int, default=10)
    ap.add_argument("--max-len", type=int, default=60)
    add_timing_options(ap)
    args = ap.parse_args()
    device = resolve_device(args.device)
    where = device_label(device)
    print(f"classification, V={args.vocab}, E={args.embed}, H={args.hidden}, B={args.batch}, rows of "
          f"{args.min_len}-{args.max_len} tokens, {args.steps} steps, torch {torch.__version__}, {device} ({where}), "
          f"{torch.get_num_threads()} threads\n")
    print("| K | separate examples/s | stacked examples/s | separate real tok/s | stacked real tok/s | "
          "stacked / separate | extra padded positions |\n|---|---|---|---|---|---|---|")
    for K in args.stacks:
        r = measure(args, K, device)
        ratio = ratio_cell(r["ratio"])
        print(f"| {K} | {r['sep_ex']:,.0f} | {r['stack_ex']:,.0f} | {r['sep_tok']:,.0f} | {r['stack_tok']:,.0f} | "
              f"{ratio} | {100 * r['padding']:.0f}% |", flush=True)


if __name__ == "__main__":
    main()
