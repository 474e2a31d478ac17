"""Rule sweep_run: a run of a sweep value whose key changes the standard runs only (init), which
is the same run as its sweep's first value's: that value's checkpoint folder and training log as
hard links (a copy where the file system links none), the folder assembled beside its place and
renamed into it, so that it appears whole or not at all."""

import os
import shutil
from pathlib import Path

from attnlearn.runtime.io import link_or_copy
from attnlearn.runtime.jobs import run


def main(job):
    source, target = Path(job.input.checkpoints), Path(job.output.checkpoints)
    stage = target.with_name(f".{target.name}.staging")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for f in sorted(source.iterdir()):
        link_or_copy(f, stage / f.name)
    os.replace(stage, target)
    link_or_copy(job.input.log, job.output.log)
    print(f"{target} -> {source}")


run(main, globals().get("snakemake"))
