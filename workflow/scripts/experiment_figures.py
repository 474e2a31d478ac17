"""Rules keyword_figure, multihead_figure, copying_figure, copy_counts_figure, derivative_figure
({kind}_figure, rules/experiments.smk): one figure of the controlled experiments from its table
(the figure's name is the table's)."""

from pathlib import Path

import pandas as pd

from attnlearn.experiments import derivative_plots
from attnlearn.runtime.jobs import run
from attnlearn.experiments import plots

DRAW = {  # table / figure name -> how it is drawn
    "copying": plots.copying_figure,
    "copy_counts": plots.counts_figure,
    "multihead": plots.multihead_figure,
    "keyword": plots.keyword_figure,
    "derivative": derivative_plots.figure,
}


def main(job):
    DRAW[Path(job.output.figure).stem](pd.read_parquet(job.input.table), job.output.figure)


run(main, globals().get("snakemake"))
