"""A workflow run from a second checkout (a git worktree, another clone) runs that checkout's
code, not the one pip installed, or says how: a sweep started from a worktree ran its jobs on
the main checkout's src/ while another session was editing it (the installed package is an
editable install of the main checkout), and the rules, which track the worktree's files, never
knew."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import REPO

MARK = '''
import os as _os
if _os.environ.get("ATTNLEARN_IMPORT_MARK"):  # the test's marker: who imported this package
    with open(_os.environ["ATTNLEARN_IMPORT_MARK"], "a") as _f:
        _f.write(__file__ + "\\n")
'''


def _copy(dest):
    """The checkout's files as git sees them, but docs/ (the workflow, its rules and its src/)."""
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if name.startswith("docs/") or not (REPO / name).is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / name, dest / name)


def _run(copy, work, mark, *extra, env=None):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} if env is None else env
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(copy / "Snakefile"), "-f", "gpu_hours",
                           "--cores", "1", "-d", str(work), *extra], cwd=copy.parent, capture_output=True, text=True,
                          env={**env, "ATTNLEARN_IMPORT_MARK": str(mark)})


@pytest.mark.workflow
def test_the_snakefile_and_its_jobs_import_their_own_checkouts_code(tmp_path):
    copy, work, mark = tmp_path / "checkout", tmp_path / "work", tmp_path / "imported.txt"
    _copy(copy)
    init = copy / "src/attnlearn/__init__.py"
    init.write_text(init.read_text() + MARK)  # the copy's code now differs from the installed one's
    # the console (a logger plugin) imports the installed package before the Snakefile is read:
    # where its code differs, the run is refused with the command that runs this copy's code
    refused = _run(copy, work, mark)
    assert refused.returncode != 0 and not (work / "results/preflight/gpu_hours.md").exists()
    assert f"run this checkout's code with PYTHONPATH={copy / 'src'}" in refused.stdout + refused.stderr
    # the command it gives: the Snakefile's process and the job it starts import the copy's code
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = _run(copy, work, mark, env={**env, "PYTHONPATH": str(copy / "src")})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = mark.read_text().split()
    assert len(imported) == 2 and set(imported) == {str(init)}, imported
    assert (work / "results/preflight/gpu_hours.md").is_file()
