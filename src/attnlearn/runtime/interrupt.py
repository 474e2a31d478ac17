"""SIGINT to Snakemake alone stops its jobs as a terminal's Ctrl-C does.

A terminal's Ctrl-C reaches Snakemake and every job of its process group: each training saves
its state at the end of its step and exits, and a rerun resumes. A SIGINT sent to Snakemake's
pid alone (`kill -INT`, a scheduler, a supervisor) reached only Snakemake, which then waited
for every running job to end, trainings of hours included. Installed in the Snakemake process,
the handler here first sends SIGINT to Snakemake's descendant processes (its jobs), then lets
Snakemake handle it as before (KeyboardInterrupt: it stops scheduling, waits for the jobs,
now quick, and marks their outputs incomplete). A training that gets the signal twice (from
the terminal and forwarded) takes the two as one (training.train._Preempted).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` in the process tree (children first), from `ps`."""
    try:
        out = subprocess.run(["ps", "-A", "-o", "pid=,ppid="], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) == 2 and fields[0].isdigit() and fields[1].isdigit():
            children.setdefault(int(fields[1]), []).append(int(fields[0]))
    found, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop(0)
        found.append(p)
        todo += children.get(p, [])
    return found


def _forward(signum, frame):
    for pid in descendants(os.getpid()):
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass
    signal.default_int_handler(signum, frame)  # Snakemake's handling: KeyboardInterrupt


def forward_sigint_to_jobs() -> bool:
    """Install the forwarding handler where it can be (the main thread, SIGINT not ignored);
    returns whether it was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a background job that must not take Ctrl-C
        return False
    signal.signal(signal.SIGINT, _forward)
    return True
