"""Test-only faults, asked for with the ATTNLEARN_FAULT environment variable (docs/faults.md):

- ``point`` or ``point@step``: the job SIGKILLs itself at that point, so the tests can stop
  training and probing at any instant (tests/test_faults.py);
- ``full:PATTERN``: a write of a file whose absolute path matches PATTERN (fnmatch; ``*``
  crosses ``/``) finds the disk full, so the tests can fill the disk under any one output of a
  real Snakemake job (tests/test_disk_full_workflow.py).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import signal

FAULT_ENV = "ATTNLEARN_FAULT"
DISK_FULL = "full:"


def fault(point: str, step: int | None = None) -> None:
    """SIGKILL this process if the environment asks for a kill at ``point`` (or ``point@step``)."""
    want = os.environ.get(FAULT_ENV)
    if want and (want == point or (step is not None and want == f"{point}@{step}")):
        os.kill(os.getpid(), signal.SIGKILL)


def disk_full(path: str | os.PathLike, written: str | os.PathLike) -> None:
    """Raise OSError(ENOSPC), as the file system would, if the environment asks for a full disk
    under ``path``; ``written``: the file the write was filling (its temporary name)."""
    want = os.environ.get(FAULT_ENV, "")
    if want.startswith(DISK_FULL) and fnmatch.fnmatchcase(os.path.abspath(path), want[len(DISK_FULL):]):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(written))
