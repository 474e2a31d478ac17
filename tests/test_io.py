"""Atomic outputs: normal permissions, no temporary file left behind by a killed writer."""

import errno
import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from attnlearn.runtime.io import atomic_path, save_torch, share_file, stale_temps, write_json, write_parquet


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


def test_a_shared_file_is_a_relative_link_whose_touch_leaves_its_source(tmp_path):
    """A sweep value's data and logs point at the first value's files: Snakemake touches each
    output, and through a hard link that touched the source, so every run downstream of it
    looked updated and reran. The link survives the folder's move (relative) and replaces an
    earlier one whole."""
    source = tmp_path / "results/tokenized/v_0/train.parquet"
    source.parent.mkdir(parents=True)
    source.write_text("data")
    os.utime(source, (1_000_000, 1_000_000))
    target = tmp_path / "results/tokenized/v_1/train.parquet"
    target.parent.mkdir(parents=True)
    target.write_text("an earlier, other file")
    share_file(source, target)
    assert target.is_symlink() and os.readlink(target) == "../v_0/train.parquet"
    assert target.read_text() == "data" and sorted(os.listdir(target.parent)) == ["train.parquet"]
    os.utime(target, follow_symlinks=False)  # what Snakemake does to a finished job's output
    assert source.stat().st_mtime == 1_000_000
    os.rename(tmp_path / "results", tmp_path / "moved")
    assert (tmp_path / "moved/tokenized/v_1/train.parquet").read_text() == "data"


def test_a_shared_file_is_a_copy_where_the_file_system_has_no_links(tmp_path, monkeypatch):
    def refuse(*args):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", refuse)
    (tmp_path / "a").write_text("data")
    share_file(tmp_path / "a", tmp_path / "b")
    assert not (tmp_path / "b").is_symlink() and (tmp_path / "b").read_text() == "data"
