"""GloVe vectors for the classification embeddings (docs/methods.md 1.2).

The reference code meant to initialise embeddings from GloVe 6B 300d but lost
the initialisation through a bug, so its numbers used random embeddings: the
switch ``model.glove`` is off by default. When on, the vocabulary also keeps
rarer training words that GloVe knows, and known words start from GloVe.
"""

from __future__ import annotations

import io
import zipfile

import numpy as np

from attnlearn.data.parsers import DataError


def _lines(zip_path, member: str):
    try:
        with zipfile.ZipFile(zip_path) as z, z.open(member) as raw:
            yield from io.TextIOWrapper(raw, encoding="utf-8")
    except KeyError as e:
        raise DataError(f"{zip_path}: no member {member!r}") from e
    except (zipfile.BadZipFile, EOFError, OSError) as e:
        raise DataError(f"{zip_path}: truncated or corrupt zip archive ({e})") from e


def glove_words(zip_path, member: str) -> list[str]:
    """Every word GloVe has a vector for, in file order."""
    return [line.split(" ", 1)[0] for line in _lines(zip_path, member)]


def glove_matrix(zip_path, member: str, vocab: list[str], dim: int) -> np.ndarray:
    """[len(vocab), dim] float32: GloVe rows for known words, NaN for the rest."""
    index = {w: i for i, w in enumerate(vocab)}
    out = np.full((len(vocab), dim), np.nan, dtype=np.float32)
    for n, line in enumerate(_lines(zip_path, member), 1):
        word, _, rest = line.rstrip("\n").partition(" ")
        row = index.get(word)
        if row is not None:
            values = np.array(rest.split(" "), dtype=np.float32)
            if values.shape != (dim,):
                raise DataError(f"{zip_path}:{member}: line {n} has {values.size} values, expected {dim}")
            out[row] = values
    return out
