"""The appendix's tables that the kept rows hold, set against the paper the way Table 2 is:
A.4's Table 2 with Kendall's tau, A.4's Multi30k row with BLEU as the performance, A.6's
Table 10 (the frozen run's attention against alpha*), A.10's Table 11 (the uniform probe
against an L2 logistic regression) and A.4's Table 2 on the training split, each pooled over the
kept replicates, as Markdown.

    python paper_rows/appendix_rows.py reproduction/rows/multi30k reproduction/rows/sst

Each argument is a row kept by paper_rows/paper_row.py (`reproduction/rows/<dataset>`: its parts'
`part*/tables`) or one run's tables folder. The tables rule writes each appendix table once per
folder, for the folder's first replicate (its own A, U, proxy and B runs: the runs that
agreement.parquet compares), so a part gives one replicate of each and a block of parts
(parts4-10) gives only its first; the block's columns that read B are left out, as Table 2's
pooling leaves out a block's (agreement.pooling: a block's B runs are its other
replicates' A runs). Table 10 is also written per replicate that has a frozen run of its own
(table10_replicates.parquet: a block run with `paper_row.py --variants frozen`), Kendall's tau,
Table 11 and the training split per replicate (table2_kendall_replicates, table11_replicates,
table2_train_replicates: tables made since those were written), and a folder that has one
gives every such replicate. The parts share no run, so their replicates pool. Each column is read
as Table 2 is (replicates.interval_table): the mean over the independent replicates, the 95%
prediction interval of one more replicate (the seeds' spread alone: none of these columns has
a bootstrap over the examples), and the paper's value at its two decimals inside or outside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from attnlearn.agreement.paper import (TABLE2_BLEU, TABLE2_KENDALL, TABLE2_KENDALL_COLUMNS, TABLE2_TRAIN,
                                       TABLE2_TRAIN_COLUMNS, TABLE2_VALUE_COLUMNS, TABLE11, TABLE11_VALUE_COLUMNS)
from attnlearn.agreement.replicates import B_COLUMNS, column_interval, shared_b
from attnlearn.agreement.pooling import pool
from attnlearn.reporting.appendix_markdown import (bleu_markdown, bleu_missing_markdown, kendall_markdown,
                                                   paired_cell, table10_markdown, table11_markdown, train_markdown)
from attnlearn.rows import kept as rows  # the rows' folders and probed counts
from attnlearn.statistics import t_intervals

RUNS = ["replicate", "a_run", "u_run", "p_run", "b_runs", "independent"]


def first_replicates(folders: list[Path], name: str) -> list[pd.DataFrame]:
    """Each folder's table ``name`` (one row per dataset, empty where the folder's runs have
    none of it) with the runs of the replicate it was computed for: the folder's first (the
    runs its performance table names A and U). A block's columns that read B are left out."""
    frames = []
    for folder in folders:
        path = folder / f"{name}.parquet"
        table = pd.read_parquet(path) if path.is_file() else pd.DataFrame()
        if table.empty:
            continue
        reps = pd.read_parquet(folder / "table2_replicates.parquet")
        perf = pd.read_parquet(folder / "performance.parquet")
        out = []
        for row in table.to_dict("records"):
            mine = reps[reps["dataset"] == row["dataset"]]
            first = mine.iloc[0]
            roles = perf[perf["dataset"] == row["dataset"]].groupby("role")["run"].unique()
            if list(roles.get("A", [])) != [first["a_run"]] or first["u_run"] not in roles.get("U", []):
                raise ValueError(f"{folder}: {name} reads runs A {list(roles.get('A', []))} and U "
                                 f"{list(roles.get('U', []))}, not its first replicate's {first['a_run']}, "
                                 f"{first['u_run']}")
            row.update({c: first[c] for c in RUNS})
            if shared_b(mine).iloc[0]:  # a block: its B runs are its other replicates' A runs
                row.update({c: float("nan") for c in B_COLUMNS if c in row})
            out.append(row)
        frames.append(pd.DataFrame(out))
    return frames


def own_frozen_replicates(folder: Path) -> pd.DataFrame:
    """The folder's Table 10 per replicate with a frozen run of its own (table10_replicates,
    empty where the folder has none), with the runs of its table2_replicates row; a replicate
    whose A or U differs from that row's is refused by name."""
    path = folder / "table10_replicates.parquet"
    table = pd.read_parquet(path) if path.is_file() else pd.DataFrame()
    if table.empty:
        return table
    reps = pd.read_parquet(folder / "table2_replicates.parquet")
    out = table.merge(reps[["dataset", *RUNS]], on=["dataset", "replicate"], how="left", suffixes=("", "_table2"))
    for role in ("a_run", "u_run", "independent"):
        differs = out[role] != out[f"{role}_table2"]
        if differs.any():
            bad = out[differs].iloc[0]
            raise ValueError(f"{path}: replicate {bad['replicate']} of {bad['dataset']} has {role} {bad[role]}, "
                             f"table2_replicates.parquet {bad[f'{role}_table2']}")
    return out.drop(columns=[f"{c}_table2" for c in ("a_run", "u_run", "independent")])


def table10_replicates(folders: list[Path]) -> pd.DataFrame:
    """Table 10 over the folders: from each folder, every replicate with a frozen run of its own
    where it has table10_replicates (a block run with --variants frozen), else its first
    replicate (table10.parquet, whose F is the folder's first frozen run, where it has one).
    Pooled as Table 2 is (no run in two folders), and no frozen run in two replicates."""
    frames = []
    for folder in folders:
        own = own_frozen_replicates(folder)
        first = first_replicates([folder], "table10")
        if first:
            roles = pd.read_parquet(folder / "performance.parquet").groupby(["dataset", "role"])["run"].first()
            first = first[0].assign(f_run=lambda t: [roles.get((d, "F")) for d in t["dataset"]])
            first = [first[~first["dataset"].isin(set(own.get("dataset", [])))]]
        frames += [f for f in [own, *first] if not f.empty]
    if not frames:
        return pd.DataFrame()
    reps = pool(frames)
    frozen = reps.dropna(subset=["f_run"])
    twice = frozen[frozen.duplicated(["dataset", "f_run"], keep=False)]
    if len(twice):
        raise ValueError(f"{twice['dataset'].iloc[0]}: the frozen run {twice['f_run'].iloc[0]} is in more than one "
                         "kept replicate")
    return reps


def pooled(folders: list[Path], name: str) -> pd.DataFrame:
    """The folders' first replicates of table ``name``, pooled (agreement.pooling: the
    folders must share no run)."""
    frames = first_replicates(folders, name)
    return pool(frames) if frames else pd.DataFrame()


def appendix_intervals(reps: pd.DataFrame, columns: list[str], paper: dict[str, list[float]],
                       paper_columns: list[str], scale: float = 0.01, probed: dict[str, int] | None = None,
                       low: float = 0.0, unbounded: tuple[str, ...] = ()) -> pd.DataFrame:
    """One row per (dataset, column) over the independent replicates: n, the mean and the 95%
    prediction interval, the paper's value (a fraction: ``paper``'s numbers times ``scale``) and
    whether it lies inside the interval, read as Table 2's are (replicates.column_interval): these
    columns have no bootstrap over the examples, so the interval holds the bound on the examples'
    error (``probed``: each dataset's probed examples; ``low``: the least value per example, -1
    for Kendall's tau), and gives no verdict where the count is not known or the column is one of
    ``unbounded`` (BLEU: a corpus statistic, not a mean over the examples)."""
    out = []
    for dataset, g in reps[reps["independent"].astype(bool)].groupby("dataset", sort=False):
        for col in columns:
            values = paper.get(dataset)
            value = values[paper_columns.index(col)] * scale if values and col in paper_columns else float("nan")
            count = None if col in unbounded else (probed or {}).get(dataset)
            iv = column_interval(dataset, g[col] if col in g else [], float("nan"), count, value, low=low)
            out.append({"dataset": dataset, "column": col, "n_replicates": len(g), **iv})
    return pd.DataFrame(out)


def paired(reps: pd.DataFrame, first: str, second: str, per_replicate: bool = False) -> dict[str, str]:
    """Per dataset, ``first`` - ``second`` within each replicate that has both: mean [95% CI of
    the mean] in points, or the one value. ``per_replicate``: also what one more replicate's
    difference would be (the 95% prediction interval) and how many replicates lie below 0: a
    mean below 0 says the difference is negative on average, not in every replicate."""
    out = {}
    for dataset, g in reps[reps["independent"].astype(bool)].groupby("dataset", sort=False):
        diff = (g[first] - g[second]).dropna()
        out[dataset] = paired_cell(t_intervals(diff), int((diff < 0).sum()), per_replicate)
    return out


def every_replicate(folders: list[Path], name: str) -> pd.DataFrame:
    """Table ``name`` over the folders: every replicate of a folder whose tables hold
    ``<name>_replicates.parquet`` (table2_kendall_replicates, table11_replicates,
    table2_train_replicates: made since the tables rules write them), else the folder's first (``<name>.parquet``). Pooled as
    Table 2 is: a block's columns that read B left out."""
    frames = []
    for folder in folders:
        path = folder / f"{name}_replicates.parquet"
        own = pd.read_parquet(path) if path.is_file() else pd.DataFrame()
        done = set(own.get("dataset", []))
        first = [f[~f["dataset"].isin(done)] for f in first_replicates([folder], name)]
        frames += [f for f in [own, *first] if not f.empty]
    return pool(frames) if frames else pd.DataFrame()


def kendall_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    reps = every_replicate(folders, "table2_kendall")
    return kendall_markdown(None if reps.empty else appendix_intervals(
        reps, TABLE2_KENDALL_COLUMNS, TABLE2_KENDALL, TABLE2_KENDALL_COLUMNS, probed=probed, low=-1.0))


def bleu_settings(folders: list[Path]) -> dict[str, set]:
    """Each dataset's ``probe.bleu`` settings over the kept parts' run.json above ``folders``."""
    bleu = {}
    for folder in folders:
        run = folder.parent / "run.json"
        if run.is_file():
            info = json.loads(run.read_text())
            probe = (info.get("config") or {}).get("probe") or {}
            bleu.setdefault(info["dataset"], set()).add(probe.get("bleu"))
    return bleu


def bleu_lines(folders: list[Path], reps_all: pd.DataFrame, probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    reps = pooled(folders, "table2_bleu")
    if not reps.empty:
        bleu_columns = ("best_perf", "ctx_perf_xi_uniform", "ctx_perf_xi_standard")
        return bleu_markdown(appendix_intervals(reps, TABLE2_VALUE_COLUMNS, TABLE2_BLEU, TABLE2_VALUE_COLUMNS,
                                                probed=probed, unbounded=bleu_columns))
    translation = list(dict.fromkeys(reps_all.loc[reps_all["task"] == "translation", "dataset"]))
    return bleu_missing_markdown(translation, bleu_settings(folders) if translation else {})


TABLE10_COLUMNS = ["agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]


def table10_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    reps = table10_replicates(folders)
    if reps.empty:
        return table10_markdown(None, TABLE10_COLUMNS, {}, False)
    iv = appendix_intervals(reps, TABLE10_COLUMNS, {}, [], probed=probed)
    several = (reps.dropna(subset=["f_run"]).groupby("dataset").size() > 1).any()  # a row with frozen runs to pool
    return table10_markdown(iv, TABLE10_COLUMNS, paired(reps, *TABLE10_COLUMNS, per_replicate=True), several)


def table11_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    reps = every_replicate(folders, "table11")
    if reps.empty:
        return table11_markdown(None, {})
    iv = appendix_intervals(reps, TABLE11_VALUE_COLUMNS, TABLE11, TABLE11_VALUE_COLUMNS, scale=1.0, probed=probed)
    return table11_markdown(iv, paired(reps, *TABLE11_VALUE_COLUMNS[::-1]))


def train_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders, "train") if probed is None else probed
    reps = every_replicate(folders, "table2_train")
    return train_markdown(None if reps.empty else appendix_intervals(
        reps, TABLE2_TRAIN_COLUMNS, TABLE2_TRAIN, TABLE2_TRAIN_COLUMNS, probed=probed))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("rows", nargs="+", type=Path, help="rows kept by paper_row.py, or a run's tables folder")
    args = ap.parse_args(argv)
    folders = [f for r in args.rows for f in rows.table_folders(r)]
    missing = [f for f in folders if not (f / "table2_replicates.parquet").is_file()]
    if missing:
        print(f"no table2_replicates.parquet in {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    try:
        reps_all = pool(rows.replicate_tables(folders))
        probed = rows.probed_examples(folders)
        lines = (kendall_lines(folders, probed) + bleu_lines(folders, reps_all, probed) + table10_lines(folders, probed)
                 + table11_lines(folders, probed) + train_lines(folders, rows.probed_examples(folders, "train")))
    except ValueError as e:
        print(e, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
