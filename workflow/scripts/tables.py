"""Rule tables: the long agreement and performance tables, Table 2 and the gold table."""

import pandas as pd

from attnlearn import tables as T
from attnlearn.io import atomic_path, write_parquet
from attnlearn.jobs import run


def main(job):
    agr = pd.concat([pd.read_parquet(p) for p in job.input.agreement], ignore_index=True)
    perf = pd.concat([pd.read_parquet(p) for p in job.input.perf], ignore_index=True)
    table2 = T.table2(agr, perf, job.params.tasks)
    write_parquet(agr, job.output.agreement)
    write_parquet(perf, job.output.performance)
    write_parquet(table2, job.output.table2)
    write_parquet(T.gold_table(agr, perf), job.output.gold)
    with atomic_path(job.output.table2_tsv) as tmp:
        table2.to_csv(tmp, sep="\t", index=False, float_format="%.4f")


run(main, globals().get("snakemake"))
