"""Analysis plans (attnlearn.agreement.plans, paper_rows/row_plan.py): a plan is read strictly,
its tests are one Holm family with verdicts only where they are confirmatory, and a row fixes its
plan before its first job and refuses one that changed."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from attnlearn.agreement.plans import PlanError, evaluate, load_plan
from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
PLAN = {"name": "p", "dataset": "sms_spam", "table": "replicate_readings", "alpha": 0.05,
        "tests": [{"id": "share", "kind": "mean", "columns": ["s"], "null_value": 0.5, "expect": "greater"},
                  {"id": "gap", "kind": "paired_difference", "columns": ["x", "y"], "null_value": 0,
                   "expect": "greater"},
                  {"id": "r", "kind": "correlation", "columns": ["x", "s"], "null_value": 0, "expect": "greater"}]}


def _write(tmp_path, plan) -> Path:
    path = tmp_path / "plan.yaml"
    path.write_text(yaml.safe_dump(plan))
    return path


def test_the_shipped_plans_load():
    for path in sorted((REPO / "docs/plans").glob("*.yaml")):
        assert load_plan(path)["tests"], path


@pytest.mark.parametrize("change, says", [
    (lambda p: p["tests"][0].update(kind="median"), "tests[0]: kind: one of"),
    (lambda p: p["tests"][1].update(columns=["x"]), "tests[1]: columns: 2 column name(s)"),
    (lambda p: p["tests"][2].update(null_value=0.3), "tests[2]: null: a correlation"),
    (lambda p: p["tests"][0].update(expect="bigger"), "tests[0]: expect: one of"),
    (lambda p: p.update(famly="holm"), "unknown key 'famly'"),
    (lambda p: p.pop("alpha"), "missing key 'alpha'"),
    (lambda p: p["tests"].append(dict(p["tests"][0])), "each id once"),
])
def test_a_bad_plan_is_refused_naming_the_file_and_the_key(tmp_path, change, says):
    plan = json.loads(json.dumps(PLAN))
    change(plan)
    path = _write(tmp_path, plan)
    with pytest.raises(PlanError, match=str(path)) as e:
        load_plan(path)
    assert says in str(e.value)


def _frame(rng, n=10):
    x = rng.normal(0.7, 0.1, n)
    return pd.DataFrame({"s": rng.normal(0.66, 0.2, n), "x": x, "y": x - rng.normal(0.3, 0.1, n)})


def test_confirmatory_tests_are_scipy_s_with_holm_over_the_plan():
    frame = _frame(np.random.default_rng(0))
    out = evaluate(PLAN, frame, confirmatory=True).set_index("test")
    t = stats.ttest_1samp(frame["x"] - frame["y"], 0)
    assert out.loc["gap", "p_value"] == pytest.approx(t.pvalue)
    assert (out.loc["gap", "ci_low"], out.loc["gap", "ci_high"]) == pytest.approx(tuple(t.confidence_interval()))
    r = stats.pearsonr(frame["x"], frame["s"])
    assert out.loc["r", "estimate"] == pytest.approx(r.statistic)
    p = np.sort(out["p_value"].to_numpy())
    holm = np.maximum.accumulate(np.minimum(1, (3 - np.arange(3)) * p))
    assert np.sort(out["p_holm"].to_numpy()) == pytest.approx(holm)
    assert out.loc["gap", "verdict"] == "holds" and (out["status"] == "confirmatory").all()


def test_a_test_on_the_wrong_side_fails_and_exploratory_ones_carry_no_verdict():
    frame = _frame(np.random.default_rng(1))
    frame["y"] = frame["x"] + 0.3 + np.random.default_rng(2).normal(0, 0.05, len(frame))
    confirmed = evaluate(PLAN, frame, confirmatory=True).set_index("test")
    assert confirmed.loc["gap", "verdict"] == "fails"
    looked = evaluate(PLAN, frame, confirmatory=False)
    assert (looked["verdict"] == "").all() and looked["p_holm"].isna().all()
    assert (looked["status"] == "exploratory").all() and looked["ci_low"].notna().all()


def test_a_column_the_table_lacks_is_named():
    with pytest.raises(PlanError, match="column 'y'"):
        evaluate(PLAN, pd.DataFrame({"s": [0.1, 0.2], "x": [0.1, 0.3]}), confirmatory=True)


# --- paper_row.py --plan: fixed before the first job (git, so a process test) ---------------

def _repo(tmp_path) -> Path:
    repo = tmp_path / "repo"
    (repo / "docs/plans").mkdir(parents=True)
    plan = repo / "docs/plans/p.yaml"
    plan.write_text(yaml.safe_dump(PLAN))
    for cmd in (["init", "-q"], ["add", "."], ["-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "plan"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True)
    return repo


@pytest.mark.process
def test_a_row_fixes_its_plan_before_its_first_job_and_refuses_a_changed_one(tmp_path):
    row_plan = rows_module("row_plan")
    repo, work = _repo(tmp_path), tmp_path / "work"
    work.mkdir()
    plan = repo / "docs/plans/p.yaml"
    record = row_plan.fix_plan(work, plan, "sms_spam", repo)
    assert record["path"] == "docs/plans/p.yaml" and len(record["commit"]) == 40
    assert json.loads((work / "plan.json").read_text()) == record
    (work / "row_invocations.jsonl").write_text("{}\n")
    assert row_plan.fix_plan(work, None, "sms_spam", repo) == record  # a resume checks the file as it is
    plan.write_text(plan.read_text() + "# looked, then edited\n")
    with pytest.raises(row_plan.PlanRefused, match="differs from its committed version"):
        row_plan.fix_plan(work, plan, "sms_spam", repo)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qam", "edit"], cwd=repo, check=True)
    with pytest.raises(row_plan.PlanRefused, match="cannot be confirmatory"):
        row_plan.fix_plan(work, plan, "sms_spam", repo)


@pytest.mark.process
def test_a_plan_is_refused_after_the_row_ran_without_one_or_for_another_dataset(tmp_path):
    row_plan = rows_module("row_plan")
    repo, work = _repo(tmp_path), tmp_path / "work"
    work.mkdir()
    with pytest.raises(row_plan.PlanRefused, match="dataset 'sms_spam', but the row is 'sst'"):
        row_plan.fix_plan(work, repo / "docs/plans/p.yaml", "sst", repo)
    (work / "row_invocations.jsonl").write_text("{}\n")
    with pytest.raises(row_plan.PlanRefused, match="already ran without a plan"):
        row_plan.fix_plan(work, repo / "docs/plans/p.yaml", "sms_spam", repo)
    assert not (work / "plan.json").exists()
    uncommitted = repo / "docs/plans/q.yaml"
    uncommitted.write_text(yaml.safe_dump(PLAN))
    with pytest.raises(row_plan.PlanRefused, match="not committed"):
        row_plan.fix_plan(tmp_path / "work2", uncommitted, "sms_spam", repo)


@pytest.mark.process
def test_a_row_can_be_run_for_several_plans_and_refuses_one_added_or_dropped_later(tmp_path):
    """A block read by two plans (20 Newsgroups' header question and its Table 10) records both
    before its first job; a resume checks both, in any order, and one with a plan dropped is
    refused."""
    row_plan = rows_module("row_plan")
    repo, work = _repo(tmp_path), tmp_path / "work"
    (repo / "docs/plans/q.yaml").write_text(yaml.safe_dump({**PLAN, "name": "q"}))
    subprocess.run(["git", "add", "docs/plans/q.yaml"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "q"], cwd=repo, check=True)
    work.mkdir()
    plans = [repo / "docs/plans/p.yaml", repo / "docs/plans/q.yaml"]
    record = row_plan.fix_plan(work, plans, "sms_spam", repo)
    assert [r["path"] for r in record] == ["docs/plans/p.yaml", "docs/plans/q.yaml"]
    assert row_plan.records(json.loads((work / "plan.json").read_text())) == record
    (work / "row_invocations.jsonl").write_text("{}\n")
    assert row_plan.fix_plan(work, None, "sms_spam", repo) == record  # a resume checks both as they are
    assert row_plan.fix_plan(work, plans[::-1], "sms_spam", repo) == record  # order is not a change
    with pytest.raises(row_plan.PlanRefused, match="added, or dropped"):
        row_plan.fix_plan(work, plans[:1], "sms_spam", repo)


# --- paper_rows/plan_tests.py: which kept folders a plan confirms on -------------------------

def _fake_row(tmp_path, start: str, digest: str | None = None, block: str = "parts11-20") -> Path:
    """A row of two kept folders built from the kept SMS spam tables: part1 under no plan, and a
    block (``block``'s tables) whose run.json names the shipped plan and starts at ``start``."""
    import shutil
    from attnlearn.agreement.plans import sha256
    row, kept = tmp_path / "sms_spam", REPO / "reproduction/rows/sms_spam"
    for name in ("part1", block):
        shutil.copytree(kept / name, row / name)
    run = json.loads((row / block / "run.json").read_text())
    plan = REPO / "docs/plans/sms_spam_boundary.yaml"
    run["plan"] = {"path": "docs/plans/sms_spam_boundary.yaml", "sha256": digest or sha256(plan)}
    for invocation in run["invocations"]:
        invocation["start"] = start
    (row / block / "run.json").write_text(json.dumps(run))
    return row


@pytest.mark.process
@pytest.mark.parametrize("start, digest, expected", [
    ("2030-01-01T00:00:00+00:00", None, "confirmatory"),
    ("2026-11-01T00:00:00+00:00", None, "exploratory (the plan was not committed before"),
    ("2030-01-01T00:00:00+00:00", "0" * 64, "exploratory (the plan changed since"),
])
def test_a_block_is_confirmatory_only_when_its_plan_was_committed_before_it_ran(tmp_path, start, digest, expected):
    plan_tests = rows_module("plan_tests")
    row = _fake_row(tmp_path, start, digest)
    text = "\n".join(plan_tests.plan_markdown(REPO / "docs/plans/sms_spam_boundary.yaml", row))
    assert f"- `parts11-20`: {expected}" in text and "- `part1`: exploratory (trained under no plan)" in text
    confirmed = expected == "confirmatory"
    # the confirmatory reading has verdicts from the block's replicates alone; the part's is exploratory
    assert ("Confirmatory, over the 10 independent replicates of `parts11-20`" in text) == confirmed
    assert any(v in text for v in ("| holds |", "| undetermined |", "| fails |")) == confirmed
    assert "exploratory: no verdict" in text


@pytest.mark.process
def test_confirmatory_replicates_short_of_the_plans_count_are_an_interim_look_without_verdict(tmp_path):
    """The plan reads its verdict once, over the replicates it names (sms_spam_boundary.yaml:
    parts11-20, ten): seven confirmatory replicates print their estimates and p, no Holm p and
    no verdict, however small p is."""
    plan_tests = rows_module("plan_tests")
    row = _fake_row(tmp_path, "2030-01-01T00:00:00+00:00", block="parts4-10")
    text = "\n".join(plan_tests.plan_markdown(REPO / "docs/plans/sms_spam_boundary.yaml", row))
    assert "- `parts4-10`: confirmatory" in text
    assert "Interim look (7 of the plan's 10 replicates; its verdict is read once, over all 10" in text
    assert text.count("| - (interim) | interim: no verdict |") == 4
    assert not any(v in text for v in ("| holds |", "| undetermined |", "| fails |"))


@pytest.mark.process
@pytest.mark.parametrize("start, expected", [("2030-01-01T00:00:00+00:00", "holds"), ("2026-11-01T00:00:00+00:00", None)])
def test_a_table10_plan_reads_each_replicate_s_own_frozen_run(tmp_path, start, expected):
    """A plan on table10_replicates (docs/plans/sst_table10.yaml) reads the frozen runs a block
    trained one per replicate; a part's one frozen run joins only the exploratory reading."""
    import shutil
    from attnlearn.agreement.plans import sha256
    plan_tests = rows_module("plan_tests")
    plan, kept, row = REPO / "docs/plans/sst_table10.yaml", REPO / "reproduction/rows/sms_spam", tmp_path / "row"
    for name in ("part1", "parts11-20"):  # SMS spam's ten frozen runs read -35 points, far below 0
        shutil.copytree(kept / name, row / name)
    run = json.loads((row / "parts11-20/run.json").read_text())
    # a block run for two plans (run.json keeps a list): each is read as if it were the only one
    run["plan"] = [{"path": "docs/plans/sms_spam_boundary.yaml", "sha256": "0" * 64},
                   {"path": "docs/plans/sst_table10.yaml", "sha256": sha256(plan)}]
    run["invocations"] = [{**i, "start": start} for i in run["invocations"]]
    (row / "parts11-20/run.json").write_text(json.dumps(run))
    text = "\n".join(plan_tests.plan_markdown(plan, row))
    assert "its one test is a Holm family of one" in text
    if expected:
        assert "Confirmatory, over the 10 independent replicates of `parts11-20`" in text
        assert text.count(f"| {expected} |") == 1
        assert "Exploratory, over the 1 independent replicates of `part1`" in text
        assert "(one replicate, no interval) | - |" in text
    else:  # trained before the plan was committed: every frozen run is exploratory
        assert "Confirmatory: no kept folder." in text
        assert "over the 11 independent replicates of `part1`, `parts11-20`" in text


@pytest.mark.process
def test_the_header_plan_reads_the_kept_header_tables_and_leaves_out_folders_without_one(tmp_path):
    """docs/plans/newsgroups_header.yaml reads each block's kept header table (header_rows.py
    --keep): parts 11-13 (trained under it) as an interim look of 3 of its 10, parts 4-10 (kept
    before it) exploratory, and part 1, whose runs were gone before any header table, not at all."""
    import shutil
    plan_tests = rows_module("plan_tests")
    kept, row = REPO / "reproduction/rows/newsgroups", tmp_path / "newsgroups"
    for name in ("part1", "parts4-10", "parts11-13"):
        shutil.copytree(kept / name, row / name)
    text = "\n".join(plan_tests.plan_markdown(REPO / "docs/plans/newsgroups_header.yaml", row))
    assert "- `parts11-13`: confirmatory" in text and "- `part1`: exploratory (trained under no plan)" in text
    assert "Interim look (3 of the plan's 10 replicates" in text
    assert text.count("| - (interim) | interim: no verdict |") == 3
    assert "Exploratory, over the 7 independent replicates of `parts4-10`:" in text
