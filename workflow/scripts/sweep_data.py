"""Rule sweep_data: a sweep value's prepared, tokenized and counted data, which it shares with
its sweep's first value (the swept key leaves the data as they are), as symbolic links to that
value's files: one preparation, no copy on disk (a copy where the file system links none).
Not hard links: Snakemake touches each output of a job it finishes, and through a hard link
that would touch the first value's file, making every run of that value look updated."""

import os

from attnlearn.runtime.io import share_file
from attnlearn.runtime.jobs import run


def main(job):
    for name, target in job.output.items():
        source = job.input[name]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        share_file(source, target)
        print(f"{target} -> {source}")


run(main, globals().get("snakemake"))
