"""Rule datacard: examples and median lengths per dataset and split (paper Table 9)."""

import pandas as pd

from attnlearn.data.card import data_card
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    splits = ("train", "valid", "test")
    n = len(splits)
    frames = {d: {s: (pd.read_parquet(job.input.data[i * n + j]), pd.read_parquet(job.input.tokens[i * n + j]))
                  for j, s in enumerate(splits)} for i, d in enumerate(job.params.datasets)}
    write_parquet(data_card(frames, job.params.tasks), job.output.card)


run(main, globals().get("snakemake"))
