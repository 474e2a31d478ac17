"""The paper's claims read in their one Holm family (docs/plans/families/paper_claims.yaml): every
page prints the family's verdicts, and a row outside it its p alone (docs/methods.md 5.5)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml

from attnlearn.agreement.claims import claims_table
from attnlearn.agreement.pooling import pool
from attnlearn.reporting.row_markdown import holm_family_sentence
from attnlearn.rows import REPO
from attnlearn.rows.kept import blind_performance, replicate_tables, table_folders

# The paper's claims' one Holm family (which kept rows it holds): every page reads its verdicts
FAMILY = REPO / "docs/plans/families/paper_claims.yaml"


def family_claims(family: Path = FAMILY) -> tuple[pd.DataFrame, dict[str, set[Path]]]:
    """The claims over the family's rows, Holm over all of them, and each row's table folders
    (a dataset whose folders are these is in the family; any other reading of it is not)."""
    spec = yaml.safe_load(family.read_text())
    root = family.resolve().parents[3]
    folders = {r: table_folders(root / r) for r in spec["rows"]}
    every = [f for fs in folders.values() for f in fs]
    tables = replicate_tables(every)
    reps = pool(tables)
    blind = blind_performance(every)
    row_by = {f: r for r, fs in folders.items() for f in fs}
    members = {d: {f.resolve() for f in folders[row_by[folder]]} for folder, t in zip(every, tables)
               for d in t["dataset"].unique()}
    return claims_table(reps, blind=blind), members


def in_family(claims: pd.DataFrame, folders: list[Path], family: Path = FAMILY) -> pd.DataFrame:
    """``claims`` with each (row, claim)'s Holm p and verdict the family's, where the row's
    folders are the family's for its dataset; any other row gets none (``p_holm`` NaN, verdict
    "- (not in the family)"): one verdict per claim on every page."""
    fam, members = family_claims(family)
    mine = {f.resolve() for f in folders}
    keyed = fam.set_index(["dataset", "claim"])
    out = claims.copy()
    for i, r in out.iterrows():
        member = members.get(r["dataset"])
        if member is not None and member <= mine and (r["dataset"], r["claim"]) in keyed.index:
            out.loc[i, ["p_holm", "verdict_holm"]] = keyed.loc[(r["dataset"], r["claim"]), ["p_holm", "verdict_holm"]]
        else:
            out.loc[i, ["p_holm", "verdict_holm"]] = [float("nan"), "- (not in the family)"]
    return out


def family_sentence(family: Path = FAMILY) -> str:
    """The sentence that leads every claims table: the family's rows, its claims with a p value,
    the file that fixes it and its alpha."""
    spec = yaml.safe_load(family.read_text())
    fam, _ = family_claims(family)
    where = str(family.resolve().relative_to(family.resolve().parents[3]))
    return holm_family_sentence(list(dict.fromkeys(fam["dataset"])), int(fam["p_value"].notna().sum()), where,
                                spec["alpha"])
