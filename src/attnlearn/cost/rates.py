"""Measured GPU rates: the table of what a GPU did per unit of work (gpu_rates.tsv beside this
module, one row per measurement, each with its device, commit and command), read, converted to one
figure and picked to price a job where no GPU is present (rule gpu_hours); the preflight on a
GPU writes its own measurements in the same format (results/preflight/rates.tsv), for a person
to append to the table (docs/benchmarks.md, "What the paper costs on a GPU").

A job's work is counted in positions: a classification example's tokens (its length with <s>
and </s>), a translation pair's target tokens (the tokens a step predicts). A training job does
steps x batch x positions (times K in a stack of K runs), a probe checkpoints x examples x
positions. Each row's figure becomes GPU-seconds per position: the time the GPU gave a
position, where several jobs sharing it split its time (a job's wall time over the jobs
sharing the GPU). A dataset without a row of its own is priced by the nearest row, scaled by
its positions: the work (pick).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

RATES = Path(__file__).with_name("gpu_rates.tsv")  # the measured rates, a pipeline input (rule gpu_hours)
SECTION = "What the paper costs on a GPU"  # docs/benchmarks.md's section that records the preflight's rows
COLUMNS = ("id", "task", "stage", "arch", "device", "jobs_sharing", "stack", "model", "batch", "positions", "bleu",
           "value", "unit", "count", "dataset", "commit", "date", "section", "source", "note")
CHOICES = {"task": ("classification", "translation"), "stage": ("train", "probe"), "arch": ("lstm", "transformer"),
           "bleu": ("yes", "no", "-")}
NUMBERS = ("jobs_sharing", "stack", "batch", "positions", "value", "count")
TSV = {"delimiter": "\t", "quoting": csv.QUOTE_NONE, "quotechar": None}  # a command's quotes are its own


def _per_job(r: dict) -> float:
    """One job's work in positions, for the units that time one job (``count``: its steps in
    training, its examples x checkpoints in a probe)."""
    return r["count"] * (r["batch"] if r["stage"] == "train" else 1) * r["positions"]


# unit -> GPU-seconds per position. Rates of all the jobs sharing the GPU (or of all a stack's
# members) are the GPU's; one job's time is split among the jobs sharing the GPU with it.
UNITS = {
    "positions/s": lambda r: 1 / r["value"],  # translation: target tokens a second, all jobs together
    "examples/s": lambda r: 1 / (r["value"] * r["positions"]),  # all jobs (or members) together
    "s/step": lambda r: r["value"] / (r["batch"] * r["positions"] * r["jobs_sharing"]),  # one job's wall time
    "s/example": lambda r: r["value"] / (r["positions"] * r["jobs_sharing"]),  # one probe's, per checkpoint
    "checkpoints/min": lambda r: 60 / (r["value"] * r["count"] * r["positions"] * r["jobs_sharing"]),  # count: examples
    "s/job": lambda r: r["value"] / (_per_job(r) * r["jobs_sharing"]),
}
NEEDS = {"s/step": ("batch",), "checkpoints/min": ("count",), "s/job": ("count", "batch")}


class RatesError(ValueError):
    """A row of the rates table that cannot be read; the message names the file, line and column."""


def read_rates(path) -> list[dict]:
    """The table's rows, numbers parsed and ``s_per_position`` added. Raises RatesError naming
    every bad cell (file:line: column: why)."""
    path = Path(path)
    with path.open(newline="") as f:
        reader = csv.DictReader(f, **TSV)
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise RatesError(f"{path}:1: the header must be the columns {' '.join(COLUMNS)} (tab-separated), "
                             f"not {' '.join(reader.fieldnames or ())}")
        rows, problems = [], []
        for line, raw in enumerate(reader, 2):
            row, bad = _parse(raw)
            problems += [f"{path}:{line}: {column}: {why}" for column, why in bad]
            rows.append(row)
    ids = [r["id"] for r in rows]
    problems += [f"{path}: id {i!r} is on {ids.count(i)} rows" for i in sorted(set(ids)) if ids.count(i) > 1]
    if problems:
        raise RatesError("\n".join(problems))
    return rows


def _parse(raw: dict) -> tuple[dict, list[tuple[str, str]]]:
    row, bad = dict(raw), []
    if None in raw.values() or None in raw:
        return row, [("row", f"needs {len(COLUMNS)} tab-separated cells")]
    for column, allowed in CHOICES.items():
        if row[column] not in allowed:
            bad.append((column, f"{row[column]!r} is not one of {', '.join(allowed)}"))
    for column in NUMBERS:
        try:
            row[column] = float(row[column]) if row[column] else None
        except ValueError:
            bad.append((column, f"{row[column]!r} is not a number"))
            row[column] = None
    if row["unit"] not in UNITS:
        bad.append(("unit", f"{row['unit']!r} is not one of {', '.join(UNITS)}"))
    needed = ("value", "positions", "jobs_sharing", "stack", *NEEDS.get(row["unit"], ()))
    bad += [(c, "must be a positive number") for c in needed if not (row.get(c) or 0) > 0]
    if not bad:
        row["s_per_position"] = UNITS[row["unit"]](row)
    return row, bad


def write_rates(rows: list[dict], path) -> None:
    """Rows in the table's format (a header, then one line per row)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, COLUMNS, extrasaction="ignore", lineterminator="\n", **TSV)
        writer.writeheader()
        writer.writerows(rows)


def _prefer(rows: list[dict], keep) -> list[dict]:
    """The rows that ``keep`` accepts where there are any, else all of them."""
    kept = [r for r in rows if keep(r)]
    return kept or rows


def _nearest(rows: list[dict], positions: float, dataset: str | None, sharing: int) -> dict | None:
    """Among the rows with the most jobs sharing the GPU, up to ``sharing`` (sharing changes a
    job's GPU time more than anything else measured), the dataset's own row where it has one,
    else the row measured nearest its positions (the first in the table on a tie)."""
    rows = [r for r in rows if r["jobs_sharing"] <= sharing]
    if not rows:
        return None
    most = max(r["jobs_sharing"] for r in rows)
    rows = _prefer([r for r in rows if r["jobs_sharing"] == most], lambda r: r["dataset"] == dataset)
    return min(rows, key=lambda r: abs(math.log(r["positions"] / positions)))


def pick(rows: list[dict], task: str, stage: str, positions: float, *, card: str = "H100", arch: str = "lstm",
         stack: int = 1, sharing: int = 1, dataset: str | None = None, bleu: bool = False) -> tuple[dict, list[str]] | None:
    """The row that prices one job, and what differs between its measurement and the job (the
    notes a report prints). Preferred in turn: the card (``card`` in the row's device), the
    model family (``arch``), a probe with or without BLEU as the job's; then a stack of K runs
    at the largest measured stack of at most K, or its members as separate jobs sharing the
    GPU where that prices lower (two stacks of three sharing an H100 cost what six separate
    jobs sharing it cost: docs/benchmarks.md, SMS spam's paper-size part); a separate job at
    the most jobs sharing the GPU up to ``sharing`` (the run's), then its dataset's own row,
    else the one nearest its positions. None where the table has no row of the task and stage."""
    pool = [r for r in rows if r["task"] == task and r["stage"] == stage]
    if not pool:
        return None
    pool = _prefer(pool, lambda r: card.lower() in r["device"].lower())
    pool = _prefer(pool, lambda r: r["arch"] == arch)
    if stage == "probe":
        pool = _prefer(pool, lambda r: r["bleu"] == ("yes" if bleu else "no"))
    candidates = [_nearest([r for r in pool if r["stack"] == 1], positions, dataset, sharing)]
    stacked = [r for r in pool if 1 < r["stack"] <= stack]
    if stacked:
        largest = max(r["stack"] for r in stacked)
        candidates.append(_nearest([r for r in stacked if r["stack"] == largest], positions, dataset, 1))
    candidates = [c for c in candidates if c]
    if not candidates:
        return None
    row = min(candidates, key=lambda r: r["s_per_position"])
    return row, _notes(row, task, stage, positions, card, arch, stack, bleu)


def _notes(row, task, stage, positions, card, arch, stack, bleu) -> list[str]:
    notes = []
    if card.lower() not in row["device"].lower():
        notes.append(f"measured on {row['device']}")
    if row["arch"] != arch:
        notes.append(f"the {row['arch']} model's rate (no {arch} rate)")
    if abs(row["positions"] - positions) > 1e-9:
        noun = "target tokens" if task == "translation" else "positions"
        notes.append(f"scaled from {row['positions']:g} to {positions:g} {noun}")
    if stack > 1 and row["stack"] != stack:
        measured = f"K = {row['stack']:g}" if row["stack"] > 1 else "its runs as separate jobs"
        notes.append(f"a stack of {stack} at the rate of {measured}")
    if stage == "probe" and bleu and row["bleu"] != "yes":
        notes.append("BLEU decoding not priced")
    return notes


def price(rates: list[dict], task: str, stage: str, positions: float, work: float, *, sharing: int,
          **job) -> tuple[tuple[float, float], dict, list[str]]:
    """((GPU-hours with ``sharing`` jobs on the GPU, hours alone) of ``work`` positions of a job
    whose examples have ``positions`` positions, the row that priced it shared, and what differs
    between its measurement and the job). ``job``: pick's card, arch, stack, dataset, bleu.
    Raises ValueError where the table has no row of the task and stage."""
    picked = [pick(rates, task, stage, positions, sharing=n, **job) for n in (sharing, 1)]
    if None in picked:
        raise ValueError(f"the rates table has no {task} {stage} row to price {job.get('dataset')}")
    (row, notes), (alone, _) = picked
    return (work * row["s_per_position"] / 3600, work * alone["s_per_position"] / 3600), row, notes


def rate_rows(measured: list[dict], device: str, commit: str, date: str, source: str) -> list[dict]:
    """One row per dataset and stage in the table's format, of what the preflight timed: a job
    alone on ``device``, a training's seconds per step and a probe's seconds per example and
    checkpoint, at the dataset's sizes (``measured``: reporting/config_cost.py's measure)."""
    rows = []
    for m in measured:
        d, model = m["entry"], m["entry"]["model"]
        dims = " ".join(f"{k[0].upper()}={model[k]}" for k in ("embed", "hidden", "layers") if k in model)
        note = f"the preflight's timing: random tokens at the lengths of {m['lengths']}"
        at_best = (f"; every measure at the checkpoint, of which probe.at_best's took {m['best_share']:.0%}"
                   if m["best_share"] else "")
        common = {"task": d["task"], "arch": model.get("arch", "lstm"), "device": device, "jobs_sharing": 1,
                  "stack": 1, "model": f"V={m['vocab']} {dims}", "positions": f"{m['positions']:g}", "count": "",
                  "dataset": m["dataset"], "commit": commit, "date": date, "section": SECTION, "source": source}
        rows.append({**common, "id": f"preflight-{m['dataset']}-train-{date}", "stage": "train", "bleu": "-",
                     "batch": d["train"]["batch_size"], "value": f"{m['s_per_step']:.6g}", "unit": "s/step",
                     "note": note})
        bleu = bool(d["probe"].get("bleu"))
        rows.append({**common, "id": f"preflight-{m['dataset']}-probe-{date}", "stage": "probe",
                     "bleu": "yes" if bleu else "no", "batch": d["probe"]["batch_size"],
                     "value": f"{m['s_per_example']:.6g}", "unit": "s/example",
                     "note": note + at_best
                     + ("; an untrained model decodes to the length limit: an upper bound" if bleu else "")})
    return rows
