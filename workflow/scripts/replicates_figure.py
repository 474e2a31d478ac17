"""Rule replicates_figure: Table 2 as distributions, every replicate's value per column beside
the mean, its prediction interval and the paper's value (reporting/replicates_figure.py)."""

import pandas as pd

from attnlearn.reporting.replicates_figure import replicates_figure
from attnlearn.runtime.jobs import run


def main(job):
    replicates_figure(pd.read_parquet(job.input.replicates), pd.read_parquet(job.input.intervals), job.output.figure)


run(main, globals().get("snakemake"))
