"""Rules probe, probe_train: every checkpoint of one run -> measures table and performance
table, on the first probe.max_examples examples of the split given as input."""

import base64
import json

import pandas as pd

from attnlearn.io import atomic_path, write_parquet
from attnlearn.jobs import run
from attnlearn.probes import probe_checkpoints, probe_examples
from attnlearn.tasks import make_task
from attnlearn.tokenize import load_sentencepiece
from attnlearn.train import build_model, list_checkpoints, resolve_device


def main(job):
    p = job.params
    tokenizer = json.load(open(job.input.tokenizer))
    task = make_task(p.run["task"], tokenizer["vocab_size"])
    device = resolve_device(p.run["device"])
    model = build_model(task, p.run).to(device)
    examples = probe_examples(pd.read_parquet(job.input.examples), p.probe["max_examples"])
    bleu = None
    if p.run["task"] == "translation" and p.probe.get("bleu"):
        sp = load_sentencepiece(base64.b64decode(tokenizer["model_b64"]))
        bleu = {"beam": p.probe["beam"], "max_len": p.probe["max_decode_len"], "detok": sp.decode_ids}
    with atomic_path(job.output.probe, ".parquet") as tmp:  # written checkpoint by checkpoint
        perf = probe_checkpoints(task, model, examples, list_checkpoints(job.input.checkpoints),
                                 p.probe["measures"], p.probe["batch_size"], device, tmp, p.probe["chunk_elems"],
                                 bleu=bleu)
    write_parquet(perf, job.output.perf)


run(main, globals().get("snakemake"))
