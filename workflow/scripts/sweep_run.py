"""Rule sweep_run: a run of a sweep value whose key changes the standard runs only (init), which
is the same run as its sweep's first value's: that value's checkpoints as hard links (a copy
where the file system links none), the folder assembled beside its place and renamed into it, so
that it appears whole or not at all; its training log as a symbolic link (runtime.io.share_file).

Snakemake touches the outputs of each job it finishes: a directory's flag file,
.snakemake_timestamp, and each file output. Neither may be the first value's own inode, or
every link made would make that value's run, and all that was read from it, look updated
(reruns of finished work at each later invocation): the flag is left for Snakemake to make
anew, and the log is a symbolic link, whose mtime is its own."""

import os
import shutil
from pathlib import Path

from attnlearn.runtime.io import link_or_copy, share_file
from attnlearn.runtime.jobs import run

FLAG = ".snakemake_timestamp"  # Snakemake's mtime of a directory output


def main(job):
    source, target = Path(job.input.checkpoints), Path(job.output.checkpoints)
    stage = target.with_name(f".{target.name}.staging")
    if stage.exists():
        shutil.rmtree(stage)
    stage.mkdir(parents=True)
    for f in sorted(source.iterdir()):
        if f.name != FLAG:
            link_or_copy(f, stage / f.name)
    os.replace(stage, target)
    share_file(job.input.log, job.output.log)
    print(f"{target} -> {source}")


run(main, globals().get("snakemake"))
