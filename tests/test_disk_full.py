"""A full disk is a fault like the others: a table, checkpoint or JSON write that hits ENOSPC
fails naming the file and the cause, and leaves nothing partial in place
(src/attnlearn/runtime/io.py)."""

import errno
import shutil
from collections import namedtuple

import pandas as pd
import pytest

from attnlearn.runtime import io
from attnlearn.runtime.io import DiskFullError, atomic_path, save_torch, write_json, write_parquet

Usage = namedtuple("Usage", "total used free")


def fills_up(write):
    """``write`` that puts some bytes in its file, then finds the disk full."""
    def failing(*args, **kwargs):
        target = args[1] if len(args) > 1 else kwargs.get("path")
        with open(target, "wb") as f:
            f.write(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device")
    return failing


def test_a_table_write_that_hits_enospc_names_the_file_and_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "results/tables/table2.parquet"
    monkeypatch.setattr(pd.DataFrame, "to_parquet", lambda self, path, **kw: fills_up(None)(self, path))
    with pytest.raises(DiskFullError) as e:
        write_parquet(pd.DataFrame({"a": [1]}), target)
    assert e.value.errno == errno.ENOSPC
    assert f"no space left on the device to write {target}" in str(e.value) and "free space and rerun" in str(e.value)
    assert list(target.parent.iterdir()) == []  # no partial file, no temporary one


def test_an_existing_output_stays_whole_when_its_rewrite_finds_the_disk_full(tmp_path, monkeypatch):
    target = tmp_path / "state.json"
    write_json({"step": 1}, target)
    real_open = open

    def full_open(file, mode="r", *a, **kw):
        f = real_open(file, mode, *a, **kw)
        if "w" in mode:
            f.write = lambda data: (_ for _ in ()).throw(OSError(errno.ENOSPC, "No space left on device"))
        return f

    monkeypatch.setattr("builtins.open", full_open)
    with pytest.raises(DiskFullError, match="state.json"):
        write_json({"step": 2}, target)
    monkeypatch.undo()
    assert target.read_text() == '{\n  "step": 1\n}' and len(list(tmp_path.iterdir())) == 1


def test_a_checkpoint_write_that_fails_on_a_full_disk_names_the_file(tmp_path, monkeypatch):
    """torch.save says "file write failed" without an errno: with the disk out of space beside
    the file, that is a full disk too."""
    torch = pytest.importorskip("torch")

    def failing_save(obj, f, *a, **kw):
        f.write(b"partial")
        raise RuntimeError("[enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file "
                           "data/0: file write failed")

    monkeypatch.setattr(torch, "save", failing_save)
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10 << 30, 10 << 30, 4096))
    target = tmp_path / "checkpoints/step00000100.pt"
    with pytest.raises(DiskFullError, match=r"to write .*step00000100\.pt \(4096 bytes free there\)"):
        save_torch({"w": 1}, target)
    assert list(target.parent.iterdir()) == []
    # with space left, the same failure is not taken for a full disk
    monkeypatch.setattr(shutil, "disk_usage", lambda p: Usage(10 << 30, 1 << 30, 9 << 30))
    with pytest.raises(RuntimeError, match="file write failed"):
        save_torch({"w": 1}, target)


def test_other_failures_pass_as_they_are(tmp_path):
    with pytest.raises(ValueError, match="not this"):
        with atomic_path(tmp_path / "x.txt"):
            raise ValueError("not this")
    assert io.FULL_BYTES == 1 << 20
