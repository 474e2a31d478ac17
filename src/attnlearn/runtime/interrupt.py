"""SIGINT to Snakemake alone stops its jobs as a terminal's Ctrl-C does.

A terminal's Ctrl-C reaches Snakemake and every job of its process group: each training saves
its state at the end of its step and exits, and a rerun resumes. A SIGINT sent to Snakemake's
pid alone (`kill -INT`, a scheduler, a supervisor) reached only Snakemake, which then waited
for every running job to end, trainings of hours included. Installed in the Snakemake process,
the handler here lets Snakemake handle the signal as before (KeyboardInterrupt: it stops
scheduling, waits for the jobs and marks their outputs incomplete) and, ``GRACE_S`` later,
sends SIGINT to the jobs' programs that are still running, which then stop at their next step.
A training that gets the signal twice within ``ECHO_S`` takes the two as one
(training.train._Preempted).
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time


def descendants(pid: int, leaves_only: bool = False) -> list[int]:
    """Every process below ``pid`` in the process tree (children first), from `ps`; with
    ``leaves_only``, those without children of their own (the jobs' programs, not the shells
    that wait for them)."""
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
    return [p for p in found if p not in children] if leaves_only else found


GRACE_S = 3.0  # a job still running this long after Snakemake's SIGINT did not get it (Ctrl-C's
# reaches the whole process group at once, and a training then stops within a step)


def _forward_later(root: int, signum: int, grace_s: float) -> None:
    """After ``grace_s``, SIGINT to the programs below ``root`` still running: they got none
    (the signal went to Snakemake alone). Waiting first keeps a terminal's Ctrl-C from reaching
    a job twice, once directly and once forwarded, while it stops. The programs only: a job's
    shell that got SIGINT could end before its program does, and Snakemake would take the job
    for ended while the program still writes its log."""
    time.sleep(grace_s)
    for pid in descendants(root, leaves_only=True):
        try:
            os.kill(pid, signum)
        except (ProcessLookupError, PermissionError):
            pass


def _forward(signum, frame):
    threading.Thread(target=_forward_later, args=(os.getpid(), signum, GRACE_S), daemon=True).start()
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
