"""Rule derivative: the proxy's first step at initialisation against paper eq. 15 (4.1, A.2)."""

from attnlearn.experiments.derivative import sweep
from attnlearn.runtime.device import resolve_device
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    write_parquet(sweep(dict(job.params.derivative), resolve_device(job.params.device)), job.output.table)


run(main, globals().get("snakemake"))
