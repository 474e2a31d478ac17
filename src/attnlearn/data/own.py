"""The user's own data as a dataset source (docs/own_data.md).

``own_classification``: a table (CSV, TSV, JSON Lines or Parquet) with a text and a label
column named in ``options``; the two label values given in ``options.labels`` become 0 and
1. ``own_translation``: a two-column table, or two parallel text files (one sentence a
line). Either one file (or pair) cut into train / valid / test by a seeded shuffle
(``options.valid``, ``options.test``: a fraction or a count), or the splits given as
separate files. Files come from a URL (downloaded and verified as the canonical ones) or a
local ``path``, with an optional sha256. A bad file raises DataError naming the file and
the line (the row, for Parquet).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd

from attnlearn.data.parsers import TEXT, DataError, cls_frame, nonempty, parallel, parser, split_off, text_lines

SPLITS = ("train", "valid", "test")
SPLIT_OPTIONS = ("format", "valid", "test")
FORMATS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl",
           ".parquet": "parquet"}


def table_format(path, options) -> str:
    fmt = options.get("format") or FORMATS.get(Path(path).suffix.lower())
    if fmt not in FORMATS.values():
        raise DataError(f"{path}: unknown table format; name it in options.format "
                        f"({', '.join(sorted(set(FORMATS.values())))})")
    return fmt


def records(path, columns: list[str], options) -> list[tuple[str, list]]:
    """(where, the values of ``columns``) of every record of a table file, where = 'FILE: line N'
    (Parquet: 'FILE: row N'). A missing column, field or value raises DataError naming it."""
    fmt = table_format(path, options)
    if fmt == "parquet":
        try:
            df = pd.read_parquet(path)
        except Exception as e:  # pyarrow raises several kinds for a file that is not Parquet
            raise DataError(f"{path}: not a readable Parquet file ({e})") from e
        _has_columns(path, columns, list(df.columns))
        out = [(f"{path}: row {i + 1}", list(values)) for i, values in enumerate(df[columns].itertuples(index=False))]
    elif fmt == "jsonl":
        out = []
        for i, line in enumerate(text_lines(Path(path).read_bytes(), str(path))):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as e:
                raise DataError(f"{path}: line {i + 1} is not JSON ({e})") from e
            if not isinstance(obj, dict):
                raise DataError(f"{path}: line {i + 1} is not a JSON object")
            _has_columns(f"{path}: line {i + 1}", columns, list(obj))
            out.append((f"{path}: line {i + 1}", [obj[c] for c in columns]))
    else:
        out = _delimited(path, columns, fmt)
    for where, values in out:
        for column, value in zip(columns, values):
            if value is None or (isinstance(value, float) and value != value) or str(value).strip() == "":
                raise DataError(f"{where}: empty {column!r}")
    if not out:
        raise DataError(f"{path}: no rows")
    return out


def _has_columns(where, columns, present):
    missing = [c for c in columns if c not in present]
    if missing:
        raise DataError(f"{where}: no column {', '.join(map(repr, missing))} "
                        f"(columns: {', '.join(map(str, present))}); name the columns in the source's options")


def _delimited(path, columns, fmt) -> list[tuple[str, list]]:
    text = "\n".join(text_lines(Path(path).read_bytes(), str(path)))
    quoting = csv.QUOTE_MINIMAL if fmt == "csv" else csv.QUOTE_NONE
    reader = csv.reader(text.splitlines(keepends=True), delimiter="," if fmt == "csv" else "\t", quoting=quoting)
    try:
        header = next(reader, None)
        if header is None:
            raise DataError(f"{path}: empty file")
        header[0] = header[0].lstrip("\ufeff")  # a byte-order mark some editors write
        _has_columns(f"{path}: line 1 (header)", columns, header)
        index = [header.index(c) for c in columns]
        out = []
        for row in reader:
            if len(row) != len(header):
                raise DataError(f"{path}: line {reader.line_num} has {len(row)} fields, expected {len(header)} "
                                "as the header")
            out.append((f"{path}: line {reader.line_num}", [row[i] for i in index]))
    except csv.Error as e:
        raise DataError(f"{path}: line {reader.line_num}: {e}") from e
    return out


def _splits(tables: dict, options, where) -> dict[str, pd.DataFrame]:
    """The given splits, or the one table ('data') cut by a seeded shuffle."""
    if "data" not in tables:
        return {s: tables[s].reset_index(drop=True) if s in tables else tables["train"].iloc[:0] for s in SPLITS}
    seed = options.get("seed", 0)
    rest, test = split_off(tables["data"], options.get("test", 0), seed)
    train, valid = split_off(rest, options.get("valid", 0.1), seed)
    for split, df in (("train", train), ("valid", valid)):
        nonempty(df, f"{where}: the seeded split leaves no {split} examples (options.valid, options.test)")
    return {"train": train, "valid": valid, "test": test}


def _labels(where: str, value, labels) -> int:
    names = [str(v) for v in labels] if labels is not None else ["0", "1"]
    if str(value) not in names:
        hint = "" if labels is not None else "; set options.labels to the two label values (first -> 0, second -> 1)"
        raise DataError(f"{where}: label {value!r} is not one of {names}{hint}")
    return names.index(str(value))


def option_errors(options: dict) -> list[str]:
    """What is wrong with the split and label options, found before any job runs (the config
    check calls this) as well as in prepare_data."""
    errors = []
    for key, least in (("valid", 1), ("test", 0)):
        v = options.get(key)
        fraction = isinstance(v, float) and 0 <= v < 1 and (v > 0 or least == 0)
        count = isinstance(v, int) and not isinstance(v, bool) and v >= least
        if v is not None and not (fraction or count):
            errors.append(f"options.{key}: a fraction in {'(' if least else '['}0, 1) or a count of "
                          f"{'at least 1' if least else '0 or more'} examples, got {v!r}")
    fractions = [options.get(k, 0.1 if k == "valid" else 0) for k in ("valid", "test")]
    if all(isinstance(f, float) for f in fractions) and sum(fractions) >= 1:
        errors.append(f"options.valid + options.test: {sum(fractions):g} of the examples leaves none to train on")
    labels = options.get("labels")
    if labels is not None and (not isinstance(labels, list) or len(labels) != 2 or str(labels[0]) == str(labels[1])):
        errors.append(f"options.labels: two different label values (first -> 0, second -> 1), got {labels!r}")
    return errors


def _check(options: dict) -> None:
    errors = option_errors(options)
    if errors:
        raise DataError("; ".join(errors))


@parser("own_classification", ("data", *SPLITS), (*SPLIT_OPTIONS, "text", "label", "labels", *TEXT))
def own_classification(files, options):
    _check(options)
    text, label, labels = options.get("text", "text"), options.get("label", "label"), options.get("labels")
    tables = {}
    for name, path in files.items():
        rows = records(path, [text, label], options)
        tables[name] = cls_frame([str(r[0]) for _, r in rows], [_labels(w, r[1], labels) for w, r in rows], options)
    out = _splits(tables, options, next(iter(files.values())))
    if out["train"]["label"].nunique() < 2:
        raise DataError(f"{files.get('train', files.get('data'))}: the training split has one label only")
    return out


@parser("own_translation", ("data", "src", "tgt", *SPLITS, *(f"{s}_{side}" for s in SPLITS for side in ("src", "tgt"))),
        (*SPLIT_OPTIONS, "src", "tgt"))
def own_translation(files, options):
    _check(options)
    tables = {}
    for split in ("data", *SPLITS):
        if split in files:  # a two-column table
            rows = records(files[split], [options.get("src", "src"), options.get("tgt", "tgt")], options)
            tables[split] = pd.DataFrame({"src": [str(r[0]).strip() for _, r in rows],
                                          "tgt": [str(r[1]).strip() for _, r in rows]})
        sides = ("src", "tgt") if split == "data" else (f"{split}_src", f"{split}_tgt")
        if sides[0] in files:  # parallel text files
            lines = [_sentences(files[side]) for side in sides]
            tables[split] = parallel(*lines, where=f"{files[sides[0]]} / {files[sides[1]]}")
    return _splits(tables, options, files.get("data") or files.get("src") or files.get("train") or
                   files.get("train_src"))


def _sentences(path) -> list[str]:
    lines = text_lines(Path(path).read_bytes(), str(path))
    empty = next((i for i, line in enumerate(lines) if not line.strip()), None)
    if empty is not None:
        raise DataError(f"{path}: line {empty + 1} is empty")
    return [line.strip() for line in lines]


own_classification.task, own_translation.task = "classification", "translation"
own_classification.check_options = own_translation.check_options = option_errors
own_classification.file_sets = [("data",), ("train", "valid"), ("train", "valid", "test")]
own_translation.file_sets = [("data",), ("src", "tgt"), ("train", "valid"), ("train", "valid", "test"),
                             ("train_src", "train_tgt", "valid_src", "valid_tgt"),
                             ("train_src", "train_tgt", "valid_src", "valid_tgt", "test_src", "test_tgt")]
