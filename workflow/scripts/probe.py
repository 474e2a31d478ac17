"""Rule probe: every checkpoint of one run -> measures table and performance table."""

import json

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.io import atomic_path, write_parquet
from attnlearn.jobs import run
from attnlearn.probes import probe_checkpoints, probe_examples
from attnlearn.tasks import make_task
from attnlearn.train import build_model, list_checkpoints, resolve_device


def main(job):
    p = job.params
    task = make_task(p.run["task"], json.load(open(job.input.tokenizer))["vocab_size"])
    device = resolve_device(p.run["device"])
    model = build_model(task, p.run).to(device)
    valid = probe_examples(pd.read_parquet(job.input.valid), p.probe["max_examples"])
    table, perf = probe_checkpoints(task, model, valid, list_checkpoints(job.input.checkpoints),
                                    p.probe["measures"], p.probe["batch_size"], device, p.probe["chunk_elems"])
    with atomic_path(job.output.probe, ".parquet") as tmp:
        pq.write_table(table, tmp)
    write_parquet(perf, job.output.perf)


run(main, globals().get("snakemake"))
