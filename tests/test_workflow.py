"""The Snakemake workflow as a user runs it: lint, dry runs, a tiny end-to-end
run, config errors, and what reruns after a change."""

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from attnlearn.agreement.tables import TABLE2_COLUMNS
from browser import browser_page
from conftest import rows_module, script_module
from examples_checks import assert_values_are_the_probes, check_shown_view, page_json

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
SHIPPED = sorted([*REPO.glob("config/*.yaml"), *REPO.glob("tests/configs/*.yaml")])
SHIPPED = [p for p in SHIPPED if p.name != "schema.yaml"]


def snakemake(*args, cwd, check=True):
    proc = subprocess.run([*SNAKEMAKE, "-d", str(cwd), *map(str, args)], capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(map(str, args))} failed:\n{proc.stdout[-4000:]}\n"
                             f"{proc.stderr[-4000:]}")
    return proc


def planned_jobs(output: str) -> list[tuple[str, str]]:
    """(rule, dataset wildcard or '') of every job in a dry run's output."""
    jobs = []
    for block in re.split(r"\n(?=\[.*\]\n(?:local)?rule )|\n(?=(?:local)?rule )", output):
        rule = re.search(r"^(?:\[.*\]\n)?(?:local)?rule (\w+):", block, re.M)
        if rule:
            ds = re.search(r"wildcards: .*?dataset=([\w-]+)", block)
            jobs.append((rule.group(1), ds.group(1) if ds else ""))
    return jobs


@pytest.mark.workflow
def test_lint_is_clean(tmp_path):
    proc = snakemake("--lint", cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.workflow
@pytest.mark.parametrize("config", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_config_dry_runs(config, tmp_path):
    if config.name == "own.yaml":  # docs/own_data.md's example: its files, as the page makes them
        subprocess.run([sys.executable, REPO / "tests/make_own_data.py", tmp_path / "my_data"], check=True)
    snakemake("-n", "--configfile", config, cwd=tmp_path)


@pytest.mark.workflow
def test_default_config_dry_runs_without_configfile(tmp_path):
    out = snakemake("-n", cwd=tmp_path).stdout
    assert {ds for _, ds in planned_jobs(out) if ds} == {"synthetic_mt", "synthetic_tf", "synthetic_mh", "synthetic_cls"}


@pytest.mark.workflow
def test_configfile_replaces_the_default(tiny_plan):
    out = tiny_plan
    assert {ds for _, ds in planned_jobs(out) if ds} == {"tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls"}


@pytest.mark.workflow
def test_table2_target_plans_only_its_ancestors(tmp_path):
    out = snakemake("-n", "results/tables/table2.parquet", "--configfile", TINY, cwd=tmp_path).stdout
    rules = {r for r, _ in planned_jobs(out)}
    assert "figures" not in rules and "all" not in rules
    assert {"train", "probe", "agreement", "tables"} <= rules
    named = snakemake("-n", "table2", "--configfile", TINY, cwd=tmp_path).stdout
    assert {r for r, _ in planned_jobs(named)} - {"table2"} == rules


@pytest.mark.parametrize("edit, expected", [
    (lambda c: c["datasets"]["tiny_mt"]["model"].update(hidden=12), "datasets.tiny_mt.model"),
    (lambda c: c["datasets"]["tiny_cls"]["model"].update(hiden=12), "hiden"),
    (lambda c: c["datasets"]["tiny_cls"]["train"].update(lr=-1), "datasets.tiny_cls.train.lr"),
    (lambda c: c["datasets"]["tiny_mt"]["source"]["options"].update(colour=1), "colour"),
    (lambda c: c.update(device="tpu"), "device"),
    (lambda c: c["datasets"]["tiny_mt"].update(probe={"measures": ["alpha", "nope"]}), "nope"),
    (lambda c: c["datasets"]["tiny_cls"]["model"].update(heads=2), "datasets.tiny_cls.model: ['heads']"),
    # what `--config allow_unverified_downloads=true` gives: Snakemake reads `true` as a string
    (lambda c: c.update(allow_unverified_downloads="true"), "write --config KEY=True"),
    (lambda c: c["datasets"]["tiny_mt"]["train"].update(steps=None, epochs=None),
     "datasets.tiny_mt.train: neither steps nor epochs is set"),
    (lambda c: c.update(only=["tiny_cls", "sst"]), "only: names ['sst'], which are not under 'datasets'"),
])
@pytest.mark.workflow
def test_bad_config_is_refused_naming_the_key(edit, expected, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    edit(config)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "--configfile", path, cwd=tmp_path, check=False)
    if expected == "datasets.tiny_mt.model":  # a valid change: accepted
        assert proc.returncode == 0, proc.stderr
        return
    assert proc.returncode != 0
    assert expected in proc.stdout + proc.stderr
    assert f"invalid config ({path})" in proc.stdout + proc.stderr  # the file is named


@pytest.mark.workflow
def test_checkpoint_steps_beyond_the_run_are_reported(tmp_path):
    """A warning, not an error: the task defaults' schedule (the paper's) is longer than a short run."""
    config = yaml.safe_load(TINY.read_text())
    config["datasets"]["tiny_cls"]["train"].update(steps=8)  # checkpoints at 0, 5, 10
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "--configfile", path, cwd=tmp_path)
    assert ("WARNING: datasets.tiny_cls.train.checkpoints.steps: [10] are beyond the run's 8 steps and are not "
            "saved") in proc.stderr


@pytest.mark.workflow
@pytest.mark.parametrize("text, expected", [
    ("", ": the config file is empty"),
    ("# only a comment\n", ": the config file is empty"),
    ("device: cpu\ndatasets:\n  a: [1, 2\n  b: 3\n", ", line 4, column 4: not valid YAML"),
    ("- a\n- b\n", ": the config's top level must be keys"),
])
def test_unreadable_config_names_file_line_and_column(text, expected, tmp_path):
    """The built-in default (read in the Snakefile, checked first) and any file through
    `python -m attnlearn.config`; Snakemake reads a --configfile itself, before the workflow,
    and its message names no line (docs/faults.md)."""
    project = tmp_path / "project"  # a copy whose built-in config/config.yaml is broken
    for sub in ("rules", "workflow", "config", "report", "envs", "profiles"):
        shutil.copytree(REPO / sub, project / sub)
    shutil.copy(REPO / "Snakefile", project)
    (project / "config" / "config.yaml").write_text(text)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(project / "Snakefile"), "-d", str(tmp_path),
                           "-n"], capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"{project / 'config' / 'config.yaml'}{expected}" in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    (tmp_path / "mine.yaml").write_text(text)
    check = subprocess.run([sys.executable, "-m", "attnlearn.config", str(tmp_path / "mine.yaml")],
                           capture_output=True, text=True)
    assert check.returncode == 1 and f"{tmp_path / 'mine.yaml'}{expected}" in check.stderr


@pytest.mark.process
def test_config_checker_accepts_the_shipped_configs(tmp_path):
    # tests/configs/own.yaml reads files a user makes first (docs/own_data.md): made here, in the
    # directory the checker reads relative paths from
    subprocess.run([sys.executable, REPO / "tests/make_own_data.py", tmp_path / "my_data"], check=True)
    proc = subprocess.run([sys.executable, "-m", "attnlearn.config", *map(str, SHIPPED)], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count(": valid (") == len(SHIPPED)


@pytest.fixture(scope="module")
def tiny_plan(tmp_path_factory) -> str:
    """The tiny config's dry run in an empty directory, made once for the tests that read it."""
    return snakemake("-n", "--configfile", TINY, cwd=tmp_path_factory.mktemp("plan")).stdout


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    work = tmp_path_factory.mktemp("tiny")
    proc = snakemake("--cores", "2", "--configfile", TINY, cwd=work)
    (work / "console.txt").write_text(proc.stdout + proc.stderr)  # what a user watched
    return work


@pytest.mark.workflow
def test_the_console_says_each_job_once_with_progress_and_time_left(tiny_run):
    """The profile's console (--logger attnlearn): one line per finished job naming what it
    made, the run's progress and an estimate of the time left on it; no per-job blocks of
    inputs, no "Shell command: None"."""
    console = (tiny_run / "console.txt").read_text().splitlines()
    done = [line for line in console if re.match(r"\d\d:\d\d:\d\d  done ", line)]
    total = int(re.search(r"(\d+) of (\d+) jobs \(100%\)", done[-1])[2])
    assert len(done) == total, done[-3:]
    trained = [line for line in done if " done train (tiny_cls, standard-s1) -> results/runs/tiny_cls/standard-s1/" in line]
    assert len(trained) == 1, done
    assert all("left" in line for line in done[1:-1]), [line for line in done[1:-1] if "left" not in line]
    assert not any("Shell command" in line or line.startswith("    input:") for line in console)
    stats = [line for line in console if re.match(r"^(\w+\s+\d+|-+\s+-+|job\s+count)$", line)]  # the job stats table
    # a line per dataset whose runs did not learn, said at the end (test_runs_that_did_not_learn_...)
    other = [line for line in console if line not in done and line not in stats and not line.startswith("WARNING: ")]
    assert len(other) < 50, other  # Snakemake's header, the trainings' step lines, the last words
    assert not [line for line in console if len(line) >= 400], [line[:600] for line in console if len(line) >= 400]


@pytest.mark.workflow
def test_tiny_end_to_end_builds_tables_and_figures(tiny_run):
    table2 = pd.read_parquet(tiny_run / "results/tables/table2.parquet")
    assert list(table2.columns) == TABLE2_COLUMNS
    assert set(table2["dataset"]) == {"tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls"}
    values = table2[[c for c in TABLE2_COLUMNS if c.startswith("agr_") or c == "random_baseline"]]
    assert ((values >= 0) & (values <= 1)).all().all()
    agr = pd.read_parquet(tiny_run / "results/tables/agreement.parquet")
    assert {"dataset", "a_measure", "a_run", "a_step", "b_measure", "b_run", "b_step", "metric", "value",
            "baseline"} <= set(agr.columns)
    gold = pd.read_parquet(tiny_run / "results/tables/gold_agreement.parquet")
    assert set(gold["measure"]) == {"alpha_star", "norm_star", "xi_uniform", "xi_proxy", "count_table", "ibm1"}
    for ds in ("tiny_mt", "tiny_cls"):
        for fig in ("contextualized", "agreement_curves", "heatmap"):
            assert (tiny_run / f"results/figures/{ds}/{fig}.png").stat().st_size > 10_000
    kendall = pd.read_parquet(tiny_run / "results/tables/table2_kendall.parquet")
    assert list(kendall.columns) == TABLE2_COLUMNS
    # Kendall's tau per replicate (appendix A.4 pooled over replicates): replicate 1 is the table's row
    per_rep = pd.read_parquet(tiny_run / "results/tables/table2_kendall_replicates.parquet")
    first = per_rep[per_rep["replicate"] == 1].set_index("dataset").loc[kendall["dataset"]]
    reps = pd.read_parquet(tiny_run / "results/tables/table2_replicates.parquet")
    assert len(per_rep) == len(reps) and (per_rep["random_baseline"] == 0).all()
    for column in ("agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "best_perf"):
        assert first[column].to_numpy() == pytest.approx(kendall[column].to_numpy(), nan_ok=True), column
    table10 = pd.read_parquet(tiny_run / "results/tables/table10.parquet")
    assert set(table10["dataset"]) == {"tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls"}
    assert "## Table 2" in (tiny_run / "results/tables/tables.md").read_text()
    # appendix variants: BLEU (translation only), training split, Table 11 (classification), seeds
    bleu = pd.read_parquet(tiny_run / "results/tables/table2_bleu.parquet")
    assert sorted(bleu["dataset"]) == ["tiny_mh", "tiny_mt", "tiny_tf"] and set(bleu["perf_metric"]) == {"bleu"}
    assert bleu["best_perf"].between(0, 1).all()
    train = pd.read_parquet(tiny_run / "results/tables/table2_train.parquet")
    assert set(train["dataset"]) == set(table2["dataset"]) and list(train.columns) == TABLE2_COLUMNS
    # the training split per replicate (appendix A.4 pooled over replicates): replicate 1 is the table's row
    train_reps = pd.read_parquet(tiny_run / "results/tables/table2_train_replicates.parquet")
    assert len(train_reps) == len(reps)
    first = train_reps[train_reps["replicate"] == 1].set_index("dataset").loc[train["dataset"]]
    for column in ("agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "random_baseline",
                   "best_perf"):
        assert first[column].to_numpy() == pytest.approx(train[column].to_numpy(), nan_ok=True), column
    table11 = pd.read_parquet(tiny_run / "results/tables/table11.parquet")
    assert list(table11["dataset"]) == ["tiny_cls"] and table11.notna().all().all()
    # Table 11 per replicate: the one logistic regression against every replicate's uniform run
    table11_reps = pd.read_parquet(tiny_run / "results/tables/table11_replicates.parquet")
    assert len(table11_reps) == (reps["dataset"] == "tiny_cls").sum() and table11_reps.notna().all().all()
    for column in ("agr_xi_proxy_xi_uniform", "agr_xi_logreg_xi_uniform"):
        assert table11_reps.iloc[0][column] == pytest.approx(table11.iloc[0][column]), column
    seeds = pd.read_parquet(tiny_run / "results/tables/seeds.parquet").set_index(["dataset", "quantity"])
    assert seeds.loc[("tiny_cls", "best_perf_standard"), "n_runs"] == 3
    assert seeds.loc[("tiny_cls", "agr_alpha_xi_standard"), "n_runs"] == 2
    agr_norm = agr[agr["a_measure"] == "norm"]
    assert {"alpha", "xi", "gold"} <= set(agr_norm["b_measure"]) and set(agr_norm["dataset"]) == set(table2["dataset"])
    counts = pd.read_parquet(tiny_run / "results/counts/tiny_mt/counts.parquet")
    assert {"src_id", "tgt_id", "count", "t_tgt_given_src"} <= set(counts.columns)


@pytest.mark.workflow
def test_each_replicates_readings_sit_beside_its_table2_row(tiny_run):
    """replicate_readings: one row per replicate of every dataset, A(alpha*, xi^uf) and alpha*'s
    step those of its Table 2 row; the words each measure puts first come from the vocabulary;
    the correlations are in tables.md with their intervals."""
    tables = tiny_run / "results/tables"
    readings = pd.read_parquet(tables / "replicate_readings.parquet")
    reps = pd.read_parquet(tables / "table2_replicates.parquet")
    merged = reps.merge(readings, on=["dataset", "replicate"], suffixes=("", "_r"), validate="1:1")
    assert len(merged) == len(reps) == len(readings)
    assert np.allclose(merged["agr_alpha_xi_uniform"], merged["agr_alpha_xi_uniform_r"])
    assert (merged["best_perf"] == merged["best_perf_r"]).all()
    assert readings["alpha_entropy"].between(0, 1).all() and readings["alpha_top_share"].between(0, 1).all()
    assert (readings["alpha_words"].str.count("%") >= 1).all()
    tests = pd.read_parquet(tables / "readings_tests.parquet")
    assert set(tests["dataset"]) == {"tiny_cls"} and (tests["n"] == 3).all()  # the others have one replicate
    assert (tiny_run / "results/figures/table2_readings.png").stat().st_size > 10_000  # in the report
    assert "Does A(alpha*, xi^uf) follow a reading?" in (tables / "tables.md").read_text()


@pytest.mark.workflow
def test_runs_that_did_not_learn_are_flagged_in_the_log_and_first_in_tables_md(tiny_run):
    """Every run but the frozen ones beside an input-blind predictor; one that does not beat it
    is named in the tables job's log and in tables.md's first table, before Table 2 (after the
    findings in words and the legend of the columns)."""
    learning = pd.read_parquet(tiny_run / "results/tables/learning.parquet")
    assert set(learning["dataset"]) == {"tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls"}
    assert not learning["run"].str.startswith("frozen-").any()
    assert (learning["learned"] == (learning["best_perf"] > learning["trivial_perf"])).all()
    log = (tiny_run / "results/logs/tables/tables.log").read_text()
    failed = learning[~learning["learned"]]
    assert log.count("did not learn") == len(failed)
    markdown = (tiny_run / "results/tables/tables.md").read_text()
    console = (tiny_run / "console.txt").read_text().splitlines()
    if len(failed):  # the tiny models are too small to be sure of either outcome
        # said again among the run's last lines: a line per dataset with its runs and both numbers
        for dataset, runs in failed.groupby("dataset"):
            [said] = [line for line in console[-12:] if line.startswith(f"WARNING: {dataset}: ")]
            assert all(f"{r.run} (" in said for r in runs.itertuples()), said
            assert f"input-blind predictor's {100 * runs['trivial_perf'].iloc[0]:.1f}%" in said
        tables = markdown.split("## Columns")[1]
        assert tables[tables.index("## "):].startswith("## Runs that did not learn")
        assert all(f"| {r.dataset} | {r.run} |" in markdown.split("## Table 2 over")[0] for r in failed.itertuples())
    else:
        assert "Runs that did not learn" not in markdown
        assert not any("no better than chance" in line for line in console)


@pytest.mark.workflow
def test_tiny_run_builds_the_controlled_experiments(tiny_run):
    copying = pd.read_parquet(tiny_run / "results/tables/copying.parquet")
    assert set(copying["task"]) == {"perm6of6", "perm6of9"} and set(copying["seed"]) == {0, 1}
    assert set(copying["step"]) == {0, 10, 20}
    assert ((copying["token_acc"] >= 0) & (copying["token_acc"] <= 1)).all()
    contrast = pd.read_parquet(tiny_run / "results/tables/copy_counts_contrast.parquet").set_index("task")
    assert contrast.loc["perm6of6", "ratio"] == pytest.approx(1.0)
    multihead = pd.read_parquet(tiny_run / "results/tables/multihead.parquet")
    assert "random" in set(multihead["scenario"]) and multihead["heads"].str.split().map(len).eq(2).all()
    keyword = pd.read_parquet(tiny_run / "results/tables/keyword.parquet")
    assert {"keyword", "after", "uniform", "last"} <= set(keyword.columns)
    derivative = pd.read_parquet(tiny_run / "results/tables/derivative.parquet")
    assert len(derivative) == 2 * 2 * 2 * 4  # embeds x init scales x (flow, one step) x expressions
    for fig in ("copying", "copy_counts", "multihead", "keyword", "derivative"):
        assert (tiny_run / f"results/figures/experiments/{fig}.png").stat().st_size > 10_000
    ibm1 = pd.read_parquet(tiny_run / "results/tables/ibm1.parquet")
    assert sorted(ibm1["dataset"]) == ["tiny_mh", "tiny_mt", "tiny_tf"]  # every translation dataset
    summary = (tiny_run / "results/tables/experiments.md").read_text()
    assert "## Copying" in summary and "## Derivative at initialisation" in summary
    intervals = pd.read_parquet(tiny_run / "results/tables/experiment_intervals.parquet")
    assert set(intervals["experiment"]) == {"copying", "multihead", "keyword"}
    bounded = intervals.dropna(subset=["low"])
    assert len(bounded) and ((bounded["low"] <= bounded["value"]) & (bounded["value"] <= bounded["high"])).all()


@pytest.mark.workflow
def test_config_without_experiments_plans_none(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    del config["experiments"]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    rules = {r for r, _ in planned_jobs(snakemake("-n", "--configfile", path, cwd=tmp_path).stdout)}
    assert "agreement" in rules
    assert not rules & {"copying", "copying_table", "multihead", "keyword", "keyword_figure", "multihead_figure",
                        "copying_figure", "copy_counts_figure", "experiments_summary", "ibm1",
                        "derivative", "derivative_figure"}


def rule_outputs(configfile: Path, workdir: Path) -> dict[str, list[str]]:
    """Each rule's output patterns (wildcard constraints left out) under ``configfile``."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    strip = partial(re.sub, r"\{(\w+),[^}]*\}", r"{\1}")
    with SnakemakeApi(OutputSettings()) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=REPO / "Snakefile",
                          config_settings=ConfigSettings(configfiles=[configfile]), workdir=workdir)
        return {r.name: sorted(strip(str(f)) for f in r.output) for r in wf._workflow.rules}


@pytest.mark.workflow
def test_every_rule_has_the_same_outputs_under_every_shipped_config(tmp_path):
    """A requested target whose job gains an output under another config is not rebuilt by
    Snakemake (the new output has no metadata, so changed inputs go unseen): no rule's
    outputs may depend on the config."""
    first, *others = SHIPPED
    subprocess.run([sys.executable, REPO / "tests/make_own_data.py", tmp_path / "my_data"], check=True)
    expected = rule_outputs(first, tmp_path)
    for path in others:
        got = rule_outputs(path, tmp_path)
        assert {r: o for r, o in got.items() if expected.get(r) != o} == {}, f"{path.name} vs {first.name}"


@pytest.mark.workflow
def test_dry_run_warns_of_downloads_that_will_be_refused(tmp_path):
    """paper.yaml's IWSLT'14, News Commentary and Amazon have no published checksum: a dry run
    names them and the fix; the opt-in silences it."""
    out = snakemake("-n", "results/tables/table2.parquet", "--configfile", REPO / "config/paper.yaml", cwd=tmp_path)
    refused = re.findall(r"WARNING: datasets\.(\w+)\.source\.files\.\w+ .*allow_unverified_downloads=True",
                         out.stderr)
    assert set(refused) == {"amazon", "iwslt14", "news_en_nl", "news_en_pt", "news_it_pt"}, out.stderr[-2000:]
    allowed = snakemake("-n", "results/tables/table2.parquet", "--configfile", REPO / "config/paper.yaml",
                        "--config", "allow_unverified_downloads=True", cwd=tmp_path)
    assert "has no checksum" not in allowed.stderr


@pytest.mark.workflow
def test_nested_config_values_from_the_command_line(tiny_plan, tmp_path):
    """--config 'tables={train_split: false}': Snakemake passes nested leaves as text ('false');
    they are read as YAML, so the boolean switches the training-split jobs off."""
    on = {r for r, _ in planned_jobs(tiny_plan)}
    off = snakemake("-n", "--configfile", TINY, "--config", "tables={train_split: false, design: crossed}",
                    cwd=tmp_path).stdout
    assert {"probe_train", "table2_train"} <= on
    assert not {"probe_train", "table2_train"} & {r for r, _ in planned_jobs(off)}
    bad = snakemake("-n", "--configfile", TINY, "--config", "tables={train_split: flase}", cwd=tmp_path, check=False)
    assert bad.returncode != 0 and "tables.train_split: 'flase' is not of type 'boolean'" in bad.stderr + bad.stdout


def probe_inputs(output: str, run: str) -> str:
    """The input line of rule probe's job for ``run`` in a dry run's output."""
    for block in re.split(r"\n(?=(?:\[.*\]\n)?rule )", output):
        if re.search(r"^rule probe:", block, re.M) and f"run={run}" in block:
            return re.search(r"input: (.*)", block).group(1)
    raise AssertionError(f"no probe job of {run} planned:\n{output[-2000:]}")


@pytest.mark.workflow
def test_a_probe_that_scores_bleu_against_text_reads_the_prepared_split(tmp_path):
    """probe.bleu_references: text (the default) makes the prepared validation split, whose
    target texts are BLEU's references, an input of a translation run's probe; with 'ids', or
    without BLEU, the probe does not read it (nor wait on it)."""
    target, texts = "results/probes/tiny_mt/standard-s1.parquet", "results/data/tiny_mt/valid.parquet"
    plan = snakemake("-n", target, "--configfile", TINY, cwd=tmp_path).stdout
    assert texts in probe_inputs(plan, "standard-s1")
    for probe in ("{bleu_references: ids}", "{bleu: false}"):
        config = yaml.safe_load(TINY.read_text())
        config["datasets"]["tiny_mt"]["probe"].update(yaml.safe_load(probe))
        (tmp_path / "c.yaml").write_text(yaml.safe_dump(config))
        plan = snakemake("-n", target, "--configfile", tmp_path / "c.yaml", cwd=tmp_path).stdout
        assert texts not in probe_inputs(plan, "standard-s1"), probe


@pytest.mark.workflow
def test_nothing_reruns_and_one_dataset_change_reruns_only_it(tiny_run, tmp_path):
    assert "Nothing to be done" in snakemake("-n", "--configfile", TINY, cwd=tiny_run).stdout
    config = yaml.safe_load(TINY.read_text())
    config["datasets"]["tiny_cls"]["model"]["hidden"] = 6
    changed = tmp_path / "changed.yaml"
    changed.write_text(yaml.safe_dump(config))
    jobs = planned_jobs(snakemake("-n", "--configfile", changed, cwd=tiny_run).stdout)
    assert {ds for _, ds in jobs if ds} == {"tiny_cls"}
    assert {r for r, ds in jobs if ds == "tiny_cls"} == {"train", "probe", "agreement", "readings", "figures",
                                                          "examples", "probe_train", "agreement_train", "tanhmax"}
    assert {r for r, ds in jobs if not ds} <= {"tables", "table2_train", "analysis_tables", "tables_page",
                                              "analyses_page", "replicates_figure", "all"}


@pytest.mark.workflow
def test_only_runs_one_datasets_row_and_keeps_it_for_the_full_run(tiny_run):
    """docs/reproduction.md's row-by-row commands: `only` plans the named dataset's jobs and a
    table of its row alone; the whole config afterwards reuses that row's finished work."""
    only = snakemake("-n", "results/tables/table2.parquet", "--configfile", TINY, "--config",
                     "only=[tiny_cls]", cwd=tiny_run).stdout
    assert {ds for _, ds in planned_jobs(only) if ds} == set(), only  # tiny_cls is finished already
    assert {r for r, _ in planned_jobs(only)} == {"tables", "table2_train"}  # the row's tables alone
    fresh = tiny_run.parent / "only_fresh"
    fresh.mkdir(exist_ok=True)
    jobs = planned_jobs(snakemake("-n", "--configfile", TINY, "--config", "only=tiny_mt", cwd=fresh).stdout)
    assert {ds for _, ds in jobs if ds} == {"tiny_mt"}


STACK = ("--config", "only=[tiny_cls]", "override={train: {stack: 3}}")


@pytest.mark.workflow
def test_stacked_runs_train_in_fewer_jobs_and_give_the_separate_runs_table2(tiny_run, tmp_path):
    """train.stack: 3 on tiny_cls: its 3 standard and 3 uniform runs train in two jobs, not six
    (frozen-s1 and tanhmax-s1, alone of their variant, train alone);
    every member's checkpoints are within 1e-3 of its separately trained run's (tiny_run), and
    Table 2's replicate rows within half a point."""
    import torch

    target = "results/tables/table2_replicates.parquet"
    plan = snakemake("-n", target, "--configfile", TINY, *STACK, cwd=tmp_path).stdout
    trains = [rule for rule, _ in planned_jobs(plan) if rule.startswith("train")]
    assert sorted(trains) == ["train", "train", "train_stack_tiny_cls_standard_s1_2_3",
                              "train_stack_tiny_cls_uniform_s1_2_3"]
    snakemake("--cores", "2", target, "--configfile", TINY, *STACK, cwd=tmp_path)
    for run in [f"{v}-s{s}" for v in ("standard", "uniform") for s in (1, 2, 3)]:
        mine, theirs = (sorted((root / f"results/runs/tiny_cls/{run}/checkpoints").glob("*.pt"))
                        for root in (tmp_path, tiny_run))
        assert [p.name for p in mine] == [p.name for p in theirs]
        for a, b in zip(mine, theirs):
            a, b = torch.load(a), torch.load(b)
            assert max((a[k] - b[k]).abs().max().item() for k in a) < 1e-3, (run, a)
    rows = [pd.read_parquet(root / target).query("dataset == 'tiny_cls'").set_index("replicate")
            for root in (tmp_path, tiny_run)]
    values = [c for c in rows[0].columns if c.startswith(("agr_", "ctx_", "best_")) and not c.endswith("_boot_sd")]
    gap = (rows[0][values] - rows[1][values]).abs()
    assert (gap.fillna(0) <= 0.005).all().all(), gap


MT_STACK = ("--config", "only=[tiny_mt]", "override={train: {stack: 3}}")


@pytest.mark.workflow
def test_stacked_translation_runs_train_in_fewer_jobs_and_give_the_separate_runs_table2(tiny_run, tmp_path):
    """train.stack: 3 on tiny_mt: its two standard runs train in one job (uniform-s1 and frozen-s1,
    alone of their variant, train alone), each member in turn with its own generators: every
    member's checkpoints equal its separately trained run's (tiny_run), and so do Table 2's
    replicate rows (asserted within 1e-3 and half a point, as for the classification stack)."""
    import torch

    target = "results/tables/table2_replicates.parquet"
    plan = snakemake("-n", target, "--configfile", TINY, *MT_STACK, cwd=tmp_path).stdout
    trains = [rule for rule, _ in planned_jobs(plan) if rule.startswith("train")]
    assert sorted(trains) == ["train", "train", "train_stack_tiny_mt_standard_s1_2"]
    snakemake("--cores", "2", target, "--configfile", TINY, *MT_STACK, cwd=tmp_path)
    for run in ["standard-s1", "standard-s2"]:
        mine, theirs = (sorted((root / f"results/runs/tiny_mt/{run}/checkpoints").glob("*.pt"))
                        for root in (tmp_path, tiny_run))
        assert [p.name for p in mine] == [p.name for p in theirs]
        for a, b in zip(mine, theirs):
            a, b = torch.load(a), torch.load(b)
            assert max((a[k] - b[k]).abs().max().item() for k in a) < 1e-3, (run, a)
    rows = [pd.read_parquet(root / target).query("dataset == 'tiny_mt'").set_index("replicate")
            for root in (tmp_path, tiny_run)]
    values = [c for c in rows[0].columns if c.startswith(("agr_", "ctx_", "best_")) and not c.endswith("_boot_sd")]
    gap = (rows[0][values] - rows[1][values]).abs()
    assert (gap.fillna(0) <= 0.005).all().all(), gap


@pytest.mark.workflow
def test_a_second_config_in_the_same_directory_rebuilds_its_tables(tiny_run, tmp_path):
    """One config's run, then another config's table in the same directory: the tables are
    planned again and end with the second config's rows, also where the second config adds
    outputs (the training-split table, experiments) that the first never made."""
    work = tmp_path / "work"
    shutil.copytree(tiny_run, work, symlinks=True)
    shutil.rmtree(work / "results/tables")
    shutil.rmtree(work / "results/figures/experiments")
    config = yaml.safe_load(TINY.read_text())
    config.update(only=["tiny_cls"], tables={"train_split": False})
    config["experiments"] = {k: v for k, v in config["experiments"].items() if k != "multihead"}
    first = tmp_path / "first.yaml"
    first.write_text(yaml.safe_dump(config))
    snakemake("--cores", "2", "results/tables/table2.parquet", "results/tables/experiments.md",
              "--configfile", first, cwd=work)
    assert set(pd.read_parquet(work / "results/tables/table2.parquet")["dataset"]) == {"tiny_cls"}
    assert not (work / "results/tables/table2_train.parquet").exists()
    # the first config's report now would embed the second's tables: refused, naming them
    report = snakemake("--report", "report.html", "--configfile", TINY, cwd=work, check=False)
    assert report.returncode != 0 and not (work / "report.html").exists()
    said = report.stdout + report.stderr
    assert "no report: " in said and "results/tables/" in said and f"--configfile {TINY}" in said, said[-3000:]
    # its words alone, as a config error's: no Snakemake header, no frames of asyncio's runner
    assert said.strip().splitlines()[-1].startswith("no report: ") and "WorkflowError" not in said, said[-3000:]
    assert not re.search(r'^\s+File "', said, re.M), said[-3000:]

    targets = ["results/tables/table2.parquet", "results/tables/experiments.md"]
    plan = {r for r, _ in planned_jobs(snakemake("-n", *targets, "--configfile", TINY, cwd=work).stdout)}
    assert {"tables", "experiments_summary"} <= plan, plan
    snakemake("--cores", "2", *targets, "results/tables/table2_train.parquet", "--configfile", TINY, cwd=work)
    every = {"tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls"}
    assert set(pd.read_parquet(work / "results/tables/table2.parquet")["dataset"]) == every
    assert set(pd.read_parquet(work / "results/tables/table2_train.parquet")["dataset"]) == every
    assert "Multi-head" in (work / "results/tables/experiments.md").read_text()
    assert "Table 2 on the training split" in (work / "results/tables/tables.md").read_text()


@pytest.mark.workflow
def test_factorial_design_splits_table2s_variance_three_ways_without_training_again(tiny_run, tmp_path):
    """tables.design: factorial on the finished tiny run: only the agreement, readings and table
    jobs run again (no training, no probe), and table2_variance gives tiny_cls's columns A, U and proxy
    shares over its 3 x 3 x 3 grid, each with an interval; the intervals of Table 2 still come
    from the diagonal's three independent replicates."""
    work = tmp_path / "work"
    shutil.copytree(tiny_run, work, symlinks=True)
    args = ("results/tables/table2_variance.parquet", "--configfile", TINY, "--config", "tables={design: factorial}")
    planned = {r for r, _ in planned_jobs(snakemake("-n", *args, cwd=work).stdout)}
    assert planned <= {"agreement", "agreement_train", "readings", "tables", "table2_train"}, planned
    snakemake("--cores", "2", *args, cwd=work)
    variance = pd.read_parquet(work / "results/tables/table2_variance.parquet").set_index(["dataset", "column"])
    cls = variance.loc["tiny_cls"]
    for column, row in cls.iterrows():  # each role a column reads has its three seeds; A(xi^px, xi^uf) reads no A
        assert [row[f"n_{f}"] for f in row["reads"]] == [3] * len(row["reads"]), column
    assert cls.loc["agr_alpha_xi_uniform", "reads"] == "au" and "p" in cls.loc["agr_xi_proxy_xi_uniform", "reads"]
    shares = cls[["share_a", "share_u", "share_p", "share_residual"]].sum(axis=1)
    assert np.allclose(shares[shares.notna()], 1.0)
    reads_p = cls[cls["reads"].str.contains("p")]
    assert (reads_p["share_p_low"] <= reads_p["share_p"]).all() and (reads_p["share_p"] <= reads_p["share_p_high"]).all()
    intervals = pd.read_parquet(work / "results/tables/table2_intervals.parquet")
    assert set(intervals.loc[intervals["dataset"] == "tiny_cls", "n_replicates"]) == {3}


@pytest.mark.workflow
def test_seeding_override_retrains_the_other_roles_only(tiny_run):
    """The seed ablation of docs/reproduction.md from the command line: every uniform, frozen,
    TanhMax and additive run retrains from A's seed, no standard run does (A and B stay the same
    models)."""
    out = snakemake("-n", "--configfile", TINY, "--config", "override={train: {seeding: shared}}",
                    cwd=tiny_run).stdout
    trained = re.findall(r"rule train:\n(?:    .*\n)*?    wildcards: dataset=([\w-]+), run=(\w+)-s", out)
    variants = {variant for _, variant in trained}
    assert "uniform" in variants and variants <= {"uniform", "frozen", "tanhmax", "additive"}, trained


@pytest.mark.workflow
def test_report_builds(tiny_run):
    snakemake("--report", "report.html", "--configfile", TINY, cwd=tiny_run)
    html = (tiny_run / "report.html").read_text(errors="ignore")
    assert "contextualized" in html
    assert "Controlled experiments" in html and "copy_counts.png" in html
    assert "Attention analyses" in html
    # every table readable in place (the report offers Markdown and TSV only as downloads)
    for page in ("tables", "analyses", "experiments", "optimal_attention"):
        assert f"results/report/{page}.html" in html
    page = (tiny_run / "results/report/tables.html").read_text()
    assert "<h2>Table 2</h2>" in page and "<td>tiny_mt</td>" in page


@pytest.mark.workflow
def test_optimal_attention_table_covers_every_additive_run(tiny_run):
    """Appendix A.1 end to end: tiny_mt's additive runs are probed for their optimal attention,
    and the summary has every comparison over both seeds; the Table 2 jobs never read them."""
    rows = pd.read_parquet(tiny_run / "results/analyses/tiny_mt/optimal_attention.parquet")
    assert set(rows["run"]) == {"additive-s1", "additive-s2"}
    assert rows["value"].between(0, 1).all() and rows["baseline"].between(0, 1).all()
    probe = pd.read_parquet(tiny_run / "results/probes/tiny_mt/additive-s1.parquet")
    opt = np.concatenate(probe["optimal"].to_numpy())
    assert (opt >= 0).all() and np.allclose([sum(v) for v in probe["optimal"]], 1, atol=1e-4)
    assert "optimal" not in pd.read_parquet(tiny_run / "results/probes/tiny_mt/standard-s1.parquet").columns
    table = pd.read_parquet(tiny_run / "results/tables/optimal_attention.parquet")
    best = table[table["comparison"] == "opt_xi"].iloc[0]
    assert best["n"] == 2 and best["pi_low"] <= best["mean"] <= best["pi_high"]
    assert "A(alpha^opt, xi)" in (tiny_run / "results/tables/optimal_attention.md").read_text()
    agreement = pd.read_parquet(tiny_run / "results/agreement/tiny_mt.parquet")
    assert not agreement["a_run"].str.startswith("additive").any()


TINY_DATASETS = ("tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls")


@pytest.mark.workflow
def test_tiny_run_builds_an_examples_page_and_a_count_figure_per_dataset(tiny_run):
    """Each dataset's examples page (rule examples) shows the probe tables' values for its
    seeded sample, view by view; its first view is Table 2's pair, whose word summary has
    Table 2's A(alpha*, xi^uf) and random baseline over every probed example."""
    import pyarrow.parquet as pq

    results = tiny_run / "results"
    table2 = pd.read_parquet(results / "tables/table2.parquet").set_index("dataset")
    for d in TINY_DATASETS:
        data = page_json((results / f"report/examples/{d}.html").read_text())
        probes = results / "probes" / d
        tables = {role: pq.read_table(probes / f"{run}.parquet")
                  for role, run in (("A", "standard-s1"), ("U", "uniform-s1"), ("P", "proxy-s0"))}
        assert_values_are_the_probes(data, tables)
        assert len(data["examples"]) == 8 and len(data["views"]) > 2  # tiny.yaml: figures.examples.sample 8
        summary = data["views"][0]["summary"]
        assert summary["agreement"] == pytest.approx(table2.loc[d, "agr_alpha_xi_uniform"])
        assert summary["chance"] == pytest.approx(table2.loc[d, "random_baseline"])
        assert (results / f"figures/{d}/count_table.png").stat().st_size > 10_000


@pytest.mark.workflow
@pytest.mark.browser
def test_report_shows_each_examples_page_in_a_browser_and_its_step_switch_works(tiny_run):
    """The report opens in a real headless browser (skipped with the reason when none is
    installed); each dataset's examples page, shown in the report's frame, holds its embedded
    values, and moving the step switch shows the last view's."""
    snakemake("--report", "report.html", "--configfile", TINY, cwd=tiny_run)
    html = (tiny_run / "report.html").read_text(errors="ignore")
    assert all(f"results/figures/{d}/count_table.png" in html for d in TINY_DATASETS)
    with browser_page() as page:
        for d in TINY_DATASETS:
            page.goto((tiny_run / "report.html").as_uri())
            page.get_by_text("Examples", exact=True).first.click()
            page.get_by_text(d, exact=True).first.click()
            # the result's first button views it
            page.locator("tr", has_text=f"results/report/examples/{d}.html").locator("a").first.click()
            frame = page.frame_locator("iframe")
            # the page's script renders the examples once its data element is whole: under load the
            # frame was read mid-parse, its JSON cut short (a flaky JSONDecodeError)
            frame.locator(".example").first.wait_for()
            data = json.loads(frame.locator("#page-data").text_content())
            assert data["dataset"] == d
            check_shown_view(frame, data, 0)
            frame.locator("#view").fill(str(len(data["views"]) - 1))
            check_shown_view(frame, data, len(data["views"]) - 1)


@pytest.mark.workflow
def test_changed_model_code_reruns_training_of_that_family_only(tiny_run):
    # Snakemake reruns on a changed checksum, not a mere touch: edit the module for real
    model = REPO / "src/attnlearn/models/seq2seq.py"
    original, stat = model.read_text(), model.stat()
    try:
        model.write_text(original + "\n# edited by test_workflow\n")
        jobs = planned_jobs(snakemake("-n", "--configfile", TINY, cwd=tiny_run).stdout)
    finally:
        model.write_text(original)
        os.utime(model, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert ("train", "tiny_mt") in jobs
    assert ("train", "tiny_cls") not in jobs


def _analysed_runs(output: str) -> set[tuple[str, str, str]]:
    """(rule, dataset, run) of the per-run analysis jobs in a dry run's output."""
    return set(re.findall(r"^rule (norms|effective_attention|head_roles):\n(?:    .*\n)*?"
                          r"    wildcards: dataset=([\w-]+), run=([\w-]+)", output, re.M))


@pytest.mark.workflow
def test_translation_analyses_run_on_every_standard_seed_or_run_a_only(tiny_plan, tmp_path):
    """analyses.seeds: all (default) plans one job per analysis and standard run and trains
    nothing more than seeds: first, which plans run A's only."""
    from attnlearn.config import load_config, read_config_file

    config = load_config(read_config_file(TINY), REPO / "config" / "schema.yaml", source=str(TINY))
    standard = {d: [f"standard-s{s}" for s in c["runs"]["standard"]]
                for d, c in config["datasets"].items() if c["task"] == "translation"}
    every = tiny_plan
    assert _analysed_runs(every) == {(rule, d, r) for rule in ("norms", "effective_attention", "head_roles")
                                     for d, runs in standard.items() for r in runs}
    raw = yaml.safe_load(TINY.read_text())
    raw["analyses"]["seeds"] = "first"
    (tmp_path / "first.yaml").write_text(yaml.safe_dump(raw))
    first = snakemake("-n", "--configfile", tmp_path / "first.yaml", cwd=tmp_path).stdout
    assert {(d, r) for _, d, r in _analysed_runs(first)} == {(d, runs[0]) for d, runs in standard.items()}
    assert planned_jobs(first).count(("train", "tiny_tf")) == planned_jobs(every).count(("train", "tiny_tf"))


@pytest.mark.workflow
def test_tiny_run_builds_the_attention_analyses(tiny_run):
    tables = {name: pd.read_parquet(tiny_run / f"results/tables/{name}.parquet") for name in
              ("norms", "alignment_error", "effective_attention", "tanhmax", "head_roles")}
    translation = {"tiny_mt", "tiny_tf", "tiny_mh"}
    for name in ("norms", "alignment_error", "effective_attention", "head_roles"):
        assert set(tables[name]["dataset"]) == translation, name
    aer = tables["alignment_error"]
    assert set(aer[aer["dataset"] == "tiny_tf"]["layer"]) == {0, 1} and set(aer["measure"]) == {"weight", "norm"}
    assert aer["aer"].between(0, 1).all() and aer["best"].any() and set(aer["aer_mode"]) == {"kobayashi", "pieces"}
    # every standard seed analysed, each row naming its run; the seed summaries pair them
    assert set(aer[aer["dataset"] == "tiny_tf"]["run"]) == {"standard-s1", "standard-s2"}
    assert set(tables["head_roles"]["run_role"]) == {"A", "B"}
    seeds = pd.read_parquet(tiny_run / "results/tables/alignment_error_seeds.parquet")
    assert (seeds["n_seeds"] == 2).all() and set(seeds["aer_mode"]) == {"kobayashi", "pieces"}
    role_seeds = pd.read_parquet(tiny_run / "results/tables/head_roles_seeds.parquet")
    assert set(role_seeds[role_seeds["dataset"] == "tiny_mh"]["rank"]) == {1, 2}
    eff = tables["effective_attention"]
    assert (eff[eff["metric"] == "output_gap_effective"]["value"] < 1e-6).all()
    roles = tables["head_roles"]
    assert set(roles[roles["dataset"] == "tiny_tf"]["kind"]) == {"cross", "enc_self", "dec_self"}
    mh = roles[roles["dataset"] == "tiny_mh"]  # the multi-head LSTM: its 2 heads, tested and corrected
    assert set(zip(mh["kind"], mh["head"])) == {("cross", 0), ("cross", 1)} and mh["p_adjusted"].notna().any()
    tanhmax = tables["tanhmax"]
    assert set(tanhmax["activation"]) == {"softmax", "tanhmax"} and set(tanhmax["dataset"]) == {"tiny_cls"}
    assert {"accuracy", "agreement_alpha_xi_uniform", "agreement_signed_alpha_xi_uniform",
            "signed_weight_positive_keyword", "relative_sign_positive_keyword"} <= set(tanhmax["metric"])
    for fig in ("alignment_error", "head_roles"):
        assert (tiny_run / f"results/figures/analyses/{fig}.png").stat().st_size > 10_000
    assert "## Softmax vs TanhMax" in (tiny_run / "results/tables/analyses.md").read_text()


def rule_scripts(workdir: Path) -> dict[str, str]:
    """rule name -> its script's file name, as Snakemake reads the rules (those of `use rule`
    and those a loop defines, such as the report pages, included)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    with SnakemakeApi(OutputSettings()) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=REPO / "Snakefile",
                          config_settings=ConfigSettings(configfiles=[TINY]), workdir=workdir)
        return {r.name: Path(r.script).name for r in wf._workflow.rules if r.script}


def loaded_modules(scripts) -> dict[str, set[str]]:
    """The library modules each script really loads when it starts (a fresh import of the
    package per script), as paths relative to src/attnlearn."""
    code = f"""
import json, runpy, sys
out = {{}}
for script in {sorted(scripts)!r}:
    for name in [n for n in sys.modules if n.split(".")[0] == "attnlearn"]:
        del sys.modules[name]
    sys.argv = [script]
    try:
        runpy.run_path({str(REPO / "workflow/scripts")!r} + "/" + script)
    except SystemExit:  # no job file: jobs.run stops after the imports
        pass
    out[script] = sorted(m.__file__ for n, m in sys.modules.items() if n.split(".")[0] == "attnlearn")
print(json.dumps(out))
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    lib = REPO / "src" / "attnlearn"
    return {s: {Path(f).relative_to(lib).as_posix() for f in files}
            for s, files in json.loads(proc.stdout.splitlines()[-1]).items()}


@pytest.mark.workflow
def test_each_job_depends_on_exactly_the_library_modules_its_script_uses(tiny_plan, tmp_path):
    """Every job's code inputs (rules/common.smk script_code) are the modules its script
    uses: all that it loads when it starts, model families aside (a dataset's jobs depend on
    its own family's model only), and none that it does not import (src/attnlearn/runtime/codedeps.py)."""
    from attnlearn.runtime.codedeps import script_modules

    lib = REPO / "src" / "attnlearn"
    out = tiny_plan
    scripts = rule_scripts(tmp_path)
    loaded = loaded_modules(set(scripts.values()))
    families = {"models/seq2seq.py", "models/classifier.py", "models/transformer.py", "models/proxy.py"}
    # loaded with every family by the models package, used by some families only: the
    # translation models' lexical probe, the LSTM models' fused encoder
    private = {"models/lexical.py", "models/bilstm.py"}
    datasets = yaml.safe_load(TINY.read_text())["datasets"]
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(.*?)(?=\n\n|\Z)", out, re.S | re.M)
    assert len(jobs) > 50
    for rule, block in jobs:
        if rule in ("all", "table2"):
            continue
        inputs = re.search(r"^    input: (.*)$", block, re.M).group(1).split(", ")
        code = {Path(f).relative_to(lib).as_posix() for f in inputs if f.startswith(str(lib))}
        assert loaded[scripts[rule]] - families - private <= code, (rule, loaded[scripts[rule]] - families - code)
        uses = {p.relative_to(lib).as_posix() for p in script_modules(REPO / "workflow/scripts" / scripts[rule], lib)}
        if ds := re.search(r"wildcards: .*?dataset=([\w-]+)", block):
            d = datasets[ds.group(1)]
            family = ("models/transformer.py" if d["model"].get("arch") == "transformer" else
                      {"translation": "models/seq2seq.py", "classification": "models/classifier.py"}[d["task"]])
            uses -= families - {family, "models/proxy.py"}
        assert code == uses, (rule, code ^ uses)


# the jobs that train and probe: an edit of an analysis, of agreement's wording or of a figure
# reruns none of them (docs/pipeline.md, "What an edit reruns")
UPSTREAM = {(rule, ds) for rule in ("train", "probe", "probe_train", "proxy", "proxy_probe_train", "ibm1", "gold")
            for ds in ("tiny_mt", "tiny_tf", "tiny_mh", "tiny_cls")}


@pytest.mark.workflow
@pytest.mark.parametrize("module, reruns, keeps", [
    ("data/card.py", {("datacard", "")}, {("tables", "")}),
    ("probing/probes.py", {("probe", "tiny_cls")}, {("copying", ""), ("keyword", ""), ("gold", "tiny_mt"),
                                                     ("proxy", "tiny_cls"), ("ibm1", "tiny_mt")}),
    ("analyses/norms.py", {("norms", "tiny_mt")}, UPSTREAM),
    ("agreement/readable.py", {("readings", "tiny_cls")}, UPSTREAM),
    ("reporting/plots.py", {("figures", "tiny_mt")}, UPSTREAM),
])
def test_editing_a_library_module_reruns_the_jobs_that_use_it(module, reruns, keeps, tiny_run):
    path = REPO / "src" / "attnlearn" / module
    original, stat = path.read_text(), path.stat()
    try:
        path.write_text(original + "\n# edited by test_workflow\n")
        out = snakemake("-n", "--configfile", TINY, cwd=tiny_run).stdout
    finally:
        path.write_text(original)
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    direct = set()  # jobs that rerun because of the edit itself (not only for an upstream job)
    for rule, block in re.findall(r"^rule (\w+):\n(.*?)(?=\n\n|\Z)", out, re.S | re.M):
        updated = re.search(r"Updated input files: ([^;\n]*)", block)
        if updated and str(path) in updated.group(1).split(", "):
            ds = re.search(r"wildcards: .*?dataset=([\w-]+)", block)
            direct.add((rule, ds.group(1) if ds else ""))
    assert reruns <= direct, direct
    assert not keeps & set(planned_jobs(out))


def _paper_rows(name):
    return rows_module(f"{name}")


@pytest.mark.workflow
def test_each_replicate_row_is_the_single_draw_table2_of_its_runs(tiny_run):
    """tiny_cls has 3 standard, 3 uniform and 3 proxy seeds: replicate r (rotate) is Table 2
    computed as one draw with A = standard r, B = the others from r+1 on, U = uniform r and
    proxy seed r; replicate 1 is the pipeline's table2.parquet row."""
    import pyarrow.parquet as pq

    from attnlearn.agreement.compare import Comparator, performance_frame, replicate_design, replicate_frame
    from attnlearn.agreement.replicates import replicate_table
    from attnlearn.agreement.tables import table2_row

    reps = pd.read_parquet(tiny_run / "results/tables/table2_replicates.parquet")
    cls = reps[reps["dataset"] == "tiny_cls"].set_index("replicate")
    assert list(cls.index) == [1, 2, 3] and cls["independent"].all()
    assert list(cls["a_run"]) == ["standard-s1", "standard-s2", "standard-s3"]
    assert list(cls["u_run"]) == ["uniform-s1", "uniform-s2", "uniform-s3"]
    assert list(cls["p_run"]) == ["proxy-s0", "proxy-s1", "proxy-s2"]
    probes = tiny_run / "results/probes/tiny_cls"
    values = [c for c in TABLE2_COLUMNS if c not in ("dataset", "task", "perf_metric")]
    for r, rep in cls.iterrows():
        order = [rep["a_run"], *rep["b_runs"], rep["u_run"]]
        perf = {run: pd.read_parquet(probes / f"{run}.perf.parquet") for run in order}
        agr = Comparator("tiny_cls", {run: pq.read_table(probes / f"{run}.parquet") for run in order}, perf,
                         pq.read_table(probes / f"{rep['p_run']}.parquet")).build()
        one = table2_row("tiny_cls", "classification", agr, performance_frame("tiny_cls", perf),
                         xi_b_run=rep["xi_b_run"])
        assert rep[values].astype(float).tolist() == pytest.approx([one[c] for c in values], nan_ok=True), r
    table2 = pd.read_parquet(tiny_run / "results/tables/table2.parquet").set_index("dataset").loc["tiny_cls"]
    assert cls.loc[1, values].astype(float).tolist() == pytest.approx(table2[values].astype(float).tolist(),
                                                                       nan_ok=True)
    assert cls.loc[2, "agr_alpha_xi_uniform"] != cls.loc[1, "agr_alpha_xi_uniform"]  # other runs, other values
    boot_sd = cls["agr_alpha_xi_uniform_boot_sd"]
    assert boot_sd.notna().all() and (boot_sd > 0).any()  # the example bootstrap ran
    intervals = pd.read_parquet(tiny_run / "results/tables/table2_intervals.parquet")
    iv = intervals[intervals["dataset"] == "tiny_cls"].set_index("column")
    assert iv.loc["agr_alpha_xi_uniform", "n"] == 3
    assert iv.loc["agr_alpha_xi_uniform", "mean"] == pytest.approx(cls["agr_alpha_xi_uniform"].mean())
    ctx = iv.loc["ctx_perf_xi_uniform"]
    assert ctx["n"] == cls["ctx_perf_xi_uniform"].notna().sum() and ctx["n_replicates"] == 3
    claims = pd.read_parquet(tiny_run / "results/tables/claims.parquet")
    assert set(claims["verdict"]) <= {"holds", "fails", "undetermined"} and claims["paper_sentence"].str.len().min() > 40
    text = (tiny_run / "results/tables/tables.md").read_text()
    assert "mean [95% PI]" in text and "claims tested" in text
    # rotate: each replicate's B runs are the others' A runs, and the tables that read B say so
    assert iv.loc["agr_alpha_xi_standard", "b_shared"] and not iv.loc["agr_alpha_xi_uniform", "b_shared"]
    assert set(claims.loc[claims["b_shared"] & (claims["dataset"] == "tiny_cls"), "claim"]) == {
        "uniform_probe_comparable_to_standard", "contextualized_performance_nontrivial"}
    assert "3/3 ‡" in next(line for line in text.splitlines() if line.startswith("| tiny_cls | agr_alpha_xi_standard"))
    # the crossed design (tables: {design: crossed}) pairs every A with every U; its diagonal is rotate's
    runs = [f"{v}-s{s}" for v in ("standard", "uniform") for s in (1, 2, 3)]
    proxies = ["proxy-s0", "proxy-s1", "proxy-s2"]
    design = replicate_design(runs[:3], runs[3:], proxies, "crossed")
    perf = {run: pd.read_parquet(probes / f"{run}.perf.parquet") for run in runs}
    frame = replicate_frame("tiny_cls", {run: pq.read_table(probes / f"{run}.parquet") for run in runs + proxies},
                            perf, design)
    crossed = replicate_table(frame, performance_frame("tiny_cls", perf), {"tiny_cls": "classification"},
                              {"tiny_cls": design}).set_index(["a_run", "u_run"])
    assert len(crossed) == 9
    assert crossed.loc[("standard-s2", "uniform-s2"), "agr_alpha_xi_uniform"] == pytest.approx(
        cls.loc[2, "agr_alpha_xi_uniform"])


@pytest.mark.workflow
def test_only_standard_runs_probe_grad_and_norm_and_no_comparison_reads_them_elsewhere(tiny_run):
    """Uniform and frozen probes skip grad and norm (gradient saliency is half a translation
    probe's time): every comparison is the same when those probes carry them too (here run A's
    columns, for values that would show if anything read them)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from attnlearn.agreement.compare import Comparator

    for dataset in ("tiny_mt", "tiny_cls"):
        folder = tiny_run / "results/probes" / dataset
        order = ["standard-s1", "standard-s2", "uniform-s1", "frozen-s1"]
        probes = {run: pq.read_table(folder / f"{run}.parquet") for run in order}
        assert {"grad", "norm"} <= set(probes["standard-s2"].column_names)
        assert not {"grad", "norm"} & set(probes["uniform-s1"].column_names + probes["frozen-s1"].column_names)
        perf = {run: pd.read_parquet(folder / f"{run}.perf.parquet") for run in order}
        proxy = pq.read_table(folder / "proxy-s0.parquet")
        with_them = dict(probes)
        for run in ("uniform-s1", "frozen-s1"):
            steps = set(probes[run]["step"].to_pylist())
            a = probes["standard-s1"].to_pandas()
            a = pa.Table.from_pandas(a[a["step"].isin(steps)].reset_index(drop=True), preserve_index=False)
            assert a.num_rows == probes[run].num_rows, run  # the same examples at the same steps
            with_them[run] = probes[run].append_column("grad", a["grad"]).append_column("norm", a["norm"])
        pd.testing.assert_frame_equal(Comparator(dataset, probes, perf, proxy).build(),
                                      Comparator(dataset, with_them, perf, proxy).build())


@pytest.mark.workflow
def test_g_and_norm_at_the_best_checkpoints_alone_give_the_tables_of_every_checkpoint(tiny_run, tmp_path):
    """probe.at_best (g and the norm-based weights at each run's best checkpoints only) against
    [] (every measure at every checkpoint, what every probe did before): the tiny run's standard
    probes made again with [] change no table and no figure by a byte (but the stamp naming the
    config, made_for.py). Their g and norm columns
    are the tiny run's where it has values, which is where a table reads them: at the best
    checkpoint by each metric of the probe's own split; the agreement rows differ only by the
    norm-vs-gold rows at A's other checkpoints, which no table reads."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from attnlearn.agreement.metric import computed_steps
    from attnlearn.probing.best import best_steps
    from attnlearn.reporting.made_for import write_stamp

    work = tmp_path / "every"
    shutil.copytree(tiny_run, work, symlinks=True)
    config = yaml.safe_load(TINY.read_text())
    for entry in config["datasets"].values():
        entry["probe"]["at_best"] = []
    every = tmp_path / "every.yaml"
    every.write_text(yaml.safe_dump(config))
    planned = {r for r, _ in planned_jobs(snakemake("-n", "--configfile", every, cwd=work).stdout)}
    assert {"probe", "probe_train"} <= planned and not planned & {"train", "proxy", "proxy_probe_train", "gold"}
    snakemake("--cores", "2", "--configfile", every, cwd=work)
    for split in ("probes", "train_split/probes"):
        for path in sorted((tiny_run / "results" / split).glob("*/standard-s*.perf.parquet")):
            probe = path.with_name(path.name.replace(".perf", ""))
            best, full = pq.read_table(probe), pq.read_table(work / probe.relative_to(tiny_run))
            assert best.schema == full.schema
            at = best_steps(pd.read_parquet(path))
            for m in ("grad", "norm"):
                assert computed_steps(best, m) == set(at) and computed_steps(full, m) == set(best["step"].to_pylist())
                read = pc.is_in(full["step"], pa.array(at, full["step"].type))
                assert best[m].filter(read).equals(full[m].filter(read)), (probe, m)
            assert best.drop_columns(["grad", "norm"]).equals(full.drop_columns(["grad", "norm"])), probe
    def content(path: Path) -> bytes:
        """The file's bytes under one config stamp: each names its config's file and settings hash."""
        copy = tmp_path / f"stamped{path.suffix}"
        shutil.copy(path, copy)
        write_stamp(copy, {"config": "tiny", "sha256": "-"})
        return copy.read_bytes()

    tables = sorted(p.relative_to(tiny_run) for p in (tiny_run / "results/tables").glob("*.parquet"))
    assert len(tables) > 30
    changed = [str(t) for t in tables if content(tiny_run / t) != content(work / t)]
    assert changed == ["results/tables/agreement.parquet"], changed
    figures = sorted(p.relative_to(tiny_run) for p in (tiny_run / "results/figures").rglob("*.png"))
    assert len(figures) > 20
    assert [str(f) for f in figures if content(tiny_run / f) != content(work / f)] == []
    for agreement in ("results/tables/agreement.parquet", *[p.relative_to(tiny_run) for p in
                                                             (tiny_run / "results/agreement").glob("*.parquet")]):
        best, full = pd.read_parquet(tiny_run / agreement), pd.read_parquet(work / agreement)
        if "a_measure" in full:  # every checkpoint's norm against the gold links: rows no table reads
            def norm_gold(df):
                return (df["a_measure"] == "norm") & (df["b_role"] == "G")

            kept = set(zip(best.loc[norm_gold(best), "dataset"], best.loc[norm_gold(best), "a_step"]))
            extra = norm_gold(full) & ~pd.Series(list(zip(full["dataset"], full["a_step"]))).isin(kept)
            full = full[~extra].reset_index(drop=True)
        pd.testing.assert_frame_equal(best, full, check_exact=True, obj=str(agreement))


@pytest.mark.workflow
def test_reproduction_rows_reads_each_rows_tables_as_the_pipeline_does(tiny_run, tmp_path, capsys):
    """paper_rows/reproduction_rows.py (docs/reproduction.md's first table): the intervals it
    prints are the pipeline's own, and a dataset given twice is refused."""
    module = _paper_rows("reproduction_rows")
    tables = tiny_run / "results/tables"
    assert module.main([str(tables)]) == 0
    out = capsys.readouterr().out
    iv = pd.read_parquet(tables / "table2_intervals.parquet").set_index(["dataset", "column"])
    row = iv.loc[("tiny_cls", "agr_alpha_xi_uniform")]
    assert f"| tiny_cls, ours (n = 3) | {100 * row['mean']:.1f} [{100 * row['pi_low']:.1f}, " in out
    assert out.count("Section 3.2") >= 2  # the claims, each with the paper's sentence
    assert module.main([str(tables), str(tables)]) == 2
    assert module.main([str(tmp_path)]) == 2


@pytest.mark.process
def test_paper_row_parts_are_independent_replicates_that_together_run_the_row(tmp_path):
    """paper_row.py --part: each part is one replicate of its own runs (no run in two parts), and
    the parts together train exactly the row's runs, no task default adding one (20 Newsgroups
    lists no TanhMax run, a classification default); a part with no B run is refused by name."""
    from attnlearn.config import load_config, run_names

    module = _paper_rows("paper_row")
    shipped = yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text())

    def resolved(name, entry):
        return load_config({**shipped, "datasets": {name: entry}}, REPO / "config/schema.yaml")["datasets"][name]

    for name in ("sms_spam", "newsgroups", "multi30k"):
        entry = shipped["datasets"][name]
        row = resolved(name, entry)
        parts = [resolved(name, module.part_entry(entry, row, r)) for r in (1, 2, 3)]
        assert [p["runs"]["standard"] for p in parts] == [[1, 4], [2, 5], [3, 6]]
        assert [p["runs"]["uniform"] for p in parts] == [[1], [2], [3]]
        assert [p["proxy"]["seeds"] for p in parts] == [[0], [1], [2]]
        names = [n for p in parts for n in run_names(p)]
        assert sorted(names) == sorted(run_names(row)), name  # every run once, nothing added
    entry = shipped["datasets"]["sms_spam"]
    row = resolved("sms_spam", entry)
    assert [module.part_entry(entry, row, r)["runs"]["tanhmax"] for r in (1, 2, 3)] == [[], [1], []]
    with pytest.raises(ValueError, match="no B run"):  # three standard seeds: all three are A's
        module.part_entry(entry, {**row, "runs": {**row["runs"], "standard": [1, 2, 3]}}, 1)
    with pytest.raises(ValueError, match="has 3 replicates"):
        module.part_entry(entry, row, 4)
    # the documented command plans part 2 alone (dry run: keeps nothing)
    assert module.main(["sms_spam", "-d", str(tmp_path), "--part", "2", "-n"]) == 0
    written = yaml.safe_load((tmp_path / "local.yaml").read_text())["datasets"]["sms_spam"]["runs"]
    assert written == {"standard": [2, 5], "uniform": [2], "frozen": [], "tanhmax": [1], "additive": []}
    with pytest.raises(SystemExit):  # refused by name before anything runs
        module.main(["sms_spam", "-d", str(tmp_path / "p4"), "--part", "4", "-n"])
    assert not (tmp_path / "p4").exists()


@pytest.mark.process
def test_paper_row_block_continues_the_seed_lists_past_the_parts(tmp_path):
    """paper_row.py --parts 4-10: seven more replicates in one directory, each on fresh A, U and
    proxy seeds continuing the config's lists (no run of parts 1-3, nor a B of theirs), no
    other variant; a block that starts inside the parts, or of one replicate, is refused."""
    from attnlearn.agreement.compare import replicate_design

    module = _paper_rows("paper_row")
    assert module.main(["sms_spam", "-d", str(tmp_path), "--parts", "4-10", "-n"]) == 0
    entry = yaml.safe_load((tmp_path / "local.yaml").read_text())["datasets"]["sms_spam"]
    assert entry["runs"] == {"standard": list(range(7, 14)), "uniform": list(range(4, 11)), "frozen": [],
                             "tanhmax": [], "additive": []}
    assert entry["proxy"]["seeds"] == list(range(3, 10))
    design = replicate_design([f"standard-s{s}" for s in range(7, 14)], [f"uniform-s{s}" for s in range(4, 11)],
                              [str(s) for s in range(3, 10)])
    assert len(design) == 7 and all(d["independent"] for d in design)
    assert module.kept_folder(tmp_path, "sms_spam", "parts4-10") == tmp_path / "sms_spam" / "parts4-10"
    for bad in (["--parts", "3-10"], ["--parts", "4-4"], ["--parts", "4"], ["--parts", "4-5", "--part", "1"]):
        with pytest.raises(SystemExit):
            module.main(["sms_spam", "-d", str(tmp_path / "bad"), *bad, "-n"])
    assert not (tmp_path / "bad").exists()


@pytest.mark.process
def test_paper_row_factorial_grid_plans_every_pairing_of_its_own_seeds(tmp_path):
    """paper_row.py --factorial N: the first N standard, uniform and proxy seeds and nothing else
    (no frozen or TanhMax run), tabled under the factorial design (N^3 pairings, each role an
    index of its own), kept apart from the parts; a grid smaller than 2 or longer than the seed
    lists, or beside --part, is refused before anything is written."""
    from attnlearn.agreement.compare import replicate_design

    module = _paper_rows("paper_row")
    assert module.main(["sms_spam", "-d", str(tmp_path), "--factorial", "3", "-n"]) == 0
    local = yaml.safe_load((tmp_path / "local.yaml").read_text())
    entry = local["datasets"]["sms_spam"]
    assert entry["runs"] == {"standard": [1, 2, 3], "uniform": [1, 2, 3], "frozen": [], "tanhmax": [],
                             "additive": []}
    assert entry["proxy"]["seeds"] == [0, 1, 2] and local["tables"]["design"] == "factorial"
    cells = replicate_design(["standard-s1", "standard-s2", "standard-s3"], ["uniform-s1", "uniform-s2", "uniform-s3"],
                             ["0", "1", "2"], "factorial")
    assert len({(c["a_run"], c["u_run"], c["p_run"]) for c in cells}) == 27
    assert module.kept_folder(tmp_path, "sms_spam", "factorial") == tmp_path / "sms_spam" / "factorial"
    for bad in (["--factorial", "1"], ["--factorial", "4"], ["--factorial", "2", "--part", "1"]):
        with pytest.raises(SystemExit):
            module.main(["sms_spam", "-d", str(tmp_path / "bad"), *bad, "-n"])
    assert not (tmp_path / "bad").exists()


def test_paper_row_keep_runs_touches_the_runs_then_remakes_what_reads_them(tmp_path, monkeypatch):
    """paper_row.py --keep-runs: before the row's command, its training, probing and proxy jobs
    (and the data jobs they depend on) are marked up to date with snakemake --touch, again
    where Snakemake's first pass stops short (its issue 823); then the row runs as always and is
    kept. A touch that fails three times stops the row before it runs."""
    module = _paper_rows("paper_row")
    calls = []

    def fake_subprocess_run(argv, **kw):
        calls.append(argv)
        return subprocess.CompletedProcess(argv, 1 if len(calls) == 1 else 0)

    monkeypatch.setenv("ATTNLEARN_COMMIT", "x")  # the ledger's record names the commit without git
    monkeypatch.setattr(module.subprocess, "run", fake_subprocess_run)
    monkeypatch.setattr(module, "run", lambda cmd, *_: {"wall_s": 1.0, "cpu_s": 1.0, "returncode": 0, "commit": "x"})
    kept = []
    monkeypatch.setattr(module, "keep", lambda *a, **k: kept.append(a[0]) or tmp_path / "kept")
    (tmp_path / "row").mkdir()  # a row that ran before: --keep-runs keeps its runs
    (tmp_path / "row/row_invocations.jsonl").write_text("{}\n")
    assert module.main(["sms_spam", "-d", str(tmp_path / "row"), "--part", "2", "--keep-runs"]) == 0
    # this row holds no probe yet, so the probes are made, not touched (touched_rules)
    assert len(calls) == 2 and all(c[-4:] == ["--touch", "--until", "train", "proxy"] for c in calls)
    assert calls[0][calls[0].index("-d") + 1] == str(tmp_path / "row") and kept == [tmp_path / "row"]
    calls.clear()

    def failing_touch(argv, check=False, **kw):
        calls.append(argv)
        if check:
            raise subprocess.CalledProcessError(1, argv)
        return subprocess.CompletedProcess(argv, 1)

    monkeypatch.setattr(module.subprocess, "run", failing_touch)
    with pytest.raises(subprocess.CalledProcessError):
        module.main(["sms_spam", "-d", str(tmp_path / "row"), "--part", "2", "--keep-runs"])
    assert len(calls) == 3 and kept == [tmp_path / "row"]


@pytest.mark.process
def test_paper_row_on_a_gpu_lets_every_job_share_it_and_records_the_device(tmp_path, monkeypatch):
    """paper_row.py --device cuda: the jobs may all take the one GPU at once (the default
    profile's gpu=1 would run the trainings one by one), --deterministic makes the part's
    training exact, and run.json names the device; the config's device stays where none is
    given. A copy of the tree whose git metadata is stale names its commit in ATTNLEARN_COMMIT."""
    module = _paper_rows("paper_row")
    shipped = yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text())
    gpu = module.on_device(shipped, "sms_spam", "cuda", deterministic=True)
    assert gpu["device"] == "cuda" and gpu["datasets"]["sms_spam"]["train"]["deterministic"] is True
    assert "deterministic" not in shipped["datasets"]["sms_spam"].get("train", {})  # the shipped config untouched
    cmd = module.command("sms_spam", gpu, tmp_path, 6)
    assert cmd[cmd.index("--resources") + 1] == "gpu=6" and cmd.index("--resources") < cmd.index("--configfile")
    assert "--resources" not in module.command("sms_spam", module.on_device(shipped, "sms_spam", None, False),
                                               tmp_path, 2)  # device cpu, as paper_cpu.yaml says
    assert module.device_record("cpu") == {"device": "cpu"}
    monkeypatch.setenv("ATTNLEARN_COMMIT", "abc1234")
    assert module.commit() == "abc1234"
    assert module.main(["sms_spam", "-d", str(tmp_path), "--part", "1", "--device", "cuda", "-n"]) == 0
    written = yaml.safe_load((tmp_path / "local.yaml").read_text())
    assert written["device"] == "cuda" and "deterministic" not in written["datasets"]["sms_spam"].get("train", {})


def _small_newsgroups_row(tmp_path, steps=20):
    """paper_cpu.yaml's 20 Newsgroups row on the real data copy, with tiny models: two parts."""
    shipped = yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text())
    entry = shipped["datasets"]["newsgroups"]
    entry.update(runs={"standard": [1, 2, 3, 4], "uniform": [1, 2], "frozen": [], "tanhmax": []},
                 proxy={"seeds": [0, 1], "epochs": 2, "embed": 8}, model={"embed": 8, "hidden": 8, "att_hidden": 8},
                 train={"steps": steps, "batch_size": 8, "checkpoints": {"steps": [0, 10], "every": None}},
                 probe={"max_examples": 20, "batch_size": 8})
    config = tmp_path / "row.yaml"
    config.write_text(yaml.safe_dump({**shipped, "datasets": {"newsgroups": entry}}))
    return config


@pytest.mark.process
def test_paper_row_tables_with_the_code_of_its_own_checkout(tmp_path):
    """A command of paper_rows/ run from another checkout (a worktree at the row's commit, or a GPU
    node's copy with nothing installed) runs that checkout's attnlearn, the code its jobs run,
    not the installed one (a lease's first call failed on `No module named 'attnlearn'`)."""
    copy = tmp_path / "checkout"
    for sub in ("paper_rows", "src"):
        shutil.copytree(REPO / sub, copy / sub, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    with open(copy / "src/attnlearn/rows/__init__.py", "a") as f:  # says which copy of the stage ran
        f.write("\nprint('rows from', Path(__file__).resolve().parent)\n")
    (tmp_path / "ledger.jsonl").write_text("")
    out = subprocess.run([sys.executable, str(copy / "paper_rows/ledger.py"), str(tmp_path / "ledger.jsonl")],
                         capture_output=True, text=True, check=True, cwd=tmp_path)
    assert f"rows from {copy / 'src/attnlearn/rows'}" in out.stdout


@pytest.mark.workflow
def test_paper_row_killed_outright_resumes_with_unlock_keeping_its_finished_jobs(tmp_path, capfd):
    """A part killed by SIGKILL mid-training (a machine lost) leaves Snakemake's lock: the same
    command is refused with a message naming --unlock, and with --unlock it resumes, rerunning
    none of the jobs that had finished, and keeps the part (a fault met on a resumed Multi30k part)."""
    module = _paper_rows("paper_row")
    work, rows = tmp_path / "w", tmp_path / "rows"
    argv = ["newsgroups", "-d", str(work), "--part", "1", "--config", str(_small_newsgroups_row(tmp_path, 400)),
            "--out", str(rows)]
    proc = subprocess.Popen([sys.executable, str(REPO / "paper_rows/paper_row.py"), *argv], start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first_checkpoint = work / "results/runs/newsgroups/standard-s1/checkpoints/step00000010.pt"
    tokenizer = work / "results/tokenized/newsgroups/tokenizer.json"
    for _ in range(600):  # until a training has saved a checkpoint
        if first_checkpoint.exists() or proc.poll() is not None:
            break
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert first_checkpoint.exists() and not (rows / "newsgroups").exists()  # the ledger alone, no kept part
    assert "started" in (rows / "ledger.jsonl").read_text()
    made = tokenizer.stat().st_mtime_ns
    assert module.main(argv) != 0
    assert "same command and --unlock" in capfd.readouterr().err
    assert module.main([*argv, "--unlock"]) == 0
    assert tokenizer.stat().st_mtime_ns == made  # finished before the kill: not rerun
    record = json.loads((rows / "newsgroups/part1/run.json").read_text())
    killed, refused, resumed = record["invocations"]  # the kill outright stays on record (invocations.py)
    assert killed["killed"] and killed["returncode"] is None and killed["cpu_s"] is None
    assert refused["returncode"] != 0 and resumed["returncode"] == 0 and record["killed_invocations"] == 1


def test_parallel_parts_deals_the_cores_by_the_parts_trainings():
    module = _paper_rows("parallel_parts")
    assert module.deal_cores([3, 3, 5, 4, 4], 16) == [3, 3, 4, 3, 3]
    assert module.deal_cores([3, 5], 4) == [2, 2] and module.deal_cores([3, 5], 20) == [3, 5]  # never past a width
    with pytest.raises(ValueError, match="3 cores for 4 parts"):
        module.deal_cores([1, 1, 1, 1], 3)
    assert module.parse_part("multi30k:3") == ("multi30k", 3)
    assert module.niceness(1) == [0] and module.niceness(2) == [0, 19] and module.niceness(3) == [0, 10, 19]
    paper_cpu = yaml.safe_load((REPO / "config/paper_cpu.yaml").read_text())
    # 20 Newsgroups part 2: A, B, U and its proxy train side by side; part 1 adds F
    assert [module.trainings(paper_cpu, "newsgroups", part) for part in (1, 2)] == [5, 4]
    args = argparse.Namespace(config=Path("c.yaml"), data=Path("d"), out=Path("o"), device="cuda", deterministic=False,
                              unlock=True)  # after a kill outright every part is unlocked first
    cmd = module.part_command(args, "multi30k", 3, Path("w"), 4)
    assert cmd[1:6] == [str(REPO / "paper_rows/paper_row.py"), "multi30k", "-d", "w", "--part"]
    assert "--unlock" in cmd and cmd[cmd.index("--device") + 1] == "cuda" and "--deterministic" not in cmd
    with pytest.raises(SystemExit):
        module.main(["multi30k-3", "-d", "/nonexistent"])  # refused by name: DATASET:PART


def test_parallel_parts_dry_run_says_each_parts_cores_and_niceness(capsys):
    """--dry-run prints what would start and starts nothing: by priority, every part with all the
    cores (at most its trainings), the first at nice 0 and the last at 19; --at-once, the parts
    past the first K wait for a running part's cores."""
    module = _paper_rows("parallel_parts")
    assert module.main(["newsgroups:2", "sms_spam:3", "multi30k:1", "-d", "/nonexistent/w", "--cores", "2",
                        "--by-priority", "--dry-run"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in lines] == ["newsgroups part 2", "sms_spam part 3", "multi30k part 1"]
    assert [re.search(r"nice (\d+)", line)[1] for line in lines] == ["0", "10", "19"]
    assert all("at once on 2 cores" in line and line.endswith("--cores 2") for line in lines)
    assert not Path("/nonexistent/w").exists()
    assert module.main(["newsgroups:2", "newsgroups:3", "-d", "/w", "--at-once", "1", "--dry-run"]) == 0
    first, waiting = capsys.readouterr().out.splitlines()
    assert "at once on 2 cores" in first and "when a running part ends, on its C cores (at most 4)" in waiting


@pytest.mark.process
def test_a_part_run_by_priority_runs_at_its_niceness_in_its_own_session():
    """The child of a part run --by-priority and what it starts run at the part's niceness, and
    so does its session's autogroup where the kernel has them: there each session shares the CPU
    equally whatever its processes' niceness (Multi30k's parts 2 and 3, started at nice 10 and 19
    in a session of their own, got as much CPU as part 1's session at nice 0: a core each)."""
    module = _paper_rows("parallel_parts")
    probe = ("import os, pathlib; g = pathlib.Path('/proc/self/autogroup'); "
             "print(os.nice(0), g.read_text().split()[-1] if g.exists() else 'none')")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                         start_new_session=True, preexec_fn=module.lowered(7)).stdout.split()
    assert out[0] == str(os.nice(0) + 7) and out[1] in ("7", "none")


@pytest.mark.process
def test_parallel_parts_that_fails_ends_its_parts(tmp_path, monkeypatch):
    """An error while the parts run (here, in reading their progress; in a test, its timeout)
    ends them before it is raised: each part is a session of its own, which a stop of the
    launcher's group does not reach (a timed-out test's part ran on for 20 minutes)."""
    module = _paper_rows("parallel_parts")
    pid_file = tmp_path / "part.pid"
    monkeypatch.setattr(module, "part_command", lambda *a: [
        sys.executable, "-c", f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(600)"])

    def progress(work):
        for _ in range(300):  # the part has started when it has written its pid
            if pid_file.is_file() and pid_file.read_text():
                raise RuntimeError("reading the part's log failed")
            time.sleep(0.1)
    monkeypatch.setattr(module, "progress", progress)

    def callers(signum, frame):  # the caller's own handler, not Python's default (CI's run had another)
        raise KeyboardInterrupt
    before = signal.signal(signal.SIGINT, callers)
    try:
        with pytest.raises(RuntimeError, match="log failed"):
            module.main(["sms_spam:2", "-d", str(tmp_path / "w"), "--report-every", "0"])
        assert signal.getsignal(signal.SIGINT) is callers  # Ctrl-C is the caller's again
    finally:
        signal.signal(signal.SIGINT, before)
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)


def test_parallel_parts_reports_the_jobs_done_and_each_running_trainings_step(tmp_path):
    """A part's progress line reads the console's log (lines as a real part wrote them): the
    last count of finished jobs and the latest step of each training not yet done; it said
    'starting' for the whole of a part once the console replaced Snakemake's 'N of M steps'."""
    module = _paper_rows("parallel_parts")
    assert module.progress(tmp_path) == "starting"
    (tmp_path / "row.log").write_text("""Job stats:
14:58:59  done tokenize (ng, x) -> results/tokenized/ng/ (4 files)  (0 s)  | 3 of 18 jobs (16%), about 0 s left
    train (ng, standard-s4): step 70 of 4,000 (1%), 23 min 23 s left
    train (ng, uniform-s1): step 12 of 4,000 (0%), 40 min 2 s left
    train (ng, standard-s4): step 147 of 4,000 (3%), 22 min 35 s left
""")
    assert module.progress(tmp_path) == ("3 of 18 jobs (16%); train (ng, standard-s4): step 147 of 4,000 (3%); "
                                         "train (ng, uniform-s1): step 12 of 4,000 (0%)")
    with open(tmp_path / "row.log", "a") as f:
        f.write("15:20:00  done train (ng, standard-s4) -> results/runs/ng/standard-s4/  (21 min)  | 4 of 18 jobs (22%)\n")
    assert module.progress(tmp_path) == "4 of 18 jobs (22%); train (ng, uniform-s1): step 12 of 4,000 (0%)"


@pytest.mark.workflow
def test_parallel_parts_stopped_packs_where_each_part_stood_and_the_same_command_finishes_them(tmp_path):
    """Two parts of a real-data row (20 Newsgroups from ../shared/data, tiny models), one at a
    time, stopped early: the unfinished part leaves its logs packed, the waiting one does not
    start, nothing is kept. The same command with both at once then finishes them, keeps and
    packs each, and run.json sums every invocation, the stopped one too."""
    module = _paper_rows("parallel_parts")
    config = _small_newsgroups_row(tmp_path)
    rows, packed = tmp_path / "rows", tmp_path / "packed"
    argv = ["newsgroups:1", "newsgroups:2", "-d", str(tmp_path / "w"), "--config", str(config),
            "--out", str(rows), "--cores", "2", "--pack", str(packed), "--report-every", "3"]
    assert module.main([*argv, "--at-once", "1", "--stop-after", "12"]) == 1
    assert not (rows / "newsgroups").exists() and not (tmp_path / "w/newsgroups_part2").exists()
    with tarfile.open(packed / "newsgroups_part1.unfinished.tar.gz") as tar:
        assert "newsgroups_part1.unfinished/work_row.log" in tar.getnames()
    assert sorted(p.name for p in packed.iterdir()) == ["newsgroups_part1.unfinished.tar.gz"]
    assert module.main(argv) == 0
    assert sorted(p.name for p in packed.iterdir()) == ["newsgroups_part1.tar.gz", "newsgroups_part2.tar.gz"]
    for part, standard, stopped in ((1, [1, 3], [True, False]), (2, [2, 4], [False])):
        record = json.loads((rows / f"newsgroups/part{part}/run.json").read_text())
        assert record["config"]["runs"]["standard"] == standard
        assert [i["returncode"] != 0 for i in record["invocations"]] == stopped  # the stopped one counted
        assert record["invocations"][-1]["device"] == "cpu"
        with tarfile.open(packed / f"newsgroups_part{part}.tar.gz") as tar:
            assert f"newsgroups_part{part}/part{part}/tables/table2_replicates.parquet" in tar.getnames()


@pytest.mark.workflow
def test_reproduction_rows_pools_a_rows_parts(tiny_run, tmp_path, capsys):
    """Parts kept by paper_row.py --part are pooled into one row, over the same replicate values
    as the pipeline's own intervals; parts that share a run are refused."""
    module = _paper_rows("reproduction_rows")
    tables = tiny_run / "results/tables"
    reps = pd.read_parquet(tables / "table2_replicates.parquet")
    reps = reps[reps["dataset"] == "tiny_cls"]
    for i, (_, rep) in enumerate(reps.iterrows()):  # one replicate a part, each with its own B run
        part = tmp_path / "rows/tiny_cls" / f"part{i + 1}/tables"
        part.mkdir(parents=True)
        one = reps.loc[[rep.name]].copy()
        one["b_runs"] = [[f"standard-s{10 + i}"]]
        one.to_parquet(part / "table2_replicates.parquet")
    # appendix A.1's additive runs, one in each of two parts, are pooled as the pipeline's table does
    analyses = tiny_run / "results/analyses/tiny_mt"
    for name in ("optimal_attention", "optimal_performance"):
        df = pd.read_parquet(analyses / f"{name}.parquet")
        for i, keep in enumerate((df["run"] != "additive-s2", df["run"] == "additive-s2")):
            (tmp_path / f"rows/tiny_cls/part{i + 1}/analyses").mkdir(exist_ok=True)
            df[keep].to_parquet(tmp_path / f"rows/tiny_cls/part{i + 1}/analyses/{name}.parquet")
    assert module.main([str(tmp_path / "rows/tiny_cls")]) == 0
    out = capsys.readouterr().out
    iv = pd.read_parquet(tables / "table2_intervals.parquet").set_index(["dataset", "column"])
    row = iv.loc[("tiny_cls", "agr_alpha_xi_uniform")]
    assert f"| tiny_cls, ours (n = 3) | {100 * row['mean']:.1f} [{100 * row['pi_low']:.1f}, " in out
    pipeline = (tables / "optimal_attention.md").read_text()
    section = pipeline[pipeline.index("## tiny_mt"):].split("\n\n")[:2]
    assert "\n\n".join(section) in out and "| 2 |" in section[1]
    shutil.copytree(tmp_path / "rows/tiny_cls/part1", tmp_path / "rows/tiny_cls/part4")
    assert module.main([str(tmp_path / "rows/tiny_cls")]) == 2
    assert "share runs" in capsys.readouterr().err



@pytest.mark.workflow
def test_reproduction_rows_pools_a_block_without_its_shared_b_columns(tiny_run, tmp_path, capsys):
    """A --parts block (its replicates read each other's A runs as B) pools with the parts: the
    columns that read only A, U and the proxy over every replicate, those that read B over the
    parts alone (n says so); a block that reuses a part's run is refused."""
    from attnlearn.agreement.replicates import shared_b
    from attnlearn.statistics import t_intervals

    module = _paper_rows("reproduction_rows")
    reps = pd.read_parquet(tiny_run / "results/tables/table2_replicates.parquet")
    reps = reps[reps["dataset"] == "tiny_cls"].reset_index(drop=True)  # the rotate design: B = the others' A
    assert shared_b(reps).all()
    part = reps.iloc[[0]].assign(a_run="standard-s20", u_run="uniform-s20", p_run="20", b_runs=[["standard-s21"]])
    (tmp_path / "rows/tiny_cls/part1/tables").mkdir(parents=True)
    part.to_parquet(tmp_path / "rows/tiny_cls/part1/tables/table2_replicates.parquet")
    (tmp_path / "rows/tiny_cls/parts2-4/tables").mkdir(parents=True)
    reps.to_parquet(tmp_path / "rows/tiny_cls/parts2-4/tables/table2_replicates.parquet")
    pooled = module.pool([part, reps])
    n = len(reps) + 1
    assert len(pooled) == n
    assert pooled["agr_alpha_xi_standard"].notna().sum() == 1 and pooled["agr_alpha_xi_uniform"].notna().sum() == n
    assert module.main([str(tmp_path / "rows/tiny_cls")]) == 0
    out = capsys.readouterr().out
    iv = t_intervals(pd.concat([part, reps])["agr_alpha_xi_uniform"])
    assert f"| tiny_cls, ours (n = {n}) | {100 * iv['mean']:.1f} [" in out
    assert f"(n = 1 of {n})" in out  # A(alpha*, xi^B): the part alone
    with pytest.raises(ValueError, match="share runs"):
        module.pool([reps.iloc[[0]].assign(b_runs=[["standard-s21"]]), reps])


@pytest.mark.workflow
def test_reproduction_rows_sets_each_tanhmax_run_against_the_rows_softmax_runs(tiny_run, tmp_path, capsys):
    """A row's TanhMax run, kept in one of its parts, is read against every standard run of the
    row (best accuracy, pooled over the parts' performance tables) and against the replicates'
    A(alpha*, xi^uf): one more draw set against a 95% prediction interval with the examples'
    error, no verdict where it is not known (these parts keep no agreement table, so the
    accuracy's count of examples is not known; the agreement has its bootstrap)."""
    from attnlearn.agreement.replicates import column_interval

    module = _paper_rows("reproduction_rows")
    tables = tiny_run / "results/tables"
    reps = pd.read_parquet(tables / "table2_replicates.parquet")
    reps = reps[reps["dataset"] == "tiny_cls"]
    perf = pd.read_parquet(tables / "performance.parquet")
    perf = perf[perf["dataset"] == "tiny_cls"]
    tanhmax = pd.read_parquet(tiny_run / "results/analyses/tiny_cls/tanhmax.parquet")
    for i, (_, rep) in enumerate(reps.iterrows()):  # part i+1 holds A's run and the perf of its own runs
        part = tmp_path / "rows/tiny_cls" / f"part{i + 1}"
        (part / "tables").mkdir(parents=True)
        one = reps.loc[[rep.name]].copy()
        one["b_runs"] = [[f"standard-s{10 + i}"]]
        one.to_parquet(part / "tables/table2_replicates.parquet")
        perf[perf["run"] == rep["a_run"]].to_parquet(part / "tables/performance.parquet")
    (tmp_path / "rows/tiny_cls/part2/analyses").mkdir()
    tanhmax.to_parquet(tmp_path / "rows/tiny_cls/part2/analyses/tanhmax.parquet")
    assert module.main([str(tmp_path / "rows/tiny_cls")]) == 0
    out = capsys.readouterr().out
    t = tanhmax[tanhmax["activation"] == "tanhmax"].set_index("metric")["value"]
    best = [perf.loc[perf["run"] == r, "value"].max() for r in reps["a_run"]]
    boot = float((reps["agr_alpha_xi_uniform_boot_sd"] ** 2).mean())
    for measure, value, softmax, boot_var in (("best accuracy", t["accuracy"], best, float("nan")),
                                              ("A(|w|, xi^uf)", t["agreement_alpha_xi_uniform"],
                                               reps["agr_alpha_xi_uniform"], boot)):
        iv = column_interval("tiny_cls", softmax, boot_var, None, float(value))
        where = {None: "-", True: "inside", False: "**outside**"}[iv["paper_in_pi"]]
        measure = measure.replace("|", "\\|")  # a Markdown cell
        assert (f"| tiny_cls | tanhmax-s1 | {measure} | {100 * value:.1f} | {100 * iv['mean']:.1f} "
                f"[{100 * iv['pi_low']:.1f}, {100 * iv['pi_high']:.1f}] (3) | {where} |") in out
    (tmp_path / "rows/tiny_cls/part3/analyses").mkdir()
    tanhmax.to_parquet(tmp_path / "rows/tiny_cls/part3/analyses/tanhmax.parquet")  # one run kept twice
    assert module.main([str(tmp_path / "rows/tiny_cls")]) == 2
    assert "same TanhMax run" in capsys.readouterr().err


@pytest.mark.workflow
def test_paper_row_keeps_a_finished_rows_tables_and_its_times(tiny_run, tmp_path):
    """paper_rows/paper_row.py: a finished row's tables and analyses are copied whole beside
    run.json (its command and the summed invocations), replacing an older copy; an unfinished
    row is refused by name, and reproduction_rows.py reads the kept copy."""
    module = _paper_rows("paper_row")
    entry = yaml.safe_load(TINY.read_text())["datasets"]["tiny_cls"]
    config = {"datasets": {"tiny_cls": entry}}
    cmd = module.command("tiny_cls", config, tmp_path / "w", 2)
    assert cmd.index("results/tables/tables.md") < cmd.index("--configfile")
    assert ("results/analyses/tiny_cls/tanhmax.parquet" in cmd) == bool(entry["runs"].get("tanhmax"))
    assert "results/tables/optimal_attention.md" not in cmd
    with open(tiny_run / "row_invocations.jsonl", "w") as f:
        for wall, cpu in [(10.0, 15.0), (20.5, 30.0)]:  # a killed invocation, then the resumed one
            f.write(json.dumps({"wall_s": wall, "cpu_s": cpu, "returncode": 0}) + "\n")
    out = tmp_path / "rows"
    (out / "tiny_cls" / "stale").mkdir(parents=True)
    dest = module.keep(tiny_run, "tiny_cls", out, cmd, entry)
    (tiny_run / "row_invocations.jsonl").unlink()
    assert not (dest / "stale").exists() and sorted(p.name for p in out.iterdir()) == ["tiny_cls"]
    record = json.loads((dest / "run.json").read_text())
    assert record["wall_s"] == 30.5 and record["cpu_s"] == 45.0 and len(record["invocations"]) == 2
    assert record["config"] == entry and "--config 'only=[tiny_cls]'" in record["command"]
    kept = pd.read_parquet(dest / "tables/table2_replicates.parquet")
    pd.testing.assert_frame_equal(kept, pd.read_parquet(tiny_run / "results/tables/table2_replicates.parquet"))
    assert _paper_rows("reproduction_rows").main([str(dest / "tables")]) == 0
    assert _paper_rows("reproduction_rows").main([str(dest)]) == 0  # a kept row's folder
    part = module.keep(tiny_run, "tiny_cls", tmp_path / "parts", cmd, entry, part=2)
    assert part == tmp_path / "parts/tiny_cls/part2" and json.loads((part / "run.json").read_text())["part"] == 2
    assert "row" not in json.loads((part / "run.json").read_text())
    # a part of another budget kept beside the dataset's own row names its row (reproduction_rows reads it)
    other = module.keep(tiny_run, "tiny_cls", tmp_path / "parts", cmd, entry, part=1, row="tiny_cls_long")
    assert other == tmp_path / "parts/tiny_cls_long/part1"
    assert json.loads((other / "run.json").read_text())["row"] == "tiny_cls_long"
    with pytest.raises(FileNotFoundError, match="table2_replicates.parquet"):
        module.keep(tmp_path / "unfinished", "tiny_cls", out, cmd, entry)


@pytest.mark.process
def test_paper_row_runs_its_jobs_on_its_own_checkouts_code_and_names_a_change_during_the_row(
        tmp_path, monkeypatch, capfd):
    """A row's jobs import the code of the checkout paper_row.py runs from (its src/ first on
    PYTHONPATH), not whatever the installed package points at; a commit or an edit made while
    the row runs is recorded in the invocation as commit_end and named on stderr."""
    module = _paper_rows("paper_row")
    repo = tmp_path / "checkout"
    (repo / "src").mkdir(parents=True)
    (repo / "notes.txt").write_text("before\n")
    # the 'row': a module found only on the checkout's src/, which edits a tracked file meanwhile
    (repo / "src/row_job.py").write_text("import pathlib; print('job ran from', pathlib.Path(__file__).parent)\n"
                                         "pathlib.Path('notes.txt').write_text('edited during the row')\n")
    for git in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *git], cwd=repo, check=True)
    monkeypatch.setattr(module, "REPO", repo)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "elsewhere"))
    result = module.run(["row_job"])
    out, err = capfd.readouterr()
    assert result["returncode"] == 0 and f"job ran from {repo / 'src'}" in out
    assert result["commit"] and not result["commit"].endswith("+uncommitted")
    assert result["commit_end"] == result["commit"] + "+uncommitted" and "went from" in err
    (repo / "src/row_job.py").write_text("print('a row that leaves the checkout alone')\n")
    subprocess.run(["git", "checkout", "-q", "notes.txt"], cwd=repo, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "d"], cwd=repo, check=True)
    assert "commit_end" not in module.run(["row_job"])


def _diagnostic(name):
    return script_module(f"diagnostics/{name}.py")


@pytest.mark.workflow
def test_probe_lengths_reprobes_the_rows_checkpoints_as_the_pipeline_does(tiny_run):
    """diagnostics/probe_lengths.py (docs/reproduction.md, 20 Newsgroups' probing cut): at the
    row's own cut (none here) it gives Table 2's A(alpha*, xi^uf) and A(g*, xi^uf); a shorter
    cut probes shorter texts."""
    module = _diagnostic("probe_lengths")
    results = tiny_run / "results"
    same, star, n = module.recut_agreement(TINY, results, "tiny_cls", None, 10**6)
    table2 = pd.read_parquet(results / "tables/table2.parquet").set_index("dataset").loc["tiny_cls"]
    for column in ("agr_alpha_xi_uniform", "agr_grad_xi_uniform"):
        assert same[column].max() == pytest.approx(table2[column])
    assert len(same) == len(pd.read_parquet(results / "probes/tiny_cls/uniform-s1.perf.parquet"))
    cut, _, _ = module.recut_agreement(TINY, results, "tiny_cls", 4, 10**6)
    assert (cut["random_baseline"] > same["random_baseline"]).all()  # 4 positions: 1 in 4 is a hit


@pytest.mark.workflow
def test_attended_words_splits_table_2s_agreement_by_the_attended_word(tiny_run):
    """diagnostics/attended_words.py (docs/reproduction.md, what 20 Newsgroups' run A attends):
    its agreement is Table 2's A(alpha*, xi^uf), its words' texts add up to it, and widening
    the window to whole texts makes every text a hit."""
    module = _diagnostic("attended_words")
    results = tiny_run / "results"
    texts, read = module.attended(results, "tiny_cls", "standard-s1", "uniform-s1")
    table2 = pd.read_parquet(results / "tables/table2.parquet").set_index("dataset").loc["tiny_cls"]
    assert texts["hit"].mean() == pytest.approx(table2["agr_alpha_xi_uniform"])
    words = module.by_word(texts, "alpha_word", 10**6)
    assert words["texts"].sum() == len(texts)
    assert (words["texts"] * words["agreement"]).sum() == pytest.approx(texts["hit"].sum())
    vocab = set(json.loads((results / "tokenized/tiny_cls/tokenizer.json").read_text())["vocab"])
    assert set(texts["alpha_word"]) <= vocab and set(texts["xi_word"]) <= vocab
    whole = read["alpha"].shape[1]
    assert module.near_agreement(read["alpha"], read["xi"], whole).mean() == 1.0
    assert module.near_agreement(read["alpha"], read["xi"], 1).mean() >= texts["hit"].mean()
    # the chance value printed beside it: at a window of 0, Table 2's random baseline
    assert module.near_baseline(read["xi"], 0).mean() == pytest.approx(table2["random_baseline"])
    assert module.near_baseline(read["xi"], 1).mean() >= table2["random_baseline"]
