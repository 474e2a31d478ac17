"""Rule sweep_data: a sweep value's prepared, tokenized and counted data, which it shares with
its sweep's first value (the swept key leaves the data as they are), as hard links to that
value's files: one preparation, no copy on disk. A copy where the file system links none."""

import os

from attnlearn.runtime.io import link_or_copy
from attnlearn.runtime.jobs import run


def main(job):
    for name, target in job.output.items():
        source = job.input[name]
        os.makedirs(os.path.dirname(target), exist_ok=True)
        link_or_copy(source, target)
        print(f"{target} -> {source}")


run(main, globals().get("snakemake"))
