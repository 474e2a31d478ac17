"""Snakemake's SIGTERM bug and the workaround for it (src/attnlearn/runtime/interrupt.py,
docs/upstream/snakemake_sigterm.md): Snakemake's handler takes its scheduler's lock, which the
main thread, where a signal handler runs, may hold at that instant, and then waits forever.
``defer_sigterm`` replaces the handler, a private attribute: these tests fail when a Snakemake
upgrade changes what it replaces, or fixes the bug (then the workaround goes)."""

import ast
import inspect
import signal
import textwrap
import threading

import pytest
from snakemake.scheduling.job_scheduler import JobScheduler  # imported here: it runs `which sacct`

from attnlearn.runtime.interrupt import defer_sigterm


def stock_handler():
    """Snakemake's own exit_gracefully, whether or not defer_sigterm has replaced it here."""
    handler = JobScheduler.exit_gracefully
    return getattr(handler, "stock", handler)


def scheduler() -> JobScheduler:
    """A scheduler with the state exit_gracefully reads, as JobScheduler.__init__ makes it."""
    made = JobScheduler.__new__(JobScheduler)
    made._lock, made._open_jobs, made._user_kill = threading.Lock(), threading.Semaphore(0), None
    return made


def statements(function) -> set[str]:
    """The statements and calls of ``function``'s source, as ast.unparse writes them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    return {ast.unparse(node) for node in ast.walk(tree) if isinstance(node, (ast.stmt, ast.Call))}


def test_snakemake_installs_exit_gracefully_for_sigterm_and_guards_it_with_a_plain_lock():
    """What defer_sigterm relies on, and the half of the bug that is Snakemake's construction:
    the scheduler installs its exit_gracefully method as the SIGTERM handler, and its lock is a
    threading.Lock, which the thread that holds it cannot take again. A Snakemake that installs
    another handler, or guards it with another lock, fails here: see whether the bug is still
    there (docs/upstream/snakemake_sigterm.md) and what defer_sigterm must replace."""
    made = statements(JobScheduler.__init__)
    assert "signal.signal(signal.SIGTERM, self.exit_gracefully)" in made
    assert "self._lock = threading.Lock()" in made
    assert list(inspect.signature(stock_handler()).parameters) == ["self", "args"]  # as the signal calls it


@pytest.mark.timeout(30)
def test_snakemakes_own_sigterm_handler_still_waits_for_the_schedulers_lock():
    """The other half: the stock handler takes the scheduler's lock. Run on another thread while
    this one holds the lock, it waits, and finishes once the lock is free; run by a signal on the
    thread that holds it, as Snakemake's main thread does, it would wait forever. Where this
    fails, the handler no longer waits on that lock: Snakemake fixed the bug, drop defer_sigterm."""
    stopped = scheduler()
    handler = threading.Thread(target=stock_handler(), args=(stopped, signal.SIGTERM, None), daemon=True)
    with stopped._lock:
        handler.start()
        handler.join(0.5)
        assert handler.is_alive() and stopped._user_kill is None, "the stock handler no longer waits on the lock"
    handler.join(10)
    assert not handler.is_alive() and stopped._user_kill == "graceful"


@pytest.mark.timeout(30)  # the stock handler never returns
def test_snakemakes_sigterm_handler_returns_while_the_scheduler_holds_its_lock(monkeypatch):
    """Snakemake's SIGTERM handler as the signal runs it: on the main thread, which may hold the
    scheduler's lock at that instant. After defer_sigterm it returns at once, and the scheduler
    is told to stop as soon as the lock is free (the stock handler waited on it for good)."""
    monkeypatch.setattr(JobScheduler, "exit_gracefully", JobScheduler.exit_gracefully)  # put back after
    assert defer_sigterm() and defer_sigterm()  # the Snakefile may be read twice: patched once
    stopped = scheduler()
    with stopped._lock:
        stopped.exit_gracefully(signal.SIGTERM, None)
        assert stopped._user_kill is None
    assert stopped._open_jobs.acquire(timeout=10) and stopped._user_kill == "graceful"
