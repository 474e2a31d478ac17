"""The BiLSTM encoders: packed batch vs one fused call per direction and layer (not a test).

    python benchmarks/encoder.py [--threads 1] [--repeats 10]

Times forward + backward of ``nn.LSTM`` over a packed batch (what the models ran before)
and of models/bilstm.py's ``bilstm`` over the same padded batch, in one process,
alternately, CPU time of the process: the classifier's one-layer encoder (outputs only)
and the translation model's two-layer one (outputs and final states, the decoder's
start). Lengths are drawn uniformly from [S/4, S] with one row of length S (a batch is
padded to its longest row). Prints one Markdown row per size: milliseconds each way and
the speed-up.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnlearn.models.bilstm import bilstm

# (name, input size, hidden, layers, longest row, batch): the paper's classifier on SST-like
# and cut 20 Newsgroups batches, the default config's synthetic classifier, and the
# translation encoder at the paper's size (Multi30k-like batches) and the default's
SIZES = [("classifier, paper, S = 35 (SST)", 300, 256, 1, 35, 32),
         ("classifier, paper, S = 200 (20 NG cut)", 300, 256, 1, 200, 32),
         ("classifier, default synthetic_cls, S = 30", 64, 64, 1, 30, 32),
         ("translation, paper, S = 30 (Multi30k), with final states", 256, 256, 2, 30, 16),
         ("translation, default synthetic_mt, S = 14, with final states", 96, 96, 2, 14, 32)]


def packed(lstm, x, lengths, states: bool):
    out, (h, c) = lstm(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    out = pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]
    return out.sum() + h.sum() + c.sum() if states else out.sum()


def fused(lstm, x, lengths, states: bool):
    if not states:
        return bilstm(lstm, x, lengths).sum()
    out, (h, c) = bilstm(lstm, x, lengths, states=True)
    return out.sum() + h.sum() + c.sum()


def cpu_ms(fn, repeats: int) -> float:
    start = time.process_time()
    for _ in range(repeats):
        fn().backward()
    return (time.process_time() - start) / repeats * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print("| size | packed, ms | fused, ms | speed-up |\n|---|---|---|---|")
    for name, d, h, layers, s, b in SIZES:
        states = layers > 1  # the translation encoder: the decoder starts from its final states
        lstm = torch.nn.LSTM(d, h, layers, batch_first=True, bidirectional=True)
        x = torch.randn(b, s, d, requires_grad=True)
        lengths = torch.randint(s // 4, s + 1, (b,))
        lengths[0] = s
        times = {"packed": [], "fused": []}
        for _ in range(2):  # alternate, keep the best of each: load on the machine only adds
            times["packed"].append(cpu_ms(lambda: packed(lstm, x, lengths, states), args.repeats))
            times["fused"].append(cpu_ms(lambda: fused(lstm, x, lengths, states), args.repeats))
        p, f = min(times["packed"]), min(times["fused"])
        print(f"| {name} | {p:.1f} | {f:.1f} | {p / f:.2f}x |")


if __name__ == "__main__":
    main()
