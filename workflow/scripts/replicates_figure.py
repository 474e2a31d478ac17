"""Rule replicates_figure: Table 2 as distributions, every replicate's value per column beside
the mean, its prediction interval and the paper's value (reporting/replicates_figure.py), and
A(alpha*, xi^uf) against what each replicate reads (reporting/readings_figure.py)."""

import pandas as pd

from attnlearn.reporting.readings_figure import readings_figure
from attnlearn.reporting.replicates_figure import replicates_figure
from attnlearn.runtime.jobs import run


def main(job):
    replicates_figure(pd.read_parquet(job.input.replicates), pd.read_parquet(job.input.intervals), job.output.figure)
    readings_figure(pd.read_parquet(job.input.readings), job.output.readings,
                    "A(α*, ξ^uf) against what each replicate reads (datasets with three or more replicates)")


run(main, globals().get("snakemake"))
