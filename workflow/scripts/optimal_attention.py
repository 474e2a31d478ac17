"""Rule optimal_attention: one dataset's additive runs, their optimal attention against xi,
alpha* and the uniform probe, and the additive and standard runs' best performance
(attnlearn.agreement.optimal_attention)."""

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.agreement.optimal_attention import comparison_rows, performance_rows


def main(job):
    p, i = job.params, job.input
    probes = {r: pq.read_table(path) for r, path in zip([*p.additive, *p.uniform], [*i.additive, *i.uniform])}
    perf = {r: pd.read_parquet(path) for r, path in zip([*p.additive, *p.uniform, *p.standard],
                                                        [*i.additive_perf, *i.uniform_perf, *i.standard_perf])}
    write_parquet(comparison_rows(job.wildcards.dataset, probes, perf, p.additive, p.uniform), job.output.rows)
    compared = {r: perf[r] for r in [*p.additive, *p.standard]}  # each perf file read once
    write_parquet(performance_rows(job.wildcards.dataset, compared), job.output.performance)


run(main, globals().get("snakemake"))
