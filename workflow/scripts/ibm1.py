"""Rule ibm1: IBM Model 1 by EM on a translation dataset's training tokens; its
translation table, log-likelihood per iteration, and alignment posteriors over the
probed validation rows as a probe table (measure ``ibm1``)."""

import json

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.data import counts as C
from attnlearn.training.ibm1 import IBM1
from attnlearn.runtime.io import atomic_path, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.data.probe_table import probe_examples


def main(job):
    vocab = json.load(open(job.input.tokenizer))["vocab_size"]
    model = IBM1(vocab, vocab).fit(*C.translation_sides(pd.read_parquet(job.input.train)), job.params.iterations)
    print("log-likelihood per iteration:", model.log_likelihood)
    write_parquet(model.frame(), job.output.ttable)
    write_parquet(pd.DataFrame({"iteration": range(len(model.log_likelihood)),
                                "log_likelihood": model.log_likelihood}), job.output.log)
    valid = probe_examples(pd.read_parquet(job.input.valid), job.params.max_examples)
    with atomic_path(job.output.probe, ".parquet") as tmp:
        pq.write_table(model.alignment_table(*C.translation_sides(valid)), tmp)


run(main, globals().get("snakemake"))
