"""The appendix's tables that the kept rows hold, set against the paper the way Table 2 is:
A.4's Table 2 with Kendall's tau, A.4's Multi30k row with BLEU as the performance, A.6's
Table 10 (the frozen run's attention against alpha*), A.10's Table 11 (the uniform probe
against an L2 logistic regression) and A.4's Table 2 on the training split, each pooled over the
kept replicates, as Markdown.

    python paper_rows/appendix_rows.py reproduction/rows/*

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
from attnlearn.agreement.readable import interval, percent, points
from attnlearn.agreement.replicates import B_COLUMNS, column_interval, shared_b
from attnlearn.agreement.pooling import pool
from attnlearn.rows import kept as rows  # the rows' names, folders and probed counts
from attnlearn.rows.reproduction_rows import paper_cell
from attnlearn.statistics import t_intervals


NAMES = rows.NAMES

HEADERS = {"agr_alpha_xi_uniform": "A(α\\*, ξ^uf)", "agr_xi_proxy_xi_uniform": "A(ξ^px, ξ^uf)",
           "agr_grad_xi_uniform": "A(g\\*, ξ^uf)", "agr_alpha_xi_standard": "A(α\\*, ξ^B)", "random_baseline": "baseline",
           "ctx_perf_xi_uniform": "ctx ξ^uf", "ctx_perf_xi_proxy_xi_uniform": "ctx ξ^px",
           "ctx_perf_grad_xi_uniform": "ctx g\\*", "ctx_perf_xi_standard": "ctx ξ^B", "best_perf": "best",
           "agr_alpha_frozen_alpha_star": "A(α^frozen, α\\*)", "agr_xi_uniform_alpha_star": "A(ξ^uf, α\\*)",
           "agr_xi_logreg_xi_uniform": "A(ξ^lr, ξ^uf)"}
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


def ours_cell(iv) -> str:
    """mean [95% PI] (n), to the decimals that read the paper's value (readable.interval);
    one replicate: its value and n, no interval."""
    if iv["n"] == 0:
        return "undefined"
    if iv["n"] < 2:
        return f"{percent(iv['mean'])} (n = 1, no interval)"
    return f"{interval(iv['mean'], iv['pi_low'], iv['pi_high'], mark_past=False, against=iv['paper'])} (n = {iv['n']})"


def table_lines(intervals: pd.DataFrame, columns: list[str], extra: dict[str, dict[str, str]] | None = None,
                extra_header: str | None = None) -> list[str]:
    """A row of ours and, where the paper has the dataset, a row of the paper's values, per
    dataset; ``extra``: one more column's cell per dataset (ours), under ``extra_header``."""
    headers = [HEADERS[c] for c in columns] + ([extra_header] if extra_header else [])
    lines = ["| dataset | " + " | ".join(headers) + " |", "|---" * (len(headers) + 1) + "|"]
    for dataset, g in intervals.groupby("dataset", sort=False):
        by_col = g.set_index("column")
        more = [extra[dataset]] if extra_header else []
        name = NAMES.get(dataset, dataset)
        lines.append(f"| {name}, ours | " + " | ".join([ours_cell(by_col.loc[c]) for c in columns] + more) + " |")
        papers = [paper_cell(by_col.loc[c]) for c in columns]
        if any(p != "-" for p in papers):
            lines.append(f"| {name}, paper | " + " | ".join(papers + ["-"] * len(more)) + " |")
    return lines


def paired(reps: pd.DataFrame, first: str, second: str, per_replicate: bool = False) -> dict[str, str]:
    """Per dataset, ``first`` - ``second`` within each replicate that has both: mean [95% CI of
    the mean] in points, or the one value. ``per_replicate``: also what one more replicate's
    difference would be (the 95% prediction interval) and how many replicates lie below 0: a
    mean below 0 says the difference is negative on average, not in every replicate."""
    out = {}
    for dataset, g in reps[reps["independent"].astype(bool)].groupby("dataset", sort=False):
        diff = (g[first] - g[second]).dropna()
        iv = t_intervals(diff)
        if iv["n"] == 0:
            out[dataset] = "-"
        elif iv["n"] < 2:
            out[dataset] = f"{100 * iv['mean']:+.1f} (n = 1, no interval)"
        else:
            out[dataset] = f"{points(iv['mean'], iv['ci_low'], iv['ci_high'])} (n = {iv['n']})"
            if per_replicate:
                out[dataset] += (f"; one more replicate: {points(iv['mean'], iv['pi_low'], iv['pi_high'])}; "
                                 f"{int((diff < 0).sum())} of {iv['n']} below 0")
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
    lines = ["### Table 2 with Kendall's tau (appendix A.4)", ""]
    if reps.empty:
        return lines + ["No kept folder holds table2_kendall.parquet.", ""]
    lines += ["Kendall's tau-b between the two measures per probe row (an example; for translation, an example's "
              "target word), averaged over the rows (a random ranking's is 0); the contextualized columns by the "
              "same tau. The paper's table has no A(α\\*, ξ^B); its "
              "starred values (SST's ctx ξ^px) are its convention where no checkpoint reaches the agreement (the "
              "best performance). Ours: mean [95% prediction interval] (n) over the replicates: every replicate "
              "of a folder whose tables hold table2_kendall_replicates.parquet, else the folder's first (a block's "
              "without the columns that read B); the interval holds the seeds' spread and a bound on the examples' "
              "error (a tau per row lies in [-1, 1]: docs/methods.md 5.1); the paper: its value at two decimals, "
              "inside or outside our interval.", ""]
    return lines + table_lines(appendix_intervals(reps, TABLE2_KENDALL_COLUMNS, TABLE2_KENDALL,
                                                  TABLE2_KENDALL_COLUMNS, probed=probed, low=-1.0),
                               TABLE2_KENDALL_COLUMNS) + [""]


def bleu_lines(folders: list[Path], reps_all: pd.DataFrame, probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    lines = ["### Translation with BLEU as the performance (appendix A.4)", ""]
    reps = pooled(folders, "table2_bleu")
    if not reps.empty:
        bleu_columns = ("best_perf", "ctx_perf_xi_uniform", "ctx_perf_xi_standard")
        return lines + table_lines(appendix_intervals(reps, TABLE2_VALUE_COLUMNS, TABLE2_BLEU, TABLE2_VALUE_COLUMNS,
                                                      probed=probed, unbounded=bleu_columns),
                                   TABLE2_VALUE_COLUMNS) + [""]
    translation = list(dict.fromkeys(reps_all.loc[reps_all["task"] == "translation", "dataset"]))
    if not translation:
        return lines + ["No kept row is a translation task.", ""]
    bleu = {}
    for folder in folders:
        run = folder.parent / "run.json"
        if run.is_file():
            info = json.loads(run.read_text())
            probe = (info.get("config") or {}).get("probe") or {}
            bleu.setdefault(info["dataset"], set()).add(probe.get("bleu"))
    said = []
    for d in translation:
        why = ("every kept part ran with `probe: {bleu: false}` (config/paper_cpu.yaml: beam search of every "
               "checkpoint cut)") if bleu.get(d) == {False} else "no kept part computed BLEU"
        said.append(f"{NAMES.get(d, d)}: no row, {why}. It needs the parts rerun with `probe.bleu: true` (BLEU of "
                    "every checkpoint, alpha* at the best-BLEU checkpoint); the paper's row is "
                    + " / ".join(f"{v:.2f}" for v in TABLE2_BLEU.get(d, [])) + " in Table 2's column order.")
    return lines + said + [""]


# said where some replicate other than a part's first has a frozen run (a block run with --variants frozen)
PER_REPLICATE = ("Each replicate compares its own frozen run with its own α\\*: every replicate of a block run with "
                 "`paper_row.py --variants frozen`, a part's first replicate (the part's frozen run, where it has "
                 "one). ")


def table10_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    lines = ["### Table 10: the frozen run's attention against α\\* (appendix A.6)", ""]
    reps = table10_replicates(folders)
    if reps.empty:
        return lines + ["No kept folder holds table10.parquet.", ""]
    columns = ["agr_alpha_frozen_alpha_star", "agr_xi_uniform_alpha_star"]
    iv = appendix_intervals(reps, columns, {}, [], probed=probed)
    several = (reps.dropna(subset=["f_run"]).groupby("dataset").size() > 1).any()  # a row with frozen runs to pool
    lines += ["A(α^frozen, α\\*): a run with every weight but the attention's frozen at its initialization, at its "
              "checkpoint that agrees most with α\\*; A(ξ^uf, α\\*): the uniform run's probe against α\\*, at its "
              "checkpoint that agrees most. " + (PER_REPLICATE if several else "")
              + "A row with one frozen run has n = 1 and no interval. "
              "The paper's Table 10 values (classification tasks) are not in the text of the paper we hold; its "
              "reading: \"the left column is consistently lower than the right column\". The two columns: mean "
              "[95% prediction interval of one more replicate, with the bound on the examples' error] (n). The "
              "last column: A(α^frozen, α\\*) - A(ξ^uf, α\\*) within the replicate, in points: the mean's 95% "
              "confidence interval (is the difference below 0 on average?), then one more replicate's 95% "
              "prediction interval and how many replicates lie below 0 (is it below 0 in each?).", ""]
    return lines + table_lines(iv, columns, paired(reps, *columns, per_replicate=True),
                               "frozen - ξ^uf, paired: mean [95% CI]; one more replicate [95% PI]; below 0") + [""]


def table11_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders) if probed is None else probed
    lines = ["### Table 11: the proxy's probe against an L2 logistic regression's (appendix A.10)", ""]
    reps = every_replicate(folders, "table11")
    if reps.empty:
        return lines + ["No kept folder holds a classification row's table11.parquet.", ""]
    iv = appendix_intervals(reps, TABLE11_VALUE_COLUMNS, TABLE11, TABLE11_VALUE_COLUMNS, scale=1.0, probed=probed)
    lines += ["A(ξ^px, ξ^uf) and A(ξ^lr, ξ^uf): the proxy's and a logistic regression's word weights (L2, its "
              "strength picked by validation accuracy) against the uniform run's probe, each at U's checkpoint where it "
              "agrees most, "
              "over the same replicates. The paper prints fractions (0.40 is 40.00 here) from a retrain of its "
              "models. The last column: A(ξ^lr, ξ^uf) - A(ξ^px, ξ^uf) within the replicate, mean [95% CI] in "
              "points.", ""]
    return lines + table_lines(iv, TABLE11_VALUE_COLUMNS, paired(reps, *TABLE11_VALUE_COLUMNS[::-1]),
                               "ξ^lr - ξ^px, paired") + [""]


def train_lines(folders: list[Path], probed: dict[str, int] | None = None) -> list[str]:
    probed = rows.probed_examples(folders, "train") if probed is None else probed
    lines = ["### Table 2 on the training split (appendix A.4)", ""]
    reps = every_replicate(folders, "table2_train")
    if reps.empty:
        return lines + ["No kept row holds table2_train.parquet: it is made only with `tables: {train_split: true}` "
                        "(every checkpoint probed on training examples too), which no kept row ran. A finished "
                        "row whose runs are still on disk gets it with `paper_row.py ... --keep-runs --train-split`; "
                        "the runs themselves are not kept in reproduction/rows."]
    lines += ["Table 2's columns with every checkpoint probed on the first `probe.max_examples` training examples "
              "instead of validation ones (α\\* and the performance columns by accuracy on those examples, as the "
              "appendix defines them), over the replicates whose folders hold table2_train_replicates.parquet "
              "(`paper_row.py --keep-runs --train-split` on a finished row whose runs are still on disk). As in "
              "Table 2, a block's columns that read B (A(α\\*, ξ^B) and the contextualized ones) are left out: "
              "its B runs are its other replicates' A runs. The intervals hold the seeds' spread and a bound on "
              "the examples' error (the same training examples in every replicate, the paper's others: "
              "docs/methods.md 5.1).", ""]
    return lines + table_lines(appendix_intervals(reps, TABLE2_TRAIN_COLUMNS, TABLE2_TRAIN, TABLE2_TRAIN_COLUMNS,
                                                  probed=probed), TABLE2_TRAIN_COLUMNS)


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
        reps_all = pool([pd.read_parquet(f / "table2_replicates.parquet") for f in folders])
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
