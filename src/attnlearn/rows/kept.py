"""What the kept rows hold, found and pooled: a row's table folders (its parts' and blocks'), their
appendix A.1, TanhMax and readings tables, how many examples their probes read, and one
replicate table from several folders that share no run."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd

from attnlearn.agreement.paper import PAPER_EXAMPLES


def kept(folder: Path, sub: str, name: str) -> list[Path]:
    """A kept row's ``sub`` folder holding ``name``, or its parts' (part*/``sub``)."""
    if (folder / sub / name).is_file():
        return [folder / sub]
    return sorted(p.parent for p in folder.glob(f"part*/{sub}/{name}"))


def table_folders(folder: Path) -> list[Path]:
    """The replicate-table folders of one argument: itself, a kept row's tables, or its parts'."""
    if (folder / "table2_replicates.parquet").is_file():
        return [folder]
    return kept(folder, "tables", "table2_replicates.parquet") or [folder]


def row_of(tables: Path) -> str | None:
    """The row a kept table folder belongs to: run.json's ``row`` (paper_row.py --row, e.g.
    multi30k_epochs20 beside multi30k), else the kept row's folder (a part's or block's parent,
    or the row kept whole: a part kept before run.json named its row); None for a run's own
    results/tables, which no run.json sits beside."""
    run = tables.parent / "run.json"
    if not run.is_file():
        return None
    info = json.loads(run.read_text())
    return info.get("row") or (tables.parent.parent.name if re.fullmatch(r"parts?[\d-]+", tables.parent.name)
                               else tables.parent.name)


def replicate_tables(folders: list[Path], by_row: bool = False) -> list[pd.DataFrame]:
    """Each folder's table2_replicates. Two rows of one dataset (the same seeds at another
    budget) share their runs' names and are never one row: pooled apart (``by_row``: each
    named by its row, for a contrast), or refused naming both."""
    frames, labels, rows = [], [], {}
    for folder in folders:
        frame = pd.read_parquet(folder / "table2_replicates.parquet")
        label = row_of(folder) or str(frame["dataset"].iloc[0])
        for dataset in frame["dataset"].unique():
            rows.setdefault(dataset, {}).setdefault(label, folder)
        frames.append(frame)
        labels.append(label)
    mixed = {d: r for d, r in rows.items() if len(r) > 1}
    if by_row:  # only a dataset held by two rows is named by its rows
        return [f.assign(dataset=label) if f["dataset"].isin(mixed).all() else f for f, label in zip(frames, labels)]
    if mixed:
        d, r = next(iter(mixed.items()))
        raise ValueError(f"{' and '.join(str(r[k]) for k in sorted(r))} are two rows of {d} ({', '.join(sorted(r))}): "
                         "print each with a command of its own, or set them against each other with --contrast")
    return frames


def optimal_folders(folder: Path) -> list[Path]:
    """The kept analyses folders (the row's or its parts') holding appendix A.1's comparisons."""
    return kept(folder, "analyses", "optimal_attention.parquet")


def read_kept(folders: list[Path], name: str, what: str) -> pd.DataFrame:
    """The table ``name`` of every kept folder, concatenated; a run in more than one folder (a
    part kept twice, or parts that share a run) is refused, naming ``what`` run it is."""
    rows = pd.concat([pd.read_parquet(f / name).assign(folder=i) for i, f in enumerate(folders)], ignore_index=True)
    if (rows.groupby(["dataset", "run"])["folder"].nunique() > 1).any():
        raise ValueError(f"the same {what} run is in more than one of {', '.join(map(str, folders))}")
    return rows.drop(columns="folder")


def tanhmax_folders(folder: Path) -> list[Path]:
    """The kept analyses folders (the row's or its parts') holding a TanhMax comparison."""
    return kept(folder, "analyses", "tanhmax.parquet")


def readings_folders(folder: Path) -> list[Path]:
    """Every kept folder under a row holding per-replicate readings (its parts', its blocks',
    a factorial grid's: the grid's diagonal trains the parts' own A and U runs)."""
    for tables in (folder, folder / "tables"):
        if (tables / "replicate_readings.parquet").is_file():
            return [tables]
    return sorted(p.parent for p in folder.glob("*/tables/replicate_readings.parquet"))


# Training texts in our copy where a row's training split holds fewer than probe.max_examples
# (../shared/data/README.md: 20 Newsgroups' baseball and hockey, 597 + 600): the training-split
# probes read all of them
TRAIN_TEXTS = {"newsgroups": 1197, "newsgroups_no_headers": 1197}


def blind_performance(folders: list[Path]) -> dict[str, float]:
    """Each dataset's input-blind performance on its probed examples (learning.parquet): the
    contextualized claim's bar."""
    blind = {}
    for folder in folders:
        if (folder / "learning.parquet").is_file():
            learning = pd.read_parquet(folder / "learning.parquet")
            blind.update(learning.groupby("dataset")["trivial_perf"].first().to_dict())
    return blind


def probe_cap(folder: Path) -> tuple[str | None, int | None]:
    """(dataset, probe.max_examples) of the kept row's run.json above ``folder``; (None, None)."""
    run = folder.parent / "run.json"
    if not run.is_file():
        return None, None
    info = json.loads(run.read_text())
    cap = ((info.get("config") or {}).get("probe") or {}).get("max_examples")
    return info["dataset"], int(cap) if cap else None


def probed_examples(folders: list[Path], split: str = "valid") -> dict[str, int]:
    """How many examples each dataset's probes read, the count the examples' error is read over:
    on validation, a classification row's probe rows (agreement.parquet's n_rows, one per text),
    a translation row's sentence pairs (its probe.max_examples, at most the paper's split); on the
    training split, probe.max_examples, at most the training texts we hold (TRAIN_TEXTS). A
    dataset whose count cannot be read is left out (its intervals then give no verdict)."""
    out = {}
    for folder in folders:
        dataset, cap = probe_cap(folder)
        reps = pd.read_parquet(folder / "table2_replicates.parquet")
        tasks = reps.groupby("dataset")["task"].first().to_dict() if "task" in reps else {}
        if split == "train":
            if dataset and cap:
                out[dataset] = min(cap, TRAIN_TEXTS.get(dataset, cap))
            continue
        agr = folder / "agreement.parquet"
        rows_ = (pd.read_parquet(agr, columns=["dataset", "n_rows"]) if agr.is_file()
                 else pd.DataFrame(columns=["dataset", "n_rows"]))
        for d, task in tasks.items():
            if task == "classification" and (rows_["dataset"] == d).any():
                out[d] = int(rows_.loc[rows_["dataset"] == d, "n_rows"].max())
            elif d == dataset and cap:
                out[d] = min(cap, PAPER_EXAMPLES.get(d, cap))
    return out
