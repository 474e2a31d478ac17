"""Do two finished runs hold the same tables and figures? (not a test)

    python benchmarks/same_tables.py /tmp/A /tmp/B

Compares every summary table and figure (Parquet and PNG under results/tables, results/figures
and results/agreement) of two run folders byte for byte under one config stamp
(reporting/made_for.py: each names its config's file). Prints the files that differ; exit
status 1 when any does. Two runs of one config at two commits: the same bytes say the change
between them moved no number (the trainings are seeded to the byte).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from attnlearn.reporting.made_for import write_stamp

FOLDERS = ("results/tables", "results/figures", "results/agreement")


def content(path: Path, scratch: Path) -> bytes:
    """The file's bytes under one config stamp."""
    copy = scratch / f"stamped{path.suffix}"
    shutil.copy(path, copy)
    write_stamp(copy, {"config": "same", "sha256": "-"})
    return copy.read_bytes()


def outputs(run: Path) -> list[Path]:
    return sorted(p.relative_to(run) for d in FOLDERS for p in (run / d).rglob("*") if p.suffix in (".parquet", ".png"))


def differing(a: Path, b: Path) -> tuple[list[Path], list[Path]]:
    """(the files compared, those whose bytes differ or that one run lacks)."""
    files = sorted(set(outputs(a)) | set(outputs(b)))
    with tempfile.TemporaryDirectory() as scratch:
        differ = [f for f in files if not ((a / f).is_file() and (b / f).is_file())
                  or content(a / f, Path(scratch)) != content(b / f, Path(scratch))]
    return files, differ


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("a", type=Path)
    ap.add_argument("b", type=Path)
    args = ap.parse_args(argv)
    files, differ = differing(args.a, args.b)
    for f in differ:
        print(f"{f}: differs")
    print(f"{len(files)} tables and figures compared, {len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
