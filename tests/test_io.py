"""Atomic outputs: normal permissions, no temporary file left behind by a killed writer."""

import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from attnlearn.runtime.io import atomic_path, save_torch, stale_temps, write_json, write_parquet


@pytest.mark.parametrize("umask", [0o022, 0o002, 0o077])
def test_outputs_get_the_permissions_of_any_new_file(umask, tmp_path):
    """mkstemp made every output 0600, unreadable to the group on a shared cluster file system."""
    old = os.umask(umask)
    try:
        write_parquet(pd.DataFrame({"a": [1]}), tmp_path / "t.parquet")
        write_json({"a": 1}, tmp_path / "t.json")
        save_torch({"a": 1}, tmp_path / "t.pt")
        with atomic_path(tmp_path / "t.txt") as tmp:
            tmp.write_text("x")
    finally:
        os.umask(old)
    for name in ("t.parquet", "t.json", "t.pt", "t.txt"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o666 & ~umask, name


@pytest.mark.process
def test_a_killed_writers_leftover_is_removed_by_the_next_write(tmp_path):
    """SIGKILL mid-write leaves the hidden temporary file (no exception handler runs); the next
    write of the same file removes it, and older versions' mkstemp leftovers too."""
    target = tmp_path / "out.parquet"
    code = textwrap.dedent(f"""
        import os, signal
        from attnlearn.runtime.io import atomic_path
        with atomic_path({str(target)!r}, ".parquet") as tmp:
            tmp.write_text("half")
            os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert subprocess.run([sys.executable, "-c", code]).returncode == -signal.SIGKILL
    (tmp_path / ".out.parquet.k2j_9xq0.parquet").write_text("an older version's leftover")
    (tmp_path / ".other.parquet.tmp-0123abcd.parquet").write_text("another file's: kept")
    assert len(stale_temps(target)) == 2 and not target.exists()
    write_parquet(pd.DataFrame({"a": [1]}), target)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".other.parquet.tmp-0123abcd.parquet", "out.parquet"]


def test_a_failed_write_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), atomic_path(tmp_path / "x.json") as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
