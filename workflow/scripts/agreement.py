"""Rule agreement: all comparisons of one dataset -> long-form agreement rows."""

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.compare import Comparator, performance_frame
from attnlearn.io import write_parquet
from attnlearn.jobs import run


def main(job):
    runs = job.params.runs
    probes = {r: pq.read_table(path) for r, path in zip(runs, job.input.probes)}
    perf = {r: pd.read_parquet(path) for r, path in zip(runs, job.input.perf)}
    gold = pq.read_table(job.input.gold) if "gold" in job.input.keys() else None
    ibm1 = pq.read_table(job.input.ibm1) if "ibm1" in job.input.keys() else None
    comparator = Comparator(job.wildcards.dataset, probes, perf, pq.read_table(job.input.proxy), gold, ibm1=ibm1)
    write_parquet(comparator.build(), job.output.agreement)
    write_parquet(performance_frame(job.wildcards.dataset, perf), job.output.perf)


run(main, globals().get("snakemake"))
