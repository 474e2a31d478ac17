"""Rule prepare_data: write results/data/{dataset}/{train,valid,test}.parquet."""

from attnlearn.data.prepare import prepare
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    splits = prepare(job.params.source, dict(job.input))
    for name, path in job.output.items():
        write_parquet(splits[name], path)


run(main, globals().get("snakemake"))
