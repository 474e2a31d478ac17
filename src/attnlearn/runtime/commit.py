"""The commit a checkout's code is at, as the records name it (a row's run.json, the GPU rates
table, a time-left reference).

A copy of a working tree whose git metadata is absent or stale (a GPU node handed the tree) is
named by ATTNLEARN_COMMIT, which wins where set.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

UNKNOWN = "unknown (no git metadata; set ATTNLEARN_COMMIT)"


def checkout_commit(repo: str | Path, env=os.environ, dirty: bool = False) -> str:
    """``repo``'s short commit; with ``dirty``, '+uncommitted' where tracked files differ from it."""
    if env.get("ATTNLEARN_COMMIT"):
        return env["ATTNLEARN_COMMIT"]
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True)
    if out.returncode != 0:
        return UNKNOWN
    changed = dirty and subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                                       capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + ("+uncommitted" if changed else "")
