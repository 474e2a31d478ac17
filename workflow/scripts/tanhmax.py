"""Rule tanhmax: softmax run A vs TanhMax run T of one dataset (docs/analyses.md)."""

import json

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.analyses.tanhmax import comparison, keyword_classes, synthetic_cls_keywords
from attnlearn.agreement.compare import run_roles
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    p = job.params
    probes = {r: pq.read_table(path) for r, path in zip(p.runs, job.input.probes)}
    perf = {r: pd.read_parquet(path) for r, path in zip(p.runs, job.input.perf)}
    token_class = valid = None
    if p.source["kind"] == "synthetic_cls":
        vocab = json.load(open(job.input.tokenizer))["vocab"]
        keywords = synthetic_cls_keywords(p.source["options"], p.source["seed"])
        valid = pd.read_parquet(job.input.valid)
        token_class = lambda ids: keyword_classes(ids, vocab, keywords)  # noqa: E731
    write_parquet(comparison(job.wildcards.dataset, probes, perf, run_roles(p.runs), valid, token_class),
                  job.output.table)


run(main, globals().get("snakemake"))
