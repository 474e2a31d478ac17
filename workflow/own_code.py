"""The workflow runs the code beside its Snakefile, not the one pip installed.

Run from a worktree or a second clone, the Snakefile's process and every job would import the
installed (editable) checkout's src/, whatever it holds at the time, while the rules track this
tree's files: a sweep started from a worktree once ran its jobs on the main checkout's src/ while
another session was editing it. Snakemake imports the package (its logger plugin) before the
Snakefile is read, so where that copy's code differs from this tree's the run is refused with
the command that runs this tree's; where it is the same, the jobs still get this tree's src/
first on PYTHONPATH (ahead of a job script's own path entries), so that edits made to the other
checkout during the run reach none of them. Plain Python, beside the Snakefile (which imports it
from the workflow/ package of its own folder), not in attnlearn: the package it checks cannot be
trusted to check itself.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def same_code(a: Path, b: Path) -> bool:
    """Whether packages ``a`` and ``b`` hold the same .py files, byte for byte."""
    files = [sorted(p.relative_to(root) for p in root.rglob("*.py")) for root in (a, b)]
    return files[0] == files[1] and all((a / f).read_bytes() == (b / f).read_bytes() for f in files[0])


def use_own_code(src: str, snakefile: str) -> None:
    ours, imported = Path(src) / "attnlearn", sys.modules.get("attnlearn")
    if not ours.is_dir():  # the workflow's files without a src/ of their own: the installed package runs
        return
    if imported is not None:
        theirs = Path(imported.__file__).resolve().parent
        if not (theirs.samefile(ours) or same_code(theirs, ours)):
            raise ValueError(f"{snakefile}: Python imported attnlearn from {theirs}, another checkout whose code "
                             f"differs from this workflow's; run this checkout's code with PYTHONPATH={src} before "
                             "the snakemake command")
    paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if paths[0] != src:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [src, *paths]))
