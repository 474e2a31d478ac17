"""An analysis plan's tests over a kept row: confirmatory on the blocks trained under it,
exploratory on every other replicate.

    python paper_rows/plan_tests.py docs/plans/sms_spam_boundary.yaml reproduction/rows/sms_spam

A kept folder (a part or a block of reproduction/rows/<dataset>) is confirmatory for the plan where its
run.json names the plan (paper_row.py --plan) with the bytes the plan has now, and git shows
those bytes committed before the folder's first invocation started: the plan was written before
its replicates were trained. Every other folder's replicates are pooled into the exploratory
reading of the same tests: each with its interval, no verdict and no Holm (docs/methods.md
5.5). The two readings share no replicate, so the confirmatory one is a fresh test of what the
exploratory one suggested.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd

from attnlearn.rows import REPO
from attnlearn.rows.appendix_rows import table10_replicates
from attnlearn.agreement.pooling import pool
from attnlearn.reporting.findings_markdown import plan_heading, reading_lines
from attnlearn.rows.kept import readings_folders
from attnlearn.rows.reproduction_rows import attach_readings
from attnlearn.rows.row_plan import records

from attnlearn.agreement.plans import PlanError, evaluate, load_plan, sha256


def first_committed(path: Path, digest: str) -> datetime | None:
    """When git first shows ``path`` with these bytes (sha256 ``digest``); None if never."""
    rel = path.resolve().relative_to(REPO)
    log = subprocess.run(["git", "log", "--reverse", "--format=%H %cI", "--", str(rel)], cwd=REPO,
                         capture_output=True, text=True).stdout.split("\n")
    for line in filter(None, log):
        commit, when = line.split()
        blob = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=REPO, capture_output=True).stdout
        if hashlib.sha256(blob).hexdigest() == digest:
            return datetime.fromisoformat(when)
    return None


def status(folder: Path, plan_path: Path) -> tuple[str, str]:
    """('confirmatory' | 'exploratory', why) for one kept folder."""
    run = json.loads((folder / "run.json").read_text()) if (folder / "run.json").is_file() else {}
    rel = str(plan_path.resolve().relative_to(REPO))
    kept = records(run.get("plan"))
    record = next((r for r in kept if r.get("path") == rel), None)
    if record is None:
        return "exploratory", "trained under no plan" if not kept else \
            f"trained under {', '.join(r.get('path') for r in kept)}"
    if record["sha256"] != sha256(plan_path):
        return "exploratory", "the plan changed since it was trained"
    committed = first_committed(plan_path, record["sha256"])
    started = min(datetime.fromisoformat(i["start"]) for i in run["invocations"])
    if committed is None or committed >= started:
        return "exploratory", f"the plan was not committed before its first invocation ({started.isoformat()})"
    return "confirmatory", f"plan committed {committed.isoformat()}, first invocation {started.isoformat()}"


def kept_folders(row: Path) -> list[Path]:
    """The row's kept parts and blocks (each a folder with run.json and tables/)."""
    return sorted(p.parent for p in row.glob("part*/run.json") if (p.parent / "tables").is_dir())


def readings_of(folders: list[Path], row: Path, others: list[Path], plan: dict) -> pd.DataFrame:
    """The independent replicates of ``folders`` with their readings, as the page attaches them
    (a grid's readings serve the parts whose runs it shares; ``others``' never do)."""
    reps = pool([pd.read_parquet(f / "tables/table2_replicates.parquet") for f in folders])
    exclude = {o / "tables" for o in others}
    read = [f for f in readings_folders(row) if f not in exclude]
    readings = pd.concat([pd.read_parquet(f / "replicate_readings.parquet") for f in read])
    reps = attach_readings(reps, readings)
    return reps[reps["independent"]]


def table10_of(folders: list[Path], row: Path, others: list[Path], plan: dict) -> pd.DataFrame:
    """The independent replicates of ``folders`` with a frozen run of their own, as the page's
    Table 10 pools them (appendix_rows.table10_replicates: every replicate of a block run with
    --variants frozen, a part's first replicate where the part has a frozen run)."""
    reps = table10_replicates([f / "tables" for f in folders])
    if reps.empty or reps["f_run"].isna().all():
        raise PlanError(f"{', '.join(f.name for f in folders)}: no replicate with a frozen run of its own "
                        "(paper_row.py --parts A-B --variants frozen trains one per replicate)")
    return reps[reps["independent"].astype(bool) & reps["f_run"].notna()]


HEADER_TABLE = "tables/header_rows.parquet"  # header_rows.py --keep writes it into a kept folder


def header_rows_of(folders: list[Path], row: Path, others: list[Path], plan: dict) -> pd.DataFrame:
    """The independent replicates of ``folders``' kept header tables (header_rows.py --keep, made
    while a block's runs were on disk; plan_markdown leaves out the folders that have none)."""
    table = pd.concat([pd.read_parquet(f / HEADER_TABLE) for f in folders], ignore_index=True)
    return table[table["independent"].astype(bool)]


def paired_parts_of(folders: list[Path], row: Path, others: list[Path], plan: dict) -> pd.DataFrame:
    """Each part of ``folders`` (part<R>) beside the same part of the row the plan names as
    ``paired_with`` (a kept row in the same folder as ``row``: the same seeds, one setting
    changed): the part's Table 2 replicate, with the paired part's columns suffixed _paired."""
    paired_row = row.parent / str(plan.get("paired_with", ""))
    if not plan.get("paired_with") or not paired_row.is_dir():
        raise PlanError(f"plan {plan['name']}: table paired_parts reads the row named by paired_with "
                        f"(have {plan.get('paired_with')!r}; no folder {paired_row})")
    frames = []
    for folder in folders:
        mine = paired_row / folder.name / "tables/table2_replicates.parquet"
        if not re.fullmatch(r"part\d+", folder.name) or not mine.is_file():
            raise PlanError(f"{folder}: paired_parts pairs a part (part<R>) with {mine}, which is missing")
        ours, theirs = (pd.read_parquet(f / "tables/table2_replicates.parquet") for f in (folder, mine.parents[1]))
        if len(ours) != len(theirs):
            raise PlanError(f"{folder.name}: {len(ours)} replicates here, {len(theirs)} in {mine}: not a pair")
        seeds = ["a_run", "u_run", "p_run"]  # the pair differs by one setting alone: the same seeds
        if not ours[seeds].reset_index(drop=True).equals(theirs[seeds].reset_index(drop=True)):
            raise PlanError(f"{folder.name}: its runs {ours[seeds].values.tolist()} are not those of {mine} "
                            f"({theirs[seeds].values.tolist()}): not a pair")
        frames.append(ours.reset_index(drop=True).join(theirs.reset_index(drop=True).add_suffix("_paired")))
    table = pd.concat(frames, ignore_index=True)
    return table[table["independent"].astype(bool)]


# the table a plan's tests read -> how its independent replicates are gathered from kept folders
TABLES = {"replicate_readings": readings_of, "table10_replicates": table10_of, "header_rows": header_rows_of,
          "paired_parts": paired_parts_of}


# a plan table that only some kept folders hold -> the file it is read from: a header table
# exists only where header_rows.py kept one (parts 1-3 of 20 Newsgroups were kept without runs)
KEPT_APART = {"header_rows": HEADER_TABLE}


def readable(plan: dict, folder: Path) -> bool:
    """Whether ``folder`` keeps what the plan's table is read from."""
    kept = KEPT_APART.get(plan["table"])
    return kept is None or (folder / kept).is_file()


def replicates_of(plan: dict, folders: list[Path], row: Path, others: list[Path]) -> pd.DataFrame:
    if plan["table"] not in TABLES:
        raise PlanError(f"plan {plan['name']}: table {plan['table']!r} is not read by plan_tests.py "
                        f"(it reads {', '.join(TABLES)})")
    return TABLES[plan["table"]](folders, row, others, plan)


def planned(plan: dict) -> int | None:
    """How many replicates the plan reads its verdict over ("replicates: parts11-20": 10), or
    None where it names no block of parts."""
    m = re.fullmatch(r"parts(\d+)-(\d+)", str(plan.get("replicates", "")).strip())
    return int(m[2]) - int(m[1]) + 1 if m else None


def confirmatory(plan_path: Path, row: Path) -> tuple[pd.DataFrame | None, int, bool]:
    """The plan's confirmatory reading over ``row``: its results (None where no kept folder was
    trained under the plan), how many replicates it read and whether it is an interim look."""
    plan = load_plan(plan_path)
    folders = kept_folders(row) if row.is_dir() else []
    confirm = [f for f in folders if status(f, plan_path)[0] == "confirmatory" and readable(plan, f)]
    if not confirm:
        return None, 0, False
    frame = replicates_of(plan, confirm, row, [f for f in folders if f not in confirm])
    due = planned(plan)
    interim = due is not None and len(frame) < due
    return evaluate(plan, frame, not interim), len(frame), interim


def plan_markdown(plan_path: Path, row: Path) -> list[str]:
    plan = load_plan(plan_path)
    folders = kept_folders(row)
    marks = {f: status(f, plan_path) for f in folders}
    confirm = [f for f in folders if marks[f][0] == "confirmatory"]
    explore = [f for f in folders if marks[f][0] != "confirmatory"]
    lines = plan_heading(plan, plan_path.resolve().relative_to(REPO), [(f.name, *marks[f]) for f in folders])
    for label, group, confirmatory in (("Confirmatory", confirm, True), ("Exploratory", explore, False)):
        group = [f for f in group if readable(plan, f)]
        if not group:
            lines += reading_lines(label, [], None, plan)
            continue
        frame = replicates_of(plan, group, row, [f for f in folders if f not in group])
        # the plan's stopping rule: its verdict is read once, over the replicates it names
        due = planned(plan)
        interim = confirmatory and due is not None and len(frame) < due
        lines += reading_lines(label, [f.name for f in group], evaluate(plan, frame, confirmatory and not interim),
                               plan, len(frame), due if interim else None)
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("plan", type=Path, help="a plan file (docs/plans/*.yaml)")
    ap.add_argument("row", type=Path, help="the kept row (reproduction/rows/<dataset>)")
    args = ap.parse_args(argv)
    try:
        print("\n".join(plan_markdown(args.plan, args.row)))
    except (PlanError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
