"""paper_rows/provenance.py: a row's recorded code hash is checked against its commit's files, so
a part run on a copied tree (a lent GPU) is held to the same rule as one run from a worktree."""

import subprocess

import pytest

from conftest import rows_module


def _repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src/pkg").mkdir(parents=True)
    (repo / "src/pkg/a.py").write_text("x = 1\n")
    (repo / "Snakefile").write_text("rule all:\n    input: []\n")
    (repo / "notes.txt").write_text("not code\n")
    git = lambda *a: subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", *a], cwd=repo,  # noqa: E731
                                    check=True, capture_output=True, text=True).stdout.strip()
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "code")
    return repo, git("rev-parse", "--short", "HEAD")


@pytest.mark.process
def test_a_copied_tree_is_clean_only_while_its_code_is_the_commits(tmp_path):
    provenance = rows_module("provenance")
    repo, commit = _repo(tmp_path)
    copy = tmp_path / "copy"  # what a lent machine gets: the files, no git metadata
    subprocess.run(["cp", "-r", str(repo), str(copy)], check=True)
    subprocess.run(["rm", "-rf", str(copy / ".git")], check=True)
    (copy / "src/pkg/__pycache__").mkdir()
    (copy / "src/pkg/__pycache__/a.cpython-311.pyc").write_bytes(b"\0")  # made by running: not code
    (copy / "notes.txt").write_text("edited notes\n")  # outside the code: no change
    ran = {"commit": commit, "code_sha256": provenance.tree_hash(copy)}
    assert provenance.check(ran, repo) == "clean"
    (copy / "src/pkg/a.py").write_text("x = 2\n")  # an edit the commit does not hold
    assert provenance.check({**ran, "code_sha256": provenance.tree_hash(copy)}, repo) == f"differs from {commit}"
    (copy / "src/pkg/a.py").write_text("x = 1\n")
    (copy / "src/pkg/b.py").write_text("y = 1\n")  # an untracked module runs too
    assert provenance.check({**ran, "code_sha256": provenance.tree_hash(copy)}, repo).startswith("differs")
    assert provenance.check({"commit": commit}, repo).startswith("unchecked (recorded before")
    assert provenance.check({**ran, "commit": "0" * 7}, repo).startswith("unchecked (git knows no commit")
