"""Run the reproduction's commands on this checkout's code.

``python paper_rows/<name>.py`` runs attnlearn.rows.<name>. A row of hours is run from a git
worktree at a fixed commit, while pip's editable install may point at another checkout whose
code moves on: the commands would then run (and record the commit of) code that is not the
worktree's. So where ``attnlearn`` would be imported from elsewhere, the command is run again
with this checkout's src/ first on PYTHONPATH (no edit of sys.path: the same interpreter and
arguments, one more environment variable).
"""

import importlib.util
import os
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def main(module: str) -> int:
    """Run ``attnlearn.rows.<module>``'s main on this checkout's code (the entry points' body)."""
    found = importlib.util.find_spec("attnlearn")
    origin = Path(found.origin).resolve().parents[1] if found and found.origin else None
    if origin != SRC:
        path = os.pathsep.join([str(SRC), *filter(None, [os.environ.get("PYTHONPATH")])])
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONPATH": path})
    from importlib import import_module

    return import_module(f"attnlearn.rows.{module}").main()
