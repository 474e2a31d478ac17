"""The paper's claims read in their one Holm family (docs/plans/families/paper_claims.yaml): every
page prints the family's verdicts, and a row outside it its p alone (docs/methods.md 5.5)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlearn.agreement.claims import claims_table
from attnlearn.rows import REPO
from attnlearn.agreement.pooling import pool
from attnlearn.rows.kept import NAMES, blind_performance, table_folders

# The paper's claims' one Holm family (which kept rows it holds): every page reads its verdicts
FAMILY = REPO / "docs/plans/families/paper_claims.yaml"


def family_claims(family: Path = FAMILY) -> tuple[pd.DataFrame, dict[str, set[Path]]]:
    """The claims over the family's rows, Holm over all of them, and each row's table folders
    (a dataset whose folders are these is in the family; any other reading of it is not)."""
    spec = yaml.safe_load(family.read_text())
    root = family.resolve().parents[3]
    folders = {r: table_folders(root / r) for r in spec["rows"]}
    frames = {r: [pd.read_parquet(f / "table2_replicates.parquet") for f in fs] for r, fs in folders.items()}
    reps = pool([frame for fs in frames.values() for frame in fs])
    blind = blind_performance([f for fs in folders.values() for f in fs])
    members = {d: {f.resolve() for f in folders[r]} for r, fs in frames.items()
               for d in pd.concat(fs)["dataset"].unique()}
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
    spec = yaml.safe_load(family.read_text())
    fam, _ = family_claims(family)
    rows = ", ".join(NAMES.get(d, d) for d in dict.fromkeys(fam["dataset"]))
    return (f"Holm's family: the paper's claims over {rows}, {int(fam['p_value'].notna().sum())} with a p value, fixed "
            f"in `{family.resolve().relative_to(family.resolve().parents[3])}` (alpha {spec['alpha']}); every page "
            "prints these verdicts, and a row outside the family its p alone.")


def claims_markdown(claims: pd.DataFrame) -> list[str]:
    """The claims table, led by the one Holm family its verdicts are read in (in_family)."""
    lines = [family_sentence(), "",
             "| dataset | claim | estimate [95% CI] | threshold | p | p, Holm in the family | verdict, in the family | "
             "the paper's sentence |", "|---" * 8 + "|"]
    quoted = set()
    for r in claims.itertuples():
        sentence = r.paper_sentence if r.claim not in quoted else f"(as above, {r.paper_sentence.rsplit('(', 1)[1]}"
        quoted.add(r.claim)
        scale = 1 if r.claim == "uniform_probe_comparable_to_standard" else 100
        fmt = lambda v: "-" if np.isnan(v) else f"{scale * v:+.1f}" if scale == 100 else f"{v:.2f}"  # noqa: E731
        p = "-" if np.isnan(r.p_value) else f"{r.p_value:.2g}"
        p_holm = "-" if np.isnan(r.p_holm) else f"{r.p_holm:.2g}"
        estimate = "undefined in every replicate" if r.n == 0 else f"{fmt(r.estimate)} [{fmt(r.ci_low)}, {fmt(r.ci_high)}]"
        lines.append(f"| {NAMES.get(r.dataset, r.dataset)} | {r.statistic} | {estimate} | {fmt(r.threshold)} | {p} | "
                     f"{p_holm} | {r.verdict_holm} | {sentence} |")
    return lines
