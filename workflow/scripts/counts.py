"""Rule counts: the co-occurrence count table with t(y|x) (Parquet)."""

import json

import pandas as pd

from attnlearn.data import counts as C
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    vocab = json.load(open(job.input.tokenizer))["vocab_size"]
    train = pd.read_parquet(job.input.train)
    if job.params.task == "translation":
        matrix = C.count_matrix(*C.translation_sides(train), vocab, vocab)
    else:
        matrix = C.count_matrix(*C.classification_sides(train), vocab, 2)
    write_parquet(C.count_frame(matrix), job.output.counts)


run(main, globals().get("snakemake"))
