"""Atomic file output: a job either leaves a complete file or none."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import pandas as pd


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, suffix: str = ""):
    """Yield a temporary path beside ``path``; move it into place on success.

    On any exception the temporary file is removed, so no partial output is left.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix or ".tmp")
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def write_parquet(df: pd.DataFrame, path) -> None:
    with atomic_path(path, ".parquet") as tmp:
        df.to_parquet(tmp, index=False)


def write_json(obj, path) -> None:
    with atomic_path(path, ".json") as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True))


def save_torch(obj, path) -> None:
    import torch

    with atomic_path(path, ".pt") as tmp:
        torch.save(obj, tmp)
