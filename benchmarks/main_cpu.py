"""Snakemake's own CPU seconds in a run: its main process (DAG, scheduling, the console, the
benchmark timers) apart from the jobs it started.

    python benchmarks/main_cpu.py --cores 2 -d /tmp/dr       (any snakemake arguments)

runs Snakemake in this process and, at its exit, prints one line: the main process's user and
system seconds, its children's (every job, and anything a job started), and the wall time. On 2
cores, the main process's CPU seconds are taken from the jobs: about half of them is wall time
a run could save (docs/benchmarks.md, "What Snakemake itself costs").
"""

from __future__ import annotations

import atexit
import resource
import sys
import time

T0 = time.monotonic()


def line() -> str:
    own, jobs = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return (f"main process: user {own.ru_utime:.1f} s, system {own.ru_stime:.1f} s; "
            f"children: user {jobs.ru_utime:.1f} s, system {jobs.ru_stime:.1f} s; wall {time.monotonic() - T0:.1f} s")


def main() -> None:
    atexit.register(lambda: print(line(), file=sys.stderr, flush=True))
    from snakemake.cli import main as snakemake

    sys.argv = ["snakemake", *sys.argv[1:]]
    snakemake()


if __name__ == "__main__":
    main()
