"""Rule gold: the gold links of the probed validation examples as a 0/1 measure."""

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.runtime.io import atomic_path
from attnlearn.runtime.jobs import run
from attnlearn.data.probe_table import gold_table, probe_examples


def main(job):
    valid = probe_examples(pd.read_parquet(job.input.valid), job.params.max_examples)
    with atomic_path(job.output.gold, ".parquet") as tmp:
        pq.write_table(gold_table(job.params.task, valid), tmp)


run(main, globals().get("snakemake"))
