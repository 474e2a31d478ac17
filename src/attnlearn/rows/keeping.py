"""A finished row's tables kept for the pages (reproduction/rows/<row>/part<R>), with run.json:
its command, config, plan and every invocation."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

from attnlearn.rows.invocations import read as read_invocations
from attnlearn.rows.invocations import totals

def kept_folder(out: Path, dataset: str, part: int | str | None = None) -> Path:
    """Where a row (``out``/``dataset``) or one of its parts (``out``/``dataset``/part<R>, a
    factorial grid ``out``/``dataset``/factorial) is kept."""
    if part is None:
        return out / dataset
    return out / dataset / (part if isinstance(part, str) else f"part{part}")


def keep(work: Path, dataset: str, out: Path, cmd: list[str], entry: dict, part: int | str | None = None,
         plan: dict | None = None, tables_config: dict | None = None, row: str | None = None) -> Path:
    """Copy the finished row's tables to ``out``/``dataset`` (``out``/``dataset``/part<R> for
    a part) with run.json (``entry``: the dataset's config; ``plan``: the analysis plan fixed
    before its first job, row_plan.py; ``tables_config``: the config's ``tables``, where set, as
    train_split; ``row``: the folder's name in place of the dataset's, paper_row.py --row); the
    folder is replaced whole (written beside it, then moved), so a failure leaves the old one."""
    tables = work / "results" / "tables"
    if not (tables / "table2_replicates.parquet").is_file():
        raise FileNotFoundError(f"{tables / 'table2_replicates.parquet'}: the row has not finished")
    invocations = read_invocations(work)
    dest = kept_folder(out, row or dataset, part)
    out, name = dest.parent, dest.name
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(tables, tmp / "tables")
    if (work / "results" / "analyses" / dataset).is_dir():  # TanhMax, optimal attention: small tables
        shutil.copytree(work / "results" / "analyses" / dataset, tmp / "analyses")
    record = {"dataset": dataset, **({"row": row} if row and row != dataset else {}),
              **({"part": part} if part is not None else {}), "command": shlex.join(cmd),
              "config": entry, **({"tables": tables_config} if tables_config else {}),
              **({"plan": plan} if plan else {}),
              "invocations": invocations, **totals(invocations)}
    (tmp / "run.json").write_text(json.dumps(record, indent=1) + "\n")
    old = out / f".{name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        dest.rename(old)
    tmp.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return dest
