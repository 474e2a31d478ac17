"""Two rows of one dataset, the same seeds at two budgets (Multi30k at 3 and at 20 epochs): the
20-epoch plan reads each part against the 3-epoch part with its seeds, a contrast sets the rows
against each other paired by seed, and nothing pools them into one row."""

import json
import re
import shutil
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from attnlearn.agreement.plans import sha256
from conftest import REPO, rows_module

PLAN = REPO / "docs/plans/multi30k_epochs20.yaml"
SHORT = REPO / "reproduction/rows/multi30k"
RAISE = {"best_perf": [0.050, 0.061, 0.056], "agr_alpha_xi_uniform": [0.012, 0.030, -0.004],
         "agr_xi_proxy_xi_uniform": [0.01, -0.02, 0.0], "agr_grad_xi_uniform": [0.02, 0.01, 0.03]}


def _rows(tmp_path, parts=(1, 2, 3), start="2030-01-01T00:00:00+00:00"):
    """The kept 3-epoch row beside a 20-epoch row made of its parts with RAISE added, each part
    kept under the plan (run.json as paper_row.py --row --plan writes it) starting at ``start``."""
    shutil.copytree(SHORT, tmp_path / "multi30k", ignore=shutil.ignore_patterns("README.md"))
    long = tmp_path / "multi30k_epochs20"
    for r in parts:
        part = long / f"part{r}"
        shutil.copytree(SHORT / f"part{r}", part)
        reps = pd.read_parquet(part / "tables/table2_replicates.parquet")
        for column, added in RAISE.items():
            reps[column] += added[r - 1]
        reps.to_parquet(part / "tables/table2_replicates.parquet")
        run = json.loads((part / "run.json").read_text())
        run.update(row="multi30k_epochs20", plan={"path": str(PLAN.relative_to(REPO)), "sha256": sha256(PLAN)},
                   invocations=[{**i, "start": start} for i in run["invocations"]])
        (part / "run.json").write_text(json.dumps(run))
    return long


def _short(column):
    return np.array([pd.read_parquet(SHORT / f"part{r}/tables/table2_replicates.parquet")[column].iloc[0]
                     for r in (1, 2, 3)])


@pytest.mark.process
def test_the_budget_plan_reads_each_part_against_the_same_seeds_at_three_epochs(tmp_path):
    """Confirmatory once the three parts are kept (trained after the plan's commit): each test
    the paired t over the parts' differences, Holm over the plan's two."""
    plan_tests = rows_module("plan_tests")
    text = "\n".join(plan_tests.plan_markdown(PLAN, _rows(tmp_path)))
    assert "Confirmatory, over the 3 independent replicates of `part1`, `part2`, `part3`" in text
    for test, column in (("budget_raises_accuracy", "best_perf"), ("budget_raises_agreement", "agr_alpha_xi_uniform")):
        paired = stats.ttest_1samp(RAISE[column], 0)  # each 20-epoch part minus its 3-epoch twin
        ci = paired.confidence_interval()
        line = next(x for x in text.splitlines() if x.startswith(f"| {test}: "))
        assert f"{100 * np.mean(RAISE[column]):+.1f} [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}]" in line
        assert f"| {paired.pvalue:.2g} |" in line
        # Holm over the two: the accuracy's raise (p about 0.003) holds, the agreement's does not
        assert line.endswith("| holds |" if column == "best_perf" else "| undetermined |")


@pytest.mark.process
def test_fewer_parts_than_planned_are_an_interim_look(tmp_path):
    plan_tests = rows_module("plan_tests")
    text = "\n".join(plan_tests.plan_markdown(PLAN, _rows(tmp_path, parts=(1, 2))))
    assert "Interim look (2 of the plan's 3 replicates" in text
    assert not any(v in text for v in ("| holds |", "| undetermined |", "| fails |"))


@pytest.mark.process
def test_a_part_without_its_three_epoch_twin_is_named(tmp_path):
    plan_tests = rows_module("plan_tests")
    long = _rows(tmp_path)
    shutil.rmtree(tmp_path / "multi30k/part2")
    with pytest.raises(plan_tests.PlanError, match="part2.*missing"):
        plan_tests.plan_markdown(PLAN, long)


def test_two_rows_of_one_dataset_are_contrasted_paired_by_seed_and_never_pooled(tmp_path, capsys):
    """--contrast names each row by its own name and pairs part with part (the same seeds);
    any other reading of both refuses, naming the rows, rather than pooling two budgets."""
    module = rows_module("reproduction_rows")
    long = _rows(tmp_path)
    assert module.main(["--contrast", str(long), str(tmp_path / "multi30k")]) == 0
    out = capsys.readouterr().out
    assert "Multi30k at 20 epochs" in out and "paired by seed" in out
    line = next(x for x in out.splitlines() if x.startswith("- best, "))
    test = stats.ttest_rel(_short("best_perf") + RAISE["best_perf"], _short("best_perf"))
    ci = test.confidence_interval()
    assert f"{100 * np.mean(RAISE['best_perf']):+.1f} [{100 * ci.low:+.1f}, {100 * ci.high:+.1f}]" in line
    assert module.main([str(long), str(tmp_path / "multi30k")]) == 2
    assert "two rows of multi30k (multi30k, multi30k_epochs20)" in capsys.readouterr().err
    assert module.main([str(long)]) == 0  # each row alone is read as the dataset's (the paper's values)
    assert "Multi30k" in capsys.readouterr().out


def test_a_contrast_with_one_part_kept_prints_its_difference_without_an_interval(tmp_path, capsys):
    """While the 20-epoch row has its first part alone, the contrast prints each column's
    difference as it stands and says that one replicate has no interval, with no NaN and no
    numpy warning (it printed '+nan [+nan, +nan], p = nan' and an sd table of nan)."""
    module = rows_module("reproduction_rows")
    long = _rows(tmp_path, parts=(1,))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.main(["--contrast", str(long), str(tmp_path / "multi30k")]) == 0
    out = capsys.readouterr().out
    assert "nan" not in out.lower()
    line = next(x for x in out.splitlines() if x.startswith("- best, "))
    difference = 100 * (_short("best_perf")[0] + RAISE["best_perf"][0] - _short("best_perf").mean())
    assert f": {difference:+.1f} (one replicate on a side: no interval, no test) (n = 1 and 3)" in line
    assert out.rstrip().endswith("The seed spreads are not compared: one replicate on a side has no sd.")
    assert "| column, rows |" not in out  # no table of dashes


@pytest.mark.process
def test_a_part_paired_with_other_seeds_is_refused(tmp_path):
    """A pair differs by the budget alone: a 20-epoch part whose runs are not its twin's seeds
    (here part 2's tables under part 1's name) is refused, naming the part."""
    plan_tests = rows_module("plan_tests")
    long = _rows(tmp_path)
    shutil.copy2(long / "part2/tables/table2_replicates.parquet", long / "part1/tables/table2_replicates.parquet")
    with pytest.raises(plan_tests.PlanError, match="part1: its runs .* are not those of"):
        plan_tests.plan_markdown(PLAN, long)


def test_an_interim_finding_of_one_replicate_prints_no_p():
    """The results page's findings read '+6.8 (one replicate, no interval), p nan; no verdict.'
    for the 20-epoch plan with one part kept: one replicate has no test, so no p is printed."""
    from attnlearn.reporting.findings_markdown import plan_findings

    plan = {"dataset": "multi30k", "says": "x", "tests": [{"id": "a", "says": "the budget's raise"}]}
    one = pd.DataFrame([{"kind": "paired_difference", "n": 1, "estimate": 0.068, "ci_low": np.nan,
                         "ci_high": np.nan, "p_value": np.nan, "p_holm": np.nan, "verdict": "-"}])
    line, = plan_findings(plan, "docs/plans/p.yaml", one, 1, interim=True)
    assert line.endswith("Multi30k: the budget's raise: +6.8 (one replicate, no interval); no verdict.")
    three = one.assign(n=3, ci_low=0.03, ci_high=0.1, p_value=0.012)
    assert ", p 0.012; no verdict." in plan_findings(plan, "p.yaml", three, 3, interim=True)[0]


def test_replicates_equal_to_rounding_print_no_spread_not_a_p_of_1e_15():
    """Parts 1 and 2 of the 20-epoch row each had 139 more of 8,056 rows agreeing than their
    3-epoch twins: the two differences matched to the 17th digit, and the pages printed '+1.7
    [+1.7, +1.7], p 1e-15' (scipy's t of 1e14). Both the plan's table and the findings say the
    values have no spread instead, with statistics.t_test's exact reading (p 0)."""
    from attnlearn.agreement.plans import run_test
    from attnlearn.reporting.findings_markdown import plan_findings, result_lines

    test = {"id": "a", "says": "the budget's raise", "kind": "paired_difference", "columns": ["x", "y"],
            "null_value": 0, "expect": "greater"}
    frame = pd.DataFrame({"x": [2471 / 8056, 2487 / 8056], "y": [2332 / 8056, 2348 / 8056]})
    r = pd.DataFrame([{"kind": "paired_difference", **run_test(test, frame), "null_value": 0,
                       "p_holm": np.nan, "status": "confirmatory", "verdict": ""}])
    assert r.p_value[0] == 0.0
    row = result_lines(r, {"tests": [test]}, interim=True)[2]
    assert "| 2 | +1.7 (all 2 replicates the same to rounding: no spread, no interval) | 0 (no spread) |" in row
    line, = plan_findings({"dataset": "multi30k", "says": "x", "tests": [test]}, "p.yaml", r, 2, interim=True)
    assert line.endswith("+1.7 (all 2 replicates the same to rounding: no spread, no interval), p 0 (no spread); "
                         "no verdict.")


def test_a_row_of_one_replicate_prints_its_values_without_empty_intervals(tmp_path, capsys):
    """The 20-epoch row with part 1 alone printed '30.7 [-, -]' in every cell and '+21.4 [-, -]'
    with a bare '-' for p: a reader took the dashes for a broken table. One replicate prints its
    value and says there is no interval and no test."""
    row = tmp_path / "multi30k_epochs20"
    shutil.copytree(REPO / "reproduction/rows/multi30k_epochs20/part1", row / "part1")
    assert rows_module("reproduction_rows").main([str(row)]) == 0
    out = capsys.readouterr().out
    assert "[-, -]" not in out and "nan" not in out
    ours = next(x for x in out.splitlines() if x.startswith("| Multi30k, ours (n = 1) |"))
    assert all(re.fullmatch(r"\d+\.\d", cell.strip()) for cell in ours.split("|")[2:-1]), ours
    claim = next(x for x in out.splitlines() if x.startswith("| Multi30k | A(alpha*, xi^uf) - random baseline |"))
    assert "(one replicate: no interval) | +0.0 | - (one replicate) | - |" in claim


@pytest.mark.process  # git log: the plan's commit date
def test_one_plans_findings_are_the_full_lists_lines(capsys):
    """A row page leads with its plan's verdicts (findings.py --plan), printed by the code that
    prints the results page's findings: the same lines, not a second wording; a plan no kept row
    reads is refused by name."""
    findings = rows_module("findings")
    assert findings.main(["--plan", "docs/plans/multi30k_epochs20.yaml"]) == 0
    mine = capsys.readouterr().out.strip().splitlines()
    assert len(mine) == 2 and all("`docs/plans/multi30k_epochs20.yaml`" in line for line in mine)
    assert findings.main([]) == 0
    every = capsys.readouterr().out.splitlines()
    assert all(line in every for line in mine)
    with pytest.raises(SystemExit):
        findings.main(["--plan", "docs/plans/no_such_plan.yaml"])
    assert "--plan docs/plans/no_such_plan.yaml: not a plan read over a kept row" in capsys.readouterr().err
