"""Rule sweep_figure: each column of a sweep against the swept value (src/attnlearn/reporting/sweep_figure.py)."""

import pandas as pd

from attnlearn.reporting.sweep_figure import sweep_figure
from attnlearn.runtime.jobs import run


def main(job):
    sweep_figure(pd.read_parquet(job.input.replicates), pd.read_parquet(job.input.table),
                 pd.read_parquet(job.input.trend), job.params.key, job.output.figure)


run(main, globals().get("snakemake"))
