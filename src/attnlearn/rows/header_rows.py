"""The header question (does the attention's first choice fall in a post's header?), read inside a
20 Newsgroups row: per replicate, how often alpha*
and xi^uf put first a word of the post's header (From:, Subject:, ... up to the first blank
line) rather than of its body, A(alpha*, xi^uf) on the posts where alpha* picks a header word
and on the rest, and A(alpha*, xi^uf) with the header's positions left out of both measures;
over the replicates, each mean with its 95% t interval and the paired differences' p values.

    python paper_rows/header_rows.py /tmp/row_ng_b --keep reproduction/rows/newsgroups/parts4-10/tables/header_rows.parquet
    python paper_rows/header_rows.py --kept reproduction/rows/newsgroups/parts4-10/tables/header_rows.parquet

The first reads a finished row's working directory (paper_row.py -d DIR): its download, its
prepared and tokenized validation posts, its replicate readings and its probes (the runs
themselves are not kept in reproduction/rows, so the table is kept instead); the second prints a kept
table. Where a header ends comes from parsing the post twice (attnlearn.data.headers); the
parse is checked against the row's own prepared posts word for word.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlearn.agreement.metric import probe_measure
from attnlearn.agreement.readable import interval, points
from attnlearn.agreement.readings import CENTRAL, position_split, split_summary
from attnlearn.agreement.words import attended_rows, id_matrix, token_names
from attnlearn.data.headers import header_lengths, header_mask
from attnlearn.data.prepare import prepare
from attnlearn.rows import REPO
from attnlearn.rows.row_plan import records
from attnlearn.statistics import correlation, t_intervals, t_test

COLUMNS = ["dataset", "replicate", "a_run", "u_run", "independent", "a_step", "u_step", CENTRAL,
           "header_positions", "alpha_header_share", "xi_header_share", "agr_header_rows", "agr_body_rows", "agr_without_header"]


def row_lengths(directory: Path, dataset: str) -> np.ndarray:
    """The header length of each of the row's validation posts, checked against its prepared text."""
    source = yaml.safe_load((directory / "local.yaml").read_text())["datasets"][dataset]["source"]
    archives = sorted((directory / "data/downloads" / dataset).glob("*.tar.gz"))
    if len(archives) != 1:
        raise SystemExit(f"{directory}/data/downloads/{dataset}: expected one archive, found {len(archives)}")
    if source.get("options", {}).get("strip_headers"):
        raise SystemExit(f"{directory}: {dataset} strips the headers; there is no header to read")
    lengths = header_lengths(source, {"archive": archives[0]})
    prepared = pd.read_parquet(directory / "results/data" / dataset / "valid.parquet")["text"]
    whole = prepare(source, {"archive": archives[0]})["valid"]["text"]
    if prepared.tolist() != whole.tolist():
        raise SystemExit(f"{directory}: the archive parses to other validation posts than the row's "
                         "results/data (another config or code?)")
    return lengths


def replicate_rows(directory: Path, dataset: str) -> pd.DataFrame:
    """One row per replicate with readings: the header split of its A(alpha*, xi^uf)."""
    lengths = row_lengths(directory, dataset)
    results = directory / "results"
    names = token_names(json.loads((results / "tokenized" / dataset / "tokenizer.json").read_text()))
    sources = id_matrix(pd.read_parquet(results / "tokenized" / dataset / "valid.parquet")["ids"])
    readings = pd.read_parquet(results / "tables/replicate_readings.parquet")
    out = []
    for r in readings[readings["dataset"] == dataset].itertuples():
        probes = results / "probes" / dataset
        rows, arrays = attended_rows(names, sources,
                                     probe_measure(probes / f"{r.a_run}.parquet", "alpha", int(r.a_step)),
                                     probe_measure(probes / f"{r.u_run}.parquet", "xi", int(r.u_step)))
        if not np.isclose(rows["hit"].mean(), getattr(r, CENTRAL), rtol=0, atol=1e-9):
            raise SystemExit(f"{r.a_run} x {r.u_run}: the probes give {rows['hit'].mean():.6f}, the readings "
                             f"{getattr(r, CENTRAL):.6f}")
        mask = header_mask(lengths, rows["example"].to_numpy(), arrays["alpha"].shape[1])
        split = position_split(rows, arrays, mask)
        real = ~np.isnan(arrays["alpha"])
        out.append({"dataset": dataset, "replicate": r.replicate, "a_run": r.a_run, "u_run": r.u_run,
                    "independent": bool(r.independent), "a_step": int(r.a_step), "u_step": int(r.u_step),
                    CENTRAL: getattr(r, CENTRAL),  # a position drawn at random per post:
                    "header_positions": float(((mask & real).sum(1) / real.sum(1)).mean()),
                    "alpha_header_share": split["alpha_share"],
                    "xi_header_share": split["xi_share"], "agr_header_rows": split["agr_in"],
                    "agr_body_rows": split["agr_out"], "agr_without_header": split["agr_without"]})
    return pd.DataFrame(out, columns=COLUMNS)


def _pct(v: float) -> str:
    return "-" if pd.isna(v) else f"{100 * v:.1f}"


def markdown(table: pd.DataFrame, plans: list[str] = ()) -> str:
    """The per-replicate table and its summary; ``plans``: the header plans the block ran under."""
    lines = ["| A run | U run | A(α\\*, ξ^uf) | header first: α\\*, ξ^uf | A(α\\*, ξ^uf) where α\\* puts a header "
             "word first, a body word first | A(α\\*, ξ^uf) without the header |", "|---" * 6 + "|"]
    lines += [f"| {r.a_run} | {r.u_run} | {_pct(getattr(r, CENTRAL))} | {_pct(r.alpha_header_share)}, "
              f"{_pct(r.xi_header_share)} | {_pct(r.agr_header_rows)}, {_pct(r.agr_body_rows)} | "
              f"{_pct(r.agr_without_header)} |" for r in table.itertuples()]
    b = split_summary(table, "alpha_header_share", "agr_header_rows", "agr_body_rows", "agr_without_header")
    g = table[table["independent"].astype(bool)]
    # the null for alpha*'s header share: the uniform probe's share on the same posts (paired), a
    # measure as peaked as alpha*; a random position's share (header_positions) any peaked
    # attention exceeds, so it is described, not tested
    over_xi = (g["alpha_header_share"] - g["xi_header_share"]).to_numpy(dtype=float)
    t, xi = t_intervals(over_xi), t_intervals(g["xi_header_share"].to_numpy(dtype=float))
    r = correlation(g["alpha_header_share"], g[CENTRAL])
    r_p = "" if np.isnan(r["p_value"]) else f" (p = {r['p_value']:.2g})"  # two replicates: no r, no p
    lines += ["", f"{status_label(plans)} Over the {b['share_n']} replicates (mean [95% CI]): the header holds {100 * g['header_positions'].mean():.1f}% "
              f"of the probed positions; α\\* puts a header word first in "
              f"{interval(b['share'], b['share_low'], b['share_high'])} percent of posts and ξ^uf in "
              f"{interval(xi['mean'], xi['ci_low'], xi['ci_high'])} of the same posts: α\\* minus ξ^uf, paired, "
              f"{points(t['mean'], t['ci_low'], t['ci_high'])} points (p = {t_test(over_xi, 0.0, tie=1.0).p:.2g}). "
              f"A(α\\*, ξ^uf) on the posts where α\\* puts a header word first minus on the posts where it puts a body "
              f"word first: {points(b['gap'], b['gap_low'], b['gap_high'])} points (paired t, p = {b['gap_p']:.2g}). With "
              f"the header's positions left out of both measures A(α\\*, ξ^uf) is "
              f"{interval(b['without'], b['without_low'], b['without_high'])}; the column minus it: "
              f"{points(b['loss'], b['loss_low'], b['loss_high'])} points (paired t, p = {b['loss_p']:.2g}). The column "
              f"against α\\*'s header share over the replicates: r = {_r_interval(r)}{r_p}."]
    return "\n".join(lines)


HEADER_PLAN = "docs/plans/newsgroups_header.yaml"  # the plan written for fresh replicates (11-20)


def status_label(plans: list[str]) -> str:
    """What the summary is: a block trained under a plan that reads header tables is one look at
    the plan's replicates (its verdict is plan_tests.py's, read once over all of them); any other
    block's split was chosen after the posts' words were seen."""
    if plans:
        names = ", ".join(plans)
        return (f"One block of {names}'s replicates, trained under it (intervals and p values, no "
                f"verdict, no Holm family: the plan's verdict is `plan_tests.py {names}`'s, over all of "
                f"its replicates).")
    return ("Exploratory (a split chosen after the posts' words were seen: intervals and p values, no verdict, "
            f"no Holm family; {HEADER_PLAN} is the plan for fresh replicates).")


def header_plans(folder: Path) -> list[str]:
    """The plans a row's working directory (plan.json) or a kept folder (run.json) ran under that
    read header tables (``table: header_rows``): the plans whose blocks show this table."""
    for name, key in (("plan.json", None), ("run.json", "plan")):
        path = folder / name
        if path.is_file():
            record = json.loads(path.read_text())
            paths = [r.get("path") for r in records(record if key is None else record.get(key))]
            return [p for p in paths if yaml.safe_load((REPO / p).read_text()).get("table") == "header_rows"]
    return []


def _r_interval(r) -> str:
    """r with its Fisher interval; three replicates leave none (1 / sqrt(n - 3)) and two no r, said in words."""
    if np.isnan(r["r"]):
        return "undefined (too few replicates)"
    if np.isnan(r["r_low"]):
        return f"{r['r']:+.2f} (too few replicates for an interval)"
    return f"{r['r']:+.2f} [{r['r_low']:+.2f}, {r['r_high']:+.2f}]"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", nargs="?", type=Path, help="a finished row's working directory (paper_row.py -d)")
    ap.add_argument("--dataset", default="newsgroups")
    ap.add_argument("--keep", type=Path, help="write the per-replicate table here (parquet)")
    ap.add_argument("--kept", type=Path, help="print a kept table instead of reading a row")
    args = ap.parse_args(argv)
    if (args.directory is None) == (args.kept is None):
        ap.error("give a row's directory or --kept, one of them")
    table = pd.read_parquet(args.kept) if args.kept else replicate_rows(args.directory, args.dataset)
    if args.keep:
        args.keep.parent.mkdir(parents=True, exist_ok=True)
        tmp = args.keep.with_suffix(".tmp")
        table.to_parquet(tmp, index=False)
        tmp.replace(args.keep)
    print(markdown(table, header_plans(args.kept.parent.parent if args.kept else args.directory)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
