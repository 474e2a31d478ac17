"""Atomic file output: a job either leaves a complete file or none.

A file is written under a hidden temporary name beside its target
(``.{name}.tmp-XXXXXXXX{suffix}``) and renamed into place when complete. The
temporary file is created with the permissions any new file gets (0666 less the
umask), so outputs on a shared file system are as readable as the user's other
files. A process killed mid-write (SIGKILL) leaves its temporary file behind:
the next write of the same target removes it (one job writes a given output at a
time: Snakemake sees to that for outputs, the run lock for a training's work
folder). A write that finds the disk full (ENOSPC, or a writer's "write failed" with
the disk out of space) raises DiskFullError naming the file, with nothing partial left.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import re
import secrets
import shutil
from pathlib import Path

import pandas as pd

from attnlearn.runtime.faults import disk_full

TEMP_MARK = ".tmp-"


def temp_name(path: Path, suffix: str = "") -> Path:
    return path.with_name(f".{path.name}{TEMP_MARK}{secrets.token_hex(4)}{suffix or '.tmp'}")


def stale_temps(path: str | os.PathLike) -> list[Path]:
    """Temporary files that writes of ``path`` left behind: this module's
    (``.{name}.tmp-XXXXXXXX{suffix}``) and those of its earlier versions, which used
    mkstemp (``.{name}.XXXXXXXX{suffix}``)."""
    path = Path(path)
    if not path.parent.is_dir():
        return []
    name = re.escape(path.name)
    pattern = re.compile(rf"\.{name}(?:{re.escape(TEMP_MARK)}[0-9a-f]{{8}}|\.[a-z0-9_]{{8}})(?:\.\w+)?")
    return sorted(p for p in path.parent.iterdir() if pattern.fullmatch(p.name) and p.is_file())


def remove_stale_temps(path: str | os.PathLike) -> list[Path]:
    removed = stale_temps(path)
    for p in removed:
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    return removed


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ""):
    """Yield a temporary path beside ``path``; move it into place on success.

    On any exception the temporary file is removed, so no partial output is left;
    leftovers of a killed earlier write of the same ``path`` are removed first.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temps(path)
    while True:
        tmp = temp_name(path, suffix)
        try:  # mode 0666 less the umask, as open() would give (mkstemp gives 0600)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:
            continue
    try:
        yield tmp
        # test-only (ATTNLEARN_FAULT=full:PATTERN): the disk found full as the writer's last bytes
        # went out, its temporary file holding the rest; below, a real ENOSPC takes the same path
        disk_full(path, tmp)
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        if isinstance(e, Exception) and _disk_full(e, path):
            raise DiskFullError(errno.ENOSPC, f"no space left on the device to write {path} ({_free(path)} free "
                                f"there); nothing partial was left in its place: free space and rerun") from e
        raise


class DiskFullError(OSError):
    """A write that found the disk full, naming the file it was writing."""


def _free(path: Path) -> str:
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return "unknown"
    return f"{free / 2**20:.1f} MiB" if free >= 2**20 else f"{free} bytes"


# below this much free space a failed write is taken for a full disk (a writer such as torch.save
# reports it as "file write failed", without the errno)
FULL_BYTES = 1 << 20


def _disk_full(e: Exception, path: Path) -> bool:
    """Whether ``e`` came from a full disk: ENOSPC or EDQUOT anywhere in its chain, or a write
    that failed with less than FULL_BYTES free beside ``path``."""
    seen = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        seen = seen.__cause__ or seen.__context__
    if isinstance(e, (OSError, RuntimeError)) and not isinstance(e, DiskFullError):
        with contextlib.suppress(OSError):
            return shutil.disk_usage(path.parent).free < FULL_BYTES
    return False


def write_parquet(df: pd.DataFrame, path) -> None:
    with atomic_path(path, ".parquet") as tmp:
        df.to_parquet(tmp, index=False)


def read_parquets(paths) -> pd.DataFrame:
    """The tables at ``paths`` as one frame (the per-dataset outputs that a table job gathers)."""
    return pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)


def write_json(obj, path, durable: bool = False) -> None:
    """``durable``: on disk (fsync) before it replaces ``path``, so a node crash cannot
    leave an empty file in its place."""
    with atomic_path(path, ".json") as tmp:
        with open(tmp, "w") as f:
            f.write(json.dumps(obj, indent=2, sort_keys=True))
            if durable:
                f.flush()
                os.fsync(f.fileno())


class _HashingWriter:
    """A file object that hashes what passes through it."""

    def __init__(self, f):
        self.f, self.sha256 = f, hashlib.sha256()

    def write(self, data) -> int:
        self.sha256.update(data)
        return self.f.write(data)

    def flush(self):
        self.f.flush()


def save_torch(obj, path, durable: bool = True) -> str:
    """torch.save ``obj`` to ``path`` atomically; returns the file's sha256.

    torch.save to a file name stores that name inside the zip archive (here the
    random temporary one); through a file object the archive is always named
    ``archive``, so equal objects give byte-identical files. ``durable``: fsync before
    the rename (a node crash cannot leave an empty file in place of a checkpoint).
    """
    import torch

    with atomic_path(path, ".pt") as tmp:
        with open(tmp, "wb") as f:
            writer = _HashingWriter(f)
            torch.save(obj, writer)
            if durable:
                f.flush()
                os.fsync(f.fileno())
    return writer.sha256.hexdigest()


def file_sha256(path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(chunk), b""):
            h.update(block)
    return h.hexdigest()


def link_or_copy(src, dst) -> None:
    """Hard link (no space, no copy time); a copy where the file system has none."""
    try:
        os.link(src, dst)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        shutil.copyfile(src, dst)


def share_file(src, dst) -> None:
    """``dst`` as a relative symbolic link to ``src`` (no space, no copy time; a copy where the
    file system has none), made beside it and renamed into place. Not a hard link: Snakemake
    touches each output a job made (its mtime set to now), and a hard link's mtime is its
    source's, so linking a file another rule made would make that file, and every job
    downstream of it, look updated; a symbolic link's own mtime is its own."""
    src, dst = Path(src), Path(dst)
    tmp = dst.with_name(f".{dst.name}.{os.getpid()}.link")
    tmp.unlink(missing_ok=True)
    try:
        os.symlink(os.path.relpath(src.resolve(), dst.parent.resolve()), tmp)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.ENOTSUP):
            raise
        shutil.copyfile(src, tmp)
    os.replace(tmp, dst)
