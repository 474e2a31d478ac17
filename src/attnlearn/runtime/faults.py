"""Test-only kill windows: with ATTNLEARN_FAULT=point (or point@step) in its environment a
job SIGKILLs itself at that point, so the tests can stop training and probing at any instant
(tests/test_faults.py, docs/faults.md)."""

from __future__ import annotations

import os
import signal

FAULT_ENV = "ATTNLEARN_FAULT"


def fault(point: str, step: int | None = None) -> None:
    """SIGKILL this process if the environment asks for a kill at ``point`` (or ``point@step``)."""
    want = os.environ.get(FAULT_ENV)
    if want and (want == point or (step is not None and want == f"{point}@{step}")):
        os.kill(os.getpid(), signal.SIGKILL)
