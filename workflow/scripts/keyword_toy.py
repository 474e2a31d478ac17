"""Rule keyword: the keyword toy's log-odds curves under uniform attention (paper 6.1)."""

import pandas as pd

from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.experiments.keyword import train_keyword
from attnlearn.runtime.device import resolve_device


def main(job):
    kw = dict(job.params.keyword)
    seeds = kw.pop("seeds")
    device = resolve_device(job.params.device)
    write_parquet(pd.concat([train_keyword(seed=s, device=device, **kw) for s in seeds], ignore_index=True),
                  job.output.table)


run(main, globals().get("snakemake"))
