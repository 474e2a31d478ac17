"""A(alpha*, xi^uf) and A(g*, xi^uf) of a finished classification row, re-probed on its
validation texts cut at another length than the row's ``tokenizer.max_tokens``.

    python diagnostics/probe_lengths.py local.yaml results newsgroups --max-tokens 0

config/paper_cpu.yaml cuts 20 Newsgroups posts at 200 tokens to train on 2 cores; the paper
trains and probes whole posts. The cut decides what is probed as well as what is trained:
this script keeps the trained checkpoints (run A at its best step, the uniform run at each
of its checkpoints up to ``--u-until``) and probes them again on the same validation posts
cut at ``--max-tokens`` (0: whole), so the probing half of the cut is measured apart from
the training half (docs/reproduction.md, 20 Newsgroups). The vocabulary does not depend on
the cut; the script checks that it rebuilds the row's own.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import torch

from attnlearn.agreement.metric import load_measure, summarize
from attnlearn.agreement.compare import best_step
from attnlearn.config import load_config, read_config_file
from attnlearn.data.probe_table import probe_examples
from attnlearn.probing.probes import probe_checkpoints
from attnlearn.models.tasks import make_task
from attnlearn.data.tokenize import tokenize_classification
from attnlearn.training.model import build_model
from attnlearn.training.workdir import list_checkpoints

SCHEMA = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"


def recut_valid(results: Path, dataset: str, entry: dict, max_tokens: int | None) -> tuple[pd.DataFrame, int]:
    """The row's probed validation examples, tokenized with its vocabulary and cut at
    ``max_tokens``; and the vocabulary's size."""
    data = results / "data" / dataset
    splits = {s: pd.read_parquet(data / f"{s}.parquet") for s in ("train", "valid")}
    vocab, tables = tokenize_classification(splits, entry["tokenizer"]["min_count"], max_tokens=max_tokens)
    row_vocab = json.loads((results / "tokenized" / dataset / "tokenizer.json").read_text())["vocab"]
    if vocab != row_vocab:
        sys.exit(f"{results}/tokenized/{dataset}/tokenizer.json: the row's vocabulary is not the one "
                 "rebuilt from its training texts (GloVe words, or another min_count?)")
    return probe_examples(tables["valid"], entry["probe"]["max_examples"]), len(vocab)


def probe(results: Path, entry, dataset, run, vocab_size, table, steps, measures, out: Path) -> pq.Table:
    """The run's checkpoints at ``steps``, probed on ``table`` (the pipeline's probe code)."""
    variant, seed = run.rsplit("-s", 1)
    task = make_task("classification", vocab_size)
    model = build_model(task, {"variant": variant, "seed": int(seed), "model": entry["model"],
                               "train": entry["train"]})
    ckpts = [(s, p) for s, p in list_checkpoints(results / "runs" / dataset / run / "checkpoints") if s in steps]
    probe_checkpoints(task, model, table, ckpts, measures, entry["probe"]["batch_size"], torch.device("cpu"),
                      out, entry["probe"]["chunk_elems"])
    return pq.read_table(out)


def recut_agreement(configfile, results: Path, dataset: str, max_tokens: int | None, u_until: int,
                    a_run: str = "standard-s1", u_run: str = "uniform-s1") -> tuple[pd.DataFrame, int, int]:
    """Per uniform checkpoint up to ``u_until``: A(alpha*, xi^uf), A(g*, xi^uf) and the random
    baseline on the re-cut validation texts; and run A's best step and the number of texts."""
    config = load_config({**read_config_file(configfile), "only": [dataset]}, SCHEMA, str(configfile))
    entry = config["datasets"][dataset]
    table, vocab_size = recut_valid(results, dataset, entry, max_tokens)
    star = best_step(pd.read_parquet(results / "probes" / dataset / f"{a_run}.perf.parquet"))
    u_steps = {s for s, _ in list_checkpoints(results / "runs" / dataset / u_run / "checkpoints") if s <= u_until}
    with tempfile.TemporaryDirectory() as tmp:
        a = probe(results, entry, dataset, a_run, vocab_size, table, {star}, ["alpha", "grad"], Path(tmp) / "a.pq")
        u = probe(results, entry, dataset, u_run, vocab_size, table, u_steps, ["xi"], Path(tmp) / "u.pq")
    a_measures = {column: load_measure(a, name, star)
                  for name, column in (("alpha", "agr_alpha_xi_uniform"), ("grad", "agr_grad_xi_uniform"))}
    rows = []
    for step in sorted(u_steps):
        xi, row = load_measure(u, "xi", step), {"u_step": step}
        for column, measure in a_measures.items():
            (res,) = summarize(measure, xi, metrics=("agreement",))
            row[column], row["random_baseline"] = res["value"], res["baseline"]
        rows.append(row)
    return pd.DataFrame(rows), star, len(table)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("configfile", help="the row's config (e.g. local.yaml)")
    parser.add_argument("results", type=Path)
    parser.add_argument("dataset")
    parser.add_argument("--max-tokens", type=int, default=0, help="cut for probing (0: whole texts)")
    parser.add_argument("--u-until", type=int, default=500, help="last uniform checkpoint probed")
    parser.add_argument("--a-run", default="standard-s1")
    parser.add_argument("--u-run", default="uniform-s1")
    args = parser.parse_args(argv)
    df, star, n = recut_agreement(args.configfile, args.results, args.dataset, args.max_tokens or None,
                                  args.u_until, args.a_run, args.u_run)
    print(f"{args.dataset}: {args.a_run} (step {star}) vs {args.u_run}, {n} validation texts cut at "
          f"{args.max_tokens or 'no'} tokens")
    print(df.to_string(index=False, float_format=lambda v: f"{100 * v:.1f}"))
    print("max:", ", ".join(f"{c} {100 * df[c].max():.1f}" for c in ("agr_alpha_xi_uniform", "agr_grad_xi_uniform")))


if __name__ == "__main__":
    main(sys.argv[1:])
