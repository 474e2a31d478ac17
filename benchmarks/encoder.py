"""The classifier's BiLSTM encoder: packed batch vs one fused call per direction (not a test).

    python benchmarks/encoder.py [--threads 1] [--repeats 10]

Times forward + backward of ``nn.LSTM`` over a packed batch (what the classifier ran
before) and of models/bilstm.py's ``bilstm_outputs`` over the same padded batch, in
one process, alternately, CPU time of the process. Lengths are drawn uniformly from
[S/4, S] with one row of length S (a batch is padded to its longest row). Prints one
Markdown row per size: milliseconds each way and the speed-up.
"""

from __future__ import annotations

import argparse
import time

import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnlearn.models.bilstm import bilstm_outputs

# (name, input size, hidden, longest row, batch): the paper's classifier on SST-like and
# cut 20 Newsgroups batches, and the default config's synthetic classifier
SIZES = [("paper, S = 35 (SST)", 300, 256, 35, 32), ("paper, S = 200 (20 NG cut)", 300, 256, 200, 32),
         ("default synthetic_cls, S = 30", 64, 64, 30, 32)]


def packed(lstm, x, lengths):
    out = lstm(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))[0]
    return pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])[0]


def cpu_ms(fn, repeats: int) -> float:
    start = time.process_time()
    for _ in range(repeats):
        fn().sum().backward()
    return (time.process_time() - start) / repeats * 1000


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print("| size | packed, ms | fused, ms | speed-up |\n|---|---|---|---|")
    for name, d, h, s, b in SIZES:
        lstm = torch.nn.LSTM(d, h, batch_first=True, bidirectional=True)
        x = torch.randn(b, s, d, requires_grad=True)
        lengths = torch.randint(s // 4, s + 1, (b,))
        lengths[0] = s
        times = {"packed": [], "fused": []}
        for _ in range(2):  # alternate, keep the best of each: load on the machine only adds
            times["packed"].append(cpu_ms(lambda: packed(lstm, x, lengths), args.repeats))
            times["fused"].append(cpu_ms(lambda: bilstm_outputs(lstm, x, lengths), args.repeats))
        p, f = min(times["packed"]), min(times["fused"])
        print(f"| {name} | {p:.1f} | {f:.1f} | {p / f:.2f}x |")


if __name__ == "__main__":
    main()
