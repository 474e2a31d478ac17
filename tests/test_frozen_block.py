"""paper_row.py --parts FIRST-LAST --variants frozen: a block whose every replicate has a frozen
run of its own (Table 10 per replicate, with an interval), added to a finished block without
training its A, U or proxy runs again."""

import json
import os
import re

import pandas as pd
import pytest
import yaml

from conftest import REPO, rows_module

TINY = REPO / "tests" / "configs" / "tiny.yaml"


@pytest.fixture(scope="module")
def paper_row():
    return rows_module("paper_row")


def _resolved(paper_row, name: str) -> dict:
    shipped = yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text())
    return paper_row.resolved_entry(shipped, name)


def test_a_blocks_frozen_runs_are_fresh_seeds_one_per_replicate_and_move_no_other_run(paper_row):
    """SMS spam's block 11-20 (paper_cpu.yaml: n = 3 replicates, frozen seed 1, dealt to part 1):
    frozen-s9 to s18, replicate R's the largest frozen seed + R - n, as the block's other lists;
    every other list is the block's without them; a variant a block cannot add is refused."""
    row = _resolved(paper_row, "sms_spam")
    plain = paper_row.block_entry(row, 11, 20)
    frozen = paper_row.block_entry(row, 11, 20, ("frozen",))
    assert frozen["runs"]["frozen"] == list(range(9, 19)) and plain["runs"]["frozen"] == []
    assert {k: v for k, v in frozen["runs"].items() if k != "frozen"} == {
        k: v for k, v in plain["runs"].items() if k != "frozen"}
    assert frozen["proxy"] == plain["proxy"]
    assert paper_row.block_entry(row, 4, 10, ("frozen",))["runs"]["frozen"] == list(range(2, 9))  # before 11-20's
    no_frozen = {**row, "runs": {**row["runs"], "frozen": []}}
    assert paper_row.block_entry(no_frozen, 4, 5, ("frozen",))["runs"]["frozen"] == [1, 2]
    with pytest.raises(ValueError, match="--variants tanhmax: a block adds only frozen"):
        paper_row.block_entry(row, 11, 20, ("tanhmax",))


def test_variants_without_a_block_are_refused_before_anything_is_written(paper_row, tmp_path):
    with pytest.raises(SystemExit):
        paper_row.main(["sms_spam", "-d", str(tmp_path / "p"), "--part", "2", "--variants", "frozen", "-n"])
    assert not (tmp_path / "p").exists()


def test_keep_runs_touches_only_the_frozen_runs_already_trained(paper_row, tmp_path):
    """--keep-runs with --variants touches the block as it was trained: a frozen run with no
    published train log is left to the row's command (Snakemake's touch cannot make it)."""
    config = {"datasets": {"d": {"runs": {"standard": [4, 5], "frozen": [2, 3]}}}}
    (tmp_path / "results/runs/d/frozen-s3").mkdir(parents=True)
    (tmp_path / "results/runs/d/frozen-s3/train_log.parquet").write_bytes(b"")
    touched = paper_row.trained_only(config, "d", tmp_path, ["frozen"])
    assert touched["datasets"]["d"]["runs"] == {"standard": [4, 5], "frozen": [3]}
    assert config["datasets"]["d"]["runs"]["frozen"] == [2, 3]  # the row's own config untouched


def planned(output: str) -> list[tuple[str, str]]:
    """(rule, run wildcard or '') of every job in a dry run's output."""
    jobs = []
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", output):
        rule = re.match(r"(?:local)?rule (\w+):", block)
        if rule:
            run = re.search(r"wildcards: .*?run=([\w-]+)", block)
            jobs.append((rule.group(1), run.group(1) if run else ""))
    return jobs


@pytest.mark.workflow
def test_frozen_runs_added_to_a_finished_block_train_alone_and_give_table10_per_replicate(
        paper_row, tmp_path, monkeypatch, capfd):
    """tiny_cls's block 4-5 (tiny.yaml: n = 3), run, then run again with --variants frozen: the
    second invocation plans only the two frozen trainings, their probes and the jobs that read
    the agreement (no A, U, proxy or data job: their params are unchanged); on a later code
    (every output older than the code) --keep-runs keeps the block's runs and trains the frozen
    ones. Table 2 per replicate is unchanged, Table 10 has a row per replicate (replicate 1:
    table10.parquet's), and appendix_rows.py pools the two with an interval. The same
    invocation's --train-split probes every kept run on training examples (no run retrained) and
    keeps the training-split table per replicate, which appendix_rows.py pools."""
    monkeypatch.setattr(paper_row, "local_config", lambda shipped, url: shipped)  # generated data: no copy
    tiny = yaml.safe_load(TINY.read_text())
    config = tmp_path / "tiny_cls.yaml"
    config.write_text(yaml.safe_dump({**{k: v for k, v in tiny.items() if k != "experiments"},
                                      "tables": {"train_split": False},
                                      "datasets": {"tiny_cls": tiny["datasets"]["tiny_cls"]}}))
    work, out = tmp_path / "w", tmp_path / "rows"
    argv = ["tiny_cls", "-d", str(work), "--config", str(config), "--out", str(out), "--parts", "4-5"]
    assert paper_row.main(argv) == 0
    kept = out / "tiny_cls/parts4-5/tables"
    table2 = pd.read_parquet(kept / "table2_replicates.parquet")
    assert pd.read_parquet(kept / "table10_replicates.parquet").empty  # no frozen run yet

    capfd.readouterr()
    assert paper_row.main([*argv, "--variants", "frozen", "-n"]) == 0
    jobs = planned("".join(capfd.readouterr()))
    assert sorted(run for rule, run in jobs if rule in ("train", "probe")) == ["frozen-s2"] * 2 + ["frozen-s3"] * 2
    assert {rule for rule, _ in jobs} - {"train", "probe"} == {"agreement", "readings", "tables", "figures", "examples"}

    old = 1_000_000_000  # 2001: every output older than the code, as after checking out a later commit
    for path in (work / "results").rglob("*"):
        os.utime(path, (old, old))
    benchmarks = {p: p.read_text() for rule in ("train", "probe")
                  for p in (work / "results/benchmarks" / rule).rglob("*.tsv")}
    capfd.readouterr()
    assert paper_row.main([*argv, "--variants", "frozen", "-n"]) == 0  # without --keep-runs: everything again
    assert ("train", "standard-s4") in planned("".join(capfd.readouterr()))
    assert paper_row.main([*argv, "--variants", "frozen", "--keep-runs", "--train-split"]) == 0
    # touched, not rerun: the checkpoints as they were written (a retraining rewrites them) and the
    # benchmarks' timings; the frozen runs alone were trained and probed
    checkpoints = sorted(p.parent.parent.name for p in (work / "results/runs/tiny_cls").glob("*/checkpoints/*.pt")
                         if p.stat().st_mtime > old)
    assert set(checkpoints) == {"frozen-s2", "frozen-s3"}
    assert {p: p.read_text() for p in benchmarks} == benchmarks
    for rule in ("train", "probe"):
        new = sorted(p.stem for p in (work / "results/benchmarks" / rule / "tiny_cls").iterdir() if p not in benchmarks)
        assert new == ["frozen-s2", "frozen-s3"], rule

    pd.testing.assert_frame_equal(pd.read_parquet(kept / "table2_replicates.parquet"), table2)
    per = pd.read_parquet(kept / "table10_replicates.parquet")
    assert per[["replicate", "a_run", "u_run", "f_run"]].values.tolist() == [
        [1, "standard-s4", "uniform-s4", "frozen-s2"], [2, "standard-s5", "uniform-s5", "frozen-s3"]]
    assert per.drop(columns=["replicate", "a_run", "u_run", "f_run"]).notna().all().all()
    first = pd.read_parquet(kept / "table10.parquet").iloc[0]
    assert per.iloc[0]["agr_alpha_frozen_alpha_star"] == first["agr_alpha_frozen_alpha_star"]
    assert per.iloc[0]["agr_xi_uniform_alpha_star"] == first["agr_xi_uniform_alpha_star"]
    record = json.loads((kept.parent / "run.json").read_text())
    assert record["config"]["runs"]["frozen"] == [2, 3] and len(record["invocations"]) == 2
    assert record["invocations"][-1]["keep_runs"] is True and record["tables"]["train_split"] is True

    probed = sorted(p.stem for p in (work / "results/benchmarks/probe_train/tiny_cls").iterdir())
    assert probed == ["frozen-s2", "frozen-s3", "standard-s4", "standard-s5", "uniform-s4", "uniform-s5"]
    train = pd.read_parquet(kept / "table2_train_replicates.parquet")
    assert train["replicate"].tolist() == [1, 2]
    assert train.iloc[0]["random_baseline"] == pd.read_parquet(kept / "table2_train.parquet").iloc[0]["random_baseline"]

    # a later re-table (every output older than the code again) reprobes no training split
    for path in (work / "results").rglob("*"):
        os.utime(path, (old, old))
    timed = {p: p.read_text() for p in (work / "results/benchmarks/probe_train/tiny_cls").glob("*.tsv")}
    assert paper_row.main([*argv, "--variants", "frozen", "--keep-runs", "--train-split"]) == 0
    assert {p: p.read_text() for p in timed} == timed and len(timed) == 6  # touched, not probed again
    assert sorted(p.name for p in (kept / "table2_train_replicates.parquet").parent.glob("table2_train*")) == [
        "table2_train.parquet", "table2_train_replicates.parquet"]

    appendix = rows_module("appendix_rows")
    ours = next(line for line in appendix.table10_lines([kept]) if line.startswith("| tiny_cls, ours"))
    assert ours.count("(n = 2)") == 3  # both columns and the paired difference
    train_row = next(line for line in appendix.train_lines([kept]) if line.startswith("| tiny_cls"))
    assert "(n = 2)" in train_row


def test_keep_runs_touches_the_training_split_probes_once_they_are_all_made(paper_row, tmp_path):
    """A re-table of SST's block at a later commit (--keep-runs --train-split) reprobed every
    run on training examples, 35 minutes, as the touch named the validation probes alone; the
    training split's probes are touched once every one exists (a first --train-split makes them)."""
    config = {"tables": {"train_split": True},
              "datasets": {"d": {"runs": {"standard": [4], "frozen": []}, "proxy": {"seeds": [3]}}}}
    (tmp_path / "results/probes/d").mkdir(parents=True)
    (tmp_path / "results/probes/d/standard-s4.parquet").write_bytes(b"")
    folder = tmp_path / "results/train_split/probes/d"
    folder.mkdir(parents=True)
    (folder / "standard-s4.parquet").write_bytes(b"")
    assert paper_row.touched_rules(config, "d", tmp_path) == paper_row.RUN_RULES  # proxy-s3 not probed yet
    (folder / "proxy-s3.parquet").write_bytes(b"")
    assert paper_row.touched_rules(config, "d", tmp_path) == (*paper_row.RUN_RULES, "probe_train", "proxy_probe_train")
    assert paper_row.touched_rules({**config, "tables": {}}, "d", tmp_path) == paper_row.RUN_RULES


def test_keep_runs_on_a_row_trained_without_its_probes_touches_the_trainings_alone(paper_row, tmp_path):
    """A row trained with --until train proxy (Multi30k at 20 epochs: trained on one commit,
    probed on a later one) has no probe yet: touching the probe rule stopped inside Snakemake's
    touch, so the probes are touched only once every run's exists, and made by the row otherwise."""
    config = {"datasets": {"d": {"runs": {"standard": [1], "uniform": [1]}, "proxy": {"seeds": [1]}}}}
    (tmp_path / "results/probes/d").mkdir(parents=True)
    (tmp_path / "results/probes/d/proxy-s1.parquet").write_bytes(b"")  # the proxy rule's own probe
    assert paper_row.touched_rules(config, "d", tmp_path) == ("train", "proxy")
    (tmp_path / "results/probes/d/standard-s1.parquet").write_bytes(b"")
    assert paper_row.touched_rules(config, "d", tmp_path) == ("train", "proxy")  # uniform-s1 not probed yet
    (tmp_path / "results/probes/d/uniform-s1.parquet").write_bytes(b"")
    assert paper_row.touched_rules(config, "d", tmp_path) == paper_row.RUN_RULES


def test_keep_runs_on_a_row_that_never_ran_is_refused_before_anything_is_written(paper_row, tmp_path, capsys):
    """A fault met starting SST's block with --keep-runs: Snakemake's touch failed with a
    traceback after local.yaml and plan.json were written into the fresh directory."""
    work = tmp_path / "fresh"
    with pytest.raises(SystemExit):
        paper_row.main(["sst", "-d", str(work), "--parts", "4-8", "--variants", "frozen", "--keep-runs"])
    err = capsys.readouterr().err
    assert "--keep-runs:" in err and "no earlier invocation" in err and "Start the row without it" in err
    assert not work.exists()
