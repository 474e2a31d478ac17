"""Rule download: fetch one file, verify its checksum, move it into place atomically."""

from attnlearn.data.download import fetch
from attnlearn.runtime.jobs import run


def main(job):
    fetch(job.params.spec, job.output[0], allow_unverified=job.params.allow_unverified)


run(main, globals().get("snakemake"))
