"""Rule copying_table: all copy distributions' curves in one table, a per-task
summary with 95% intervals over seeds, and each distribution's count table with its
aligned-vs-other contrast."""

import pandas as pd

from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.experiments import copying as E
from attnlearn.experiments import summary as S


def main(job):
    table = pd.concat([pd.read_parquet(p) for p in job.input.curves], ignore_index=True)
    write_parquet(table, job.output.table)
    write_parquet(S.wide(S.copying_intervals(table), "task").rename(columns={"n": "seeds"}), job.output.summary)
    counts = pd.concat([E.copy_counts(name, spec, job.params.count_samples, 0)
                        for name, spec in job.params.tasks.items()], ignore_index=True)
    write_parquet(counts, job.output.counts)
    write_parquet(E.count_contrast(counts), job.output.contrast)


run(main, globals().get("snakemake"))
