"""Rule copying: one copy distribution, every seed -> per-10-step curves (Parquet)."""

import logging

from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.experiments.copying import copying
from attnlearn.runtime.device import resolve_device


def main(job):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    p = job.params
    table = copying(job.wildcards.task, p.spec, p.seeds, p.model, p.train, p.threshold, resolve_device(p.device))
    write_parquet(table, job.output.curves)


run(main, globals().get("snakemake"))
