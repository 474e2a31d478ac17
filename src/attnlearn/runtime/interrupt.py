"""Signals to Snakemake: SIGINT to it alone stops its jobs as a terminal's Ctrl-C does, and
SIGTERM cannot hang it.

A terminal's Ctrl-C reaches Snakemake and every job of its process group: each training saves
its state at the end of its step and exits, and a rerun resumes. A SIGINT sent to Snakemake's
pid alone (`kill -INT`, a scheduler, a supervisor) reached only Snakemake, which then waited
for every running job to end, trainings of hours included. Installed in the Snakemake process,
the handler here lets Snakemake handle the signal as before (KeyboardInterrupt: it stops
scheduling, waits for the jobs and marks their outputs incomplete) and, ``GRACE_S`` later,
sends SIGINT to the jobs' programs that are still running, which then stop at their next step.
A training that gets the signal twice within ``ECHO_S`` takes the two as one
(``StopAtStepEnd``, which a training job runs under).

SIGTERM (a scheduler's time limit, scancel, a lease ending, parallel_parts' stop) could hang
Snakemake for good, a bug of Snakemake's that no public hook reaches (reported in the form a
maintainer can act on: docs/upstream/snakemake_sigterm.md). In Snakemake 9.27.1,
snakemake/scheduling/job_scheduler.py, ``JobScheduler.__init__`` installs
``self.exit_gracefully`` as the SIGTERM handler (line 171), and that handler does
``with self._lock: self._user_kill = "graceful"`` (lines 574-577), where ``self._lock`` is a
``threading.Lock()`` (line 120), which is not reentrant. Python runs a signal handler on the
main thread, between two bytecodes of whatever it is running; the main thread holds that same
lock in ``schedule()`` (lines 231-238: finishing jobs; 327-330) and in ``job_selector``'s
``run_selector`` (line 586), so a SIGTERM landing there waits for a lock that only the
interrupted frame below it can release: Snakemake hangs for good, and its working
directory stays locked. Measured on a workflow of 400 short jobs, a SIGTERM to the process group at
a random instant hung Snakemake in 8 of 15 tries (a CI run timed out on it). ``defer_sigterm``
replaces ``JobScheduler.exit_gracefully`` with one that hands the stock handler to a thread of
its own, which waits for the lock as any thread does. tests/test_snakemake_sigterm.py fails
when a Snakemake upgrade breaks the patch (the handler renamed, installed otherwise, its lock
no longer that) or fixes the bug (the stock handler no longer waits on the lock): then drop
it. Both handlers here only queue their work (queue.SimpleQueue.put may be called from a
signal handler; a lock taken there may not).
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
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


_WORK: queue.SimpleQueue | None = None  # what the handlers hand to the worker thread


def _worker() -> queue.SimpleQueue:
    """The queue of the thread that does the handlers' work (started once, by the main thread:
    starting a thread takes a lock, so a handler must not)."""
    global _WORK
    if _WORK is None:
        _WORK = queue.SimpleQueue()

        def work(q=_WORK):
            while True:
                fn, args = q.get()
                try:
                    fn(*args)
                except Exception as e:  # the next signal's work must still run
                    print(f"attnlearn: handling a signal failed: {e!r}", file=sys.stderr)

        threading.Thread(target=work, name="signal-work", daemon=True).start()
    return _WORK


def _forward(signum, frame):
    _worker().put((_forward_later, (os.getpid(), signum, GRACE_S)))
    signal.default_int_handler(signum, frame)  # Snakemake's handling: KeyboardInterrupt


def forward_sigint_to_jobs() -> bool:
    """Install the forwarding handler where it can be (the main thread, SIGINT not ignored);
    returns whether it was installed."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:  # a background job that must not take Ctrl-C
        return False
    _worker()
    signal.signal(signal.SIGINT, _forward)
    return True


def defer_sigterm() -> bool:
    """Make Snakemake's SIGTERM handler hand its work to the worker thread (see the module's
    docstring for the Snakemake bug this works around); returns whether it could (this Snakemake
    has the handler it patches). Call it from the Snakefile: the scheduler installs the handler
    when the workflow runs, later. The patched handler keeps the stock one as ``stock``."""
    try:
        from snakemake.scheduling.job_scheduler import JobScheduler
    except ImportError:
        return False
    stock = getattr(JobScheduler, "exit_gracefully", None)
    if stock is None or getattr(stock, "deferred", False):
        return stock is not None
    _worker()

    def exit_gracefully(self, *args):
        _worker().put((stock, (self, *args)))

    exit_gracefully.deferred, exit_gracefully.stock = True, stock
    JobScheduler.exit_gracefully = exit_gracefully
    return True


# -- in a training job: a signal stops it at the end of its step

class StopAtStepEnd:
    """Turns SIGTERM (preemption, scancel, a time limit), SIGINT (Ctrl-C) and SIGHUP (a closed
    terminal) into a clean stop at the end of the current step: the state is saved and the
    job exits with an error, so Snakemake keeps the run incomplete and a rerun resumes. Once
    training has ended, publishing the outputs (a second or so) goes on and the job succeeds.
    A second signal stops at once (from the last saved state). Nested uses share the
    outermost one's state."""

    SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
    ECHO_S = 10.0  # the same signal again within this time: one stop (a terminal's Ctrl-C, and
    # Snakemake forwarding it to a job still running: forward_sigint_to_jobs), not a second
    _outermost = None

    def __init__(self):
        self.signum, self._old, self._at = None, {}, 0.0

    @property
    def flag(self) -> bool:
        return self.signum is not None

    def __enter__(self):
        if StopAtStepEnd._outermost is not None:
            return StopAtStepEnd._outermost
        if threading.current_thread() is threading.main_thread():  # signal.signal works there only
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        StopAtStepEnd._outermost = self
        return self

    def _handle(self, signum, _frame):
        if self.signum is not None:
            if signum == self.signum and time.monotonic() - self._at < self.ECHO_S:
                return
            raise SystemExit(f"training stopped by a second {signal.Signals(signum).name}")
        self.signum, self._at = signum, time.monotonic()

    def __exit__(self, *exc):
        if StopAtStepEnd._outermost is self:
            StopAtStepEnd._outermost = None
            for s, handler in self._old.items():
                signal.signal(s, handler)
