"""Analysis plans: the tests a set of replicates will be read for, written down before they run.

A plan (docs/plans/<name>.yaml) names a dataset, the table its tests read, the significance
level, and each test: its kind, its columns, its null value and the direction it expects. Its
tests are one Holm family and no other. A test is *confirmatory* on replicates trained after
the plan was committed (paper_row.py --plan records the plan's path, sha256 and commit in the
block's run.json before the first job, and refuses a plan that changed since); read on any
other replicates, the same test is *exploratory*: printed with its interval and no verdict
(docs/methods.md 5.5).

Kinds (each over the independent replicates, one value per replicate):
- ``mean``: the column's mean against ``null_value`` (one-sample t);
- ``paired_difference``: columns[0] - columns[1] within each replicate, against ``null_value``;
- ``correlation``: Pearson's r of columns[0] with columns[1], against r = 0 (``null_value`` 0).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from attnlearn.statistics import correlation, holm, t_intervals, t_test

KINDS = {"mean": 1, "paired_difference": 2, "correlation": 2}  # kind -> how many columns it reads
EXPECT = ("greater", "less")
# paired_with: a kept row beside the plan's whose part R pairs with its part R (table paired_parts)
PLAN_KEYS = {"name", "dataset", "table", "alpha", "replicates", "paired_with", "says", "tests"}
TEST_KEYS = {"id", "says", "kind", "columns", "null_value", "expect"}
RESULT_COLUMNS = ["plan", "test", "says", "kind", "null_value", "n", "estimate", "ci_low", "ci_high", "p_value", "p_holm",
                  "status", "verdict"]


class PlanError(ValueError):
    """A plan file that cannot be read as a plan: the message names the file and the key."""


def load_plan(path: Path) -> dict:
    """The plan at ``path``, checked: every key known, every test's kind and columns sound."""
    path = Path(path)
    try:
        plan = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise PlanError(f"{path}: not a readable YAML file ({e})") from e
    if not isinstance(plan, dict):
        raise PlanError(f"{path}: a plan is a mapping with keys {sorted(PLAN_KEYS)}")
    _known(path, "", plan, PLAN_KEYS, required={"name", "dataset", "table", "alpha", "tests"})
    if not isinstance(plan["tests"], list) or not plan["tests"]:
        raise PlanError(f"{path}: tests: a list of one or more tests")
    ids = [t.get("id") if isinstance(t, dict) else None for t in plan["tests"]]
    for i, test in enumerate(plan["tests"]):
        _check_test(path, i, test)
    if len(set(ids)) != len(ids):
        raise PlanError(f"{path}: tests: each id once (have {ids})")
    if not 0 < float(plan["alpha"]) < 1:
        raise PlanError(f"{path}: alpha: between 0 and 1 (have {plan['alpha']})")
    return plan


def _known(path: Path, where: str, d: dict, keys: set, required: set) -> None:
    unknown, missing = set(d) - keys, required - set(d)
    if unknown:
        raise PlanError(f"{path}: {where}unknown key {sorted(unknown)[0]!r} (known: {', '.join(sorted(keys))})")
    if missing:
        raise PlanError(f"{path}: {where}missing key {sorted(missing)[0]!r}")


def _check_test(path: Path, i: int, test) -> None:
    where = f"tests[{i}]: "
    if not isinstance(test, dict):
        raise PlanError(f"{path}: {where}a mapping with keys {sorted(TEST_KEYS)}")
    _known(path, where, test, TEST_KEYS, required={"id", "kind", "columns", "null_value", "expect"})
    kind, columns = test["kind"], test["columns"]
    if kind not in KINDS:
        raise PlanError(f"{path}: {where}kind: one of {', '.join(KINDS)} (have {kind!r})")
    if not (isinstance(columns, list) and len(columns) == KINDS[kind] and all(isinstance(c, str) for c in columns)):
        raise PlanError(f"{path}: {where}columns: {KINDS[kind]} column name(s) for kind {kind} (have {columns!r})")
    if test["expect"] not in EXPECT:
        raise PlanError(f"{path}: {where}expect: one of {', '.join(EXPECT)} (have {test['expect']!r})")
    if kind == "correlation" and test["null_value"] != 0:
        raise PlanError(f"{path}: {where}null: a correlation is tested against r = 0 (have {test['null_value']})")


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_values(test: dict, frame: pd.DataFrame) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """The per-replicate values the test reads (the independent replicates, NaN left out)."""
    missing = [c for c in test["columns"] if c not in frame.columns]
    if missing:
        raise PlanError(f"test {test['id']}: column {missing[0]!r} is not in the table (have "
                        f"{', '.join(map(str, frame.columns))})")
    cols = [frame[c].to_numpy(dtype=float) for c in test["columns"]]
    if test["kind"] == "mean":
        v = cols[0]
        return v[~np.isnan(v)]
    if test["kind"] == "paired_difference":
        v = cols[0] - cols[1]
        return v[~np.isnan(v)]
    ok = ~(np.isnan(cols[0]) | np.isnan(cols[1]))
    return cols[0][ok], cols[1][ok]


def run_test(test: dict, frame: pd.DataFrame, level: float = 0.95) -> dict:
    """Estimate, 95% interval and two-sided p of one test over ``frame``'s rows."""
    values = test_values(test, frame)
    if test["kind"] == "correlation":
        c = correlation(*values, level)
        return {"n": c["n"], "estimate": c["r"], "ci_low": c["r_low"], "ci_high": c["r_high"], "p_value": c["p_value"]}
    iv = t_intervals(values, level)
    # no spread: the mean is exact, its test decided by where it sits (p = 1 on the null)
    p = t_test(values, test["null_value"], tie=1.0).p
    return {"n": iv["n"], "estimate": iv["mean"], "ci_low": iv["ci_low"], "ci_high": iv["ci_high"], "p_value": p}


def verdict(test: dict, row: dict, alpha: float) -> str:
    """holds: Holm p below alpha on the expected side; fails: below alpha on the other side;
    undetermined otherwise."""
    if np.isnan(row["p_holm"]) or row["p_holm"] >= alpha:
        return "undetermined"
    above = row["estimate"] > (test["null_value"] if test["kind"] != "correlation" else 0)
    return "holds" if above == (test["expect"] == "greater") else "fails"


def evaluate(plan: dict, frame: pd.DataFrame, confirmatory: bool) -> pd.DataFrame:
    """Every test of ``plan`` over ``frame`` (one row per independent replicate), Holm over the
    plan's tests. ``confirmatory``: the replicates were trained after the plan was committed;
    otherwise each test is exploratory, with its interval and no verdict nor Holm p."""
    rows = [{"plan": plan["name"], "test": t["id"], "says": t.get("says", ""), "kind": t["kind"],
             "null_value": t.get("null_value", float("nan")), **run_test(t, frame)} for t in plan["tests"]]
    adjusted = holm([r["p_value"] for r in rows])
    for t, r, p in zip(plan["tests"], rows, adjusted):
        r["status"] = "confirmatory" if confirmatory else "exploratory"
        r["p_holm"] = float(p) if confirmatory else float("nan")
        r["verdict"] = verdict(t, r, float(plan["alpha"])) if confirmatory else ""
    return pd.DataFrame(rows, columns=RESULT_COLUMNS)
