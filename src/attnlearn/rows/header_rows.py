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

import pandas as pd
import yaml

from attnlearn.analyses import headers
from attnlearn.reporting.header_table import markdown
from attnlearn.rows import REPO
from attnlearn.rows.row_plan import records


def row_lengths(directory: Path, dataset: str):
    """The header length of each of the row's validation posts, checked against its prepared text."""
    source = yaml.safe_load((directory / "local.yaml").read_text())["datasets"][dataset]["source"]
    archives = sorted((directory / "data/downloads" / dataset).glob("*.tar.gz"))
    if len(archives) != 1:
        raise SystemExit(f"{directory}/data/downloads/{dataset}: expected one archive, found {len(archives)}")
    prepared = pd.read_parquet(directory / "results/data" / dataset / "valid.parquet")["text"]
    try:
        return headers.checked_lengths(source, archives[0], prepared)
    except headers.HeaderError as e:
        raise SystemExit(f"{directory}: {e}") from None


def replicate_rows(directory: Path, dataset: str) -> pd.DataFrame:
    """One row per replicate with readings of the row in ``directory``: the header split of its
    A(alpha*, xi^uf) (analyses/headers.py)."""
    lengths = row_lengths(directory, dataset)
    try:
        return headers.replicate_rows(directory / "results", dataset, lengths)
    except headers.HeaderError as e:
        raise SystemExit(f"{directory}: {e}") from None


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
    print(markdown(table, status_label(header_plans(args.kept.parent.parent if args.kept else args.directory))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
