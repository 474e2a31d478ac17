"""Words a job leaves for the end of the run. A finished job's log is read by no one unless
something failed, and a warning there (a model that did not beat chance) went unseen: a line
the job writes after ``MARK`` is printed again by the console (runtime/console.py) among the
run's last lines, where a reader looks when the run is done."""

from __future__ import annotations

import sys

MARK = "FOR THE RUN'S END: "


def say_at_end(line: str, stream=None) -> None:
    """Write ``line`` to the job's log (its stderr), marked for the console to say at the end."""
    print(MARK + line, file=stream or sys.stderr, flush=True)


def lines_at_end(log_text: str) -> list[str]:
    """The marked lines of a job log's text, without the mark."""
    return [line[line.index(MARK) + len(MARK):].rstrip() for line in log_text.splitlines() if MARK in line]
