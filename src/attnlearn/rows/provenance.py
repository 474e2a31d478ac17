"""Which code a kept row ran: a hash of the files it ran, checked against its recorded commit.

    python paper_rows/provenance.py reproduction/rows/*

paper_row.py records, per invocation, the commit it names (git's, or ATTNLEARN_COMMIT on a
copy without git metadata, such as a lent GPU machine's) and ``code_sha256``: a hash over the
code the jobs run (CODE, as the files stand in the directory that ran). This script recomputes
that hash from each recorded commit's own files (git archive) and says, per invocation, whether
the tree that ran was that commit exactly ("clean"), was not ("differs"), or cannot be checked
(an invocation recorded before the hash existed). So a part trained on a copied tree is held
to the same rule as one trained from a worktree: its numbers come from a commit, as it was.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

from attnlearn.rows import REPO
# what a row's jobs execute or read as settings: the package, the rules and their scripts, the
# row runner and the shipped configs and profiles
CODE = ("Snakefile", "pyproject.toml", "src", "rules", "workflow", "paper_rows", "config", "profiles")
SKIP = ("__pycache__", ".pyc", ".egg-info")


def _digest(files: dict[str, bytes]) -> str:
    h = hashlib.sha256()
    for path in sorted(files):
        h.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
    return h.hexdigest()


def _wanted(rel: str) -> bool:
    top = rel.split("/", 1)[0]
    return top in CODE and not any(s in rel for s in SKIP)


def tree_hash(root: Path) -> str:
    """The hash of CODE's files as they stand under ``root``."""
    root = Path(root)
    files = {}
    for name in CODE:
        path = root / name
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else []
        for p in found:
            rel = p.relative_to(root).as_posix()
            if _wanted(rel):
                files[rel] = p.read_bytes()
    return _digest(files)


def commit_hash(commit: str, repo: Path = REPO) -> str | None:
    """The same hash over ``commit``'s own files (None: git does not know the commit)."""
    present = [c for c in CODE if subprocess.run(["git", "cat-file", "-e", f"{commit}:{c}"], cwd=repo,
                                                 capture_output=True).returncode == 0]
    if not present:
        return None
    archive = subprocess.run(["git", "archive", "--format=tar", commit, *present], cwd=repo, capture_output=True)
    if archive.returncode != 0:
        return None
    files = {}
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        for member in tar:
            if member.isfile() and _wanted(member.name):
                files[member.name] = tar.extractfile(member).read()
    return _digest(files)


def check(invocation: dict, repo: Path = REPO) -> str:
    """'clean', 'differs from <commit>' or 'unchecked (...)' for one recorded invocation."""
    commit = str(invocation.get("commit", "")).split("+")[0]
    if "code_sha256" not in invocation:
        return "unchecked (recorded before code_sha256)"
    expected = commit_hash(commit, repo) if commit else None
    if expected is None:
        return f"unchecked (git knows no commit {commit!r})"
    return "clean" if expected == invocation["code_sha256"] else f"differs from {commit}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path, help="kept rows (reproduction/rows/<dataset>) or kept folders")
    args = ap.parse_args(argv)
    runs = sorted({p for row in args.rows for p in ([row / "run.json"] if (row / "run.json").is_file()
                                                     else row.glob("*/run.json"))})
    differs = 0
    for run in runs:
        for i, inv in enumerate(json.loads(run.read_text()).get("invocations", []), 1):
            verdict = check(inv)
            differs += verdict.startswith("differs")
            print(f"{run.parent}: invocation {i} ({inv.get('start')}, {inv.get('device', 'cpu')}, "
                  f"commit {inv.get('commit')}): {verdict}")
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
