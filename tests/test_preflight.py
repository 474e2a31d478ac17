"""The preflight (rule preflight, workflow/scripts/preflight.py; docs/slurm.md): on this CPU
machine its measuring path runs for real (device cpu), and each failure a GPU node can have
is simulated (torch.cuda, the driver's version, SLURM's environment patched), checking that
the message names the fix."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from attnlearn.cost import jobs as cost_jobs, rates
from attnlearn.probing import timing
from attnlearn.reporting import config_cost as cc
from attnlearn.runtime import gpu_check as gc
from attnlearn.runtime.commit import checkout_commit
from conftest import script_module
from test_workflow import REPO, TINY, snakemake

pf = script_module("workflow/scripts/preflight.py")

SLURM_JOB = {"SLURM_JOB_ID": "42", "SLURM_JOB_PARTITION": "cpu", "SLURMD_NODENAME": "n7"}


def small_config(folder, device="cpu"):
    """The tiny config's translation and classification datasets, nothing else."""
    config = yaml.safe_load(TINY.read_text())
    config.pop("experiments", None)
    config["device"] = device
    config["datasets"] = {d: config["datasets"][d] for d in ("tiny_mt", "tiny_cls")}
    path = folder / "small.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


# -- the measuring path, on the CPU ---------------------------------------------------------------

@pytest.mark.workflow
def test_preflight_job_on_cpu_estimates_each_job_against_its_time_limit(tmp_path):
    """The rule as a job: the report has a row per dataset and estimated rule, with the time
    limit the run's resources give that rule (here --set-resources, as the profile's are)."""
    config = small_config(tmp_path)
    stacked = ["--config", "override={train: {stack: 2}}"]  # train.stack: fewer train jobs, counted as planned
    snakemake("--cores", "1", "--configfile", config, *stacked, "-f", "preflight", "--set-resources",
              "train:runtime=700", "probe:runtime=200", "probe_train:runtime=300", cwd=tmp_path)
    report = (tmp_path / "results/preflight/report.md").read_text()
    plan = job_stats(snakemake("-n", "--configfile", config, *stacked, cwd=tmp_path / "plan").stdout)
    counts = priced_counts(report)
    assert counts == {rule: plan[rule] for rule in counts} and counts["train"] < counts["probe"]
    measured = rates.read_rates(tmp_path / "results/preflight/rates.tsv")  # in the GPU rates table's format
    assert {(r["dataset"], r["stage"], r["device"]) for r in measured} == {
        (d, stage, "cpu") for d in ("tiny_mt", "tiny_cls") for stage in ("train", "probe")}
    assert "device cpu: no GPU needed" in report
    rows = re.findall(r"^\| (\w+) \| (\w+) \| ([\d.]+) \| (\d+) \| ([\d.]+) \| (\w+) \| ([\d.]+) \| (\d+) \| (.*) \|$",
                      report, re.M)
    rules = ("train", "probe", "probe_train")  # tiny: tables.train_split
    assert {(r[0], r[5]) for r in rows} == {(d, rule) for d in ("tiny_mt", "tiny_cls") for rule in rules}
    for dataset, lengths, per_step, steps, per_example, rule, estimate, limit, verdict in rows:
        assert lengths == "config" and steps == "20"  # tiny: generated data, train.steps 20
        assert float(per_step) > 0 and float(per_example) > 0
        assert limit == {"train": "700", "probe": "200", "probe_train": "300"}[rule] and verdict == "ok"
        if rule == "train":
            assert float(estimate) == pytest.approx(float(per_step) * 20 / 60, abs=0.051)


def test_sizes_come_from_the_tokenized_splits_where_they_exist(tmp_path):
    d = {"task": "translation", "tokenizer": {"max_tokens": 5}, "source": {"kind": "iwslt14"}}
    n_train, n_valid, lens, where = cc.split_sizes(tmp_path, "ds", d)  # not downloaded: the paper's sizes
    assert (n_train, n_valid, lens.tolist(), where) == (160240, 7284, [[5, 5]], "paper (Table 9)")
    mine = {**d, "tokenizer": {}, "source": {"kind": "own_translation"}}
    assert cc.split_sizes(tmp_path, "ds", mine)[:2] == (None, None)
    assert cc.split_sizes(tmp_path, "ds", mine)[3] == "assumed"
    sms = {"task": "classification", "tokenizer": {}, "source": {"kind": "sms_spam", "options": {"n_train": 3500}}}
    assert cc.split_sizes(tmp_path, "sms_spam", sms)[0] == 3500  # the config's split size
    (tmp_path / "ds").mkdir()
    pd.DataFrame({"src_ids": [[1, 5, 2], [1, 5, 6, 7, 8, 9, 2]], "tgt_ids": [[1, 2], [1, 4, 2]]}).to_parquet(
        tmp_path / "ds" / "train.parquet")
    pd.DataFrame({"src_ids": [[1, 2]] * 3, "tgt_ids": [[1, 2]] * 3}).to_parquet(tmp_path / "ds" / "valid.parquet")
    n_train, n_valid, lens, where = cc.split_sizes(tmp_path, "ds", d)
    assert (n_train, n_valid, where) == (2, 3, "tokenized")
    assert lens.tolist() == [[3, 2], [5, 3]]  # cut at tokenizer.max_tokens


def test_job_minutes_multiply_the_config_sizes():
    m = {"s_per_step": 0.5, "s_per_example": 0.01, "best_share": 0.0, "steps": 1200, "n_valid": 10_000,
         "train": {"checkpoints": {"steps": [0, 100], "every": 500, "last": True}},
         "probe": {"max_examples": 4000}}
    minutes = cc.job_minutes(m)
    ckpts = 5  # 0, 100, 500, 1000, 1200
    assert minutes["train"] == pytest.approx(0.5 * 1200 / 60)
    assert minutes["probe"] == pytest.approx(0.01 * 4000 * ckpts / 60)  # capped at probe.max_examples
    assert cc.job_minutes({**m, "steps": None}) == {"train": None, "probe": None, "probe_train": None}


def test_probe_at_best_measures_are_paid_at_the_best_checkpoints_alone():
    """probe.at_best: its measures' share of a checkpoint's probe is paid at the best checkpoint by
    each metric (BLEU's too where probed, never on the training split), the rest at all five."""
    m = {"s_per_step": 0.5, "s_per_example": 0.01, "best_share": 0.8, "steps": 1200, "n_valid": 4000,
         "train": {"checkpoints": {"steps": [0, 100], "every": 500, "last": True}},
         "probe": {"max_examples": 4000}}
    minutes = cc.job_minutes(m)
    assert minutes["probe"] == pytest.approx(0.01 * 4000 * (5 * 0.2 + 1 * 0.8) / 60)
    assert minutes["probe_train"] == pytest.approx(minutes["probe"])
    with_bleu = cc.job_minutes({**m, "probe": {"max_examples": 4000, "bleu": True}})
    assert with_bleu["probe"] == pytest.approx(0.01 * 4000 * (5 * 0.2 + 2 * 0.8) / 60)
    assert with_bleu["probe_train"] == pytest.approx(minutes["probe_train"])


def measured(steps=6000, dataset="ds"):
    """A dataset measured at 0.6 s a step and 0.01 s an example and checkpoint."""
    return {"dataset": dataset, "s_per_step": 0.6, "s_per_example": 0.01, "best_share": 0.0, "steps": steps,
            "n_valid": 4000,
            "train": {"checkpoints": {"steps": [0], "every": None}}, "probe": {"max_examples": 4000}}


JOBS = {"train": [1, 1, 1, 1], "probe": 4, "probe_train": 0, "proxy": 1, "proxy_probe_train": 0}


def test_the_report_totals_the_planned_jobs_and_their_wall_time_on_several_devices():
    """A user sizing a cluster run needs the whole config, not one job of each rule; the jobs
    are counted as the rule passes them (gpu_jobs: the plan's), proxies included."""
    costs = [cc.measured_cost(measured(), JOBS), cc.measured_cost(measured(steps=None, dataset="later"), JOBS)]
    line = cc.totals(costs, "GPU-hours on this machine's GPU", at_once=(1, 4))
    train, probe = 0.6 * 6000 / 3600, 0.01 * 4000 * 2 / 3600  # 4 runs: a training of 1 h and a probe of 80 s each
    hours = 4 * (train + probe)
    assert line.startswith("Total: 18 training and probing jobs as planned (8 train, 8 probe, 0 probe_train, "
                           f"2 proxy, 0 proxy_probe_train), {hours:,.1f} GPU-hours on this machine's GPU")
    assert f"1 at once {hours:,.1f} h, 4 at once {train + probe:,.1f} h" in line
    assert "Not counted (sizes unknown until tokenized): later." in line


def test_the_wall_time_is_never_shorter_than_the_longest_chain_of_dependent_jobs():
    """config/paper.yaml's preflight once said 'at best 39.4 h' at 32 at once, shorter than
    IWSLT'14's own training then its probe (1,091.5 + 1,312.6 min = 40.1 h): a probe waits for
    its run's training, so no number of GPUs runs the two side by side."""
    iwslt = {**measured(), "s_per_step": 1091.5 * 60 / 6000, "s_per_example": 1312.6 * 60 / (2 * 4000)}
    many = {**measured(dataset="small"), "s_per_step": 0.01}
    jobs = {**JOBS, "train": [1] * 7, "probe": 7}
    costs = [cc.measured_cost(iwslt, jobs), cc.measured_cost(many, {**jobs, "train": [1] * 300, "probe": 300})]
    chain = (1091.5 + 1312.6) / 60
    line = cc.totals(costs, "GPU-hours", at_once=(1, 32))
    assert f"32 at once {chain:,.1f} h: never less than the longest chain of dependent jobs, ds's longest training " \
           f"then its longest probe, {chain:,.1f} h." in line
    hours = sum(sum(c["hours"].values()) for c in costs)
    assert hours / 32 < chain and f"1 at once {hours:,.1f} h" in line


def test_a_stack_is_one_train_job_of_its_runs_time():
    """train.stack: K runs in one job: fewer jobs, the same hours (its members in turn), and a
    chain as long as the whole stack's training."""
    separate = cc.measured_cost(measured(), JOBS)
    stacked = cc.measured_cost(measured(), {**JOBS, "train": [3, 1]})
    assert (separate["jobs"]["train"], stacked["jobs"]["train"]) == (4, 2)
    assert stacked["hours"] == pytest.approx(separate["hours"])
    assert stacked["chain"] == pytest.approx(separate["chain"] + 2 * 0.6 * 6000 / 3600)


def test_the_preflight_and_paper_cost_estimate_with_the_one_estimator(monkeypatch, tmp_path, capsys):
    """The preflight rule and benchmarks/paper_cost.py both time a dataset with
    attnlearn.probing.timing.time_dataset and multiply it out with attnlearn.cost.jobs.job_seconds:
    with the timing patched there, both report the patched times."""
    from attnlearn.config import load_config

    timed = []
    monkeypatch.setattr(timing, "time_dataset", lambda d, *args, **kw: timed.append(d["task"]) or (0.5, 0.01, 0.0))
    d = load_config(yaml.safe_load(TINY.read_text()), REPO / "config/schema.yaml")["datasets"]["tiny_cls"]
    m = cc.measure("tiny_cls", d, tmp_path, torch.device("cpu"), 1, 1)
    assert (m["s_per_step"], m["s_per_example"], m["best_share"]) == (0.5, 0.01, 0.0)
    assert cc.job_minutes(m)["train"] == pytest.approx(0.5 * m["steps"] / 60)
    pd.DataFrame({"text": ["a few words"] * 10}).to_parquet(tmp_path / "train.parquet")
    script_module("benchmarks/paper_cost.py").main(["sst", str(tmp_path / "train.parquet"), "--valid", "872"])
    row = capsys.readouterr().out.split(" | ")
    assert row[1:3] == ["0.500", "4,000"] and row[5] == "10.0"  # s / step, steps, probe ms / example
    assert timed == ["classification", "classification"]


def test_verdicts_name_the_runtime_to_set():
    assert cc.verdict(10, 60, "train") == "ok"
    assert cc.verdict(50, 60, "train").startswith("tight")
    assert cc.verdict(100, 60, "probe") == "OVER the limit: raise probe's runtime to at least 150 in the profile"
    assert cc.verdict(None, 60, "train").startswith("unknown until the data are tokenized")
    assert cc.verdict(5, None, "train") == "no limit set"


# -- failures, simulated -------------------------------------------------------------------------

@pytest.fixture
def cuda_build(monkeypatch):
    """torch as a CUDA 12.8 build that sees no GPU, on a node whose driver is patched per test."""
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)

    def driver(version):
        monkeypatch.setattr(gc, "driver_cuda_version", lambda: version)
    return driver


def failure(device="cuda", env=None) -> str:
    with pytest.raises(gc.PreflightError) as e:
        gc.check_gpu(device, env or {})
    return str(e.value)


def test_cpu_only_torch_build_is_named(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(gc, "driver_cuda_version", lambda: (12, 4))
    msg = failure()
    assert f"torch {torch.__version__} is a CPU-only build" in msg
    assert "pip install torch --index-url https://download.pytorch.org/whl/cu124" in msg


def test_job_without_a_gpu_names_its_partition_and_the_profile_setting(cuda_build):
    cuda_build(None)  # a CPU node: no NVIDIA driver
    msg = failure(env=SLURM_JOB)
    assert msg.startswith("no GPU visible to the job (partition cpu on node n7, GPUs given by SLURM: none")
    assert "slurm_partition in &gpu_job" in msg and "device=cuda" in msg and "gres" in msg
    cuda_build((12, 8))  # a GPU node, but SLURM gave the job no GPU
    assert failure(env=SLURM_JOB).startswith("no GPU visible to the job")


def test_driver_older_than_torchs_cuda_names_the_wheel_to_install(cuda_build):
    cuda_build((12, 2))
    msg = failure(env={**SLURM_JOB, "SLURM_JOB_GPUS": "0", "CUDA_VISIBLE_DEVICES": "0"})
    assert "was built for CUDA 12.8, the node's driver supports CUDA 12.2 at most" in msg
    assert "pip install torch --index-url https://download.pytorch.org/whl/cu121" in msg
    cuda_build((11, 4))
    assert "no current torch wheel supports it" in failure(env={**SLURM_JOB, "SLURM_JOB_GPUS": "0"})


def test_device_auto_reports_the_cpu_fallback_instead_of_failing(cuda_build):
    cuda_build(None)
    found = gc.check_gpu("auto", {})
    assert found.startswith("device auto: the jobs will run on the CPU here, because no GPU visible")


@pytest.fixture
def gpu_seen(monkeypatch):
    """torch believes it sees an H100 (sm_90)."""
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "NVIDIA H100")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i=0: (9, 0))
    monkeypatch.setattr(gc, "driver_cuda_version", lambda: (12, 8))
    return monkeypatch


def test_gpu_missing_from_the_build_is_named(gpu_seen):
    gpu_seen.setattr(torch.cuda, "get_arch_list", lambda: ["sm_70", "sm_80"])
    msg = failure()
    assert "has no kernels for NVIDIA H100 (sm_90; the build has sm_70 sm_80)" in msg


def test_a_failing_cuda_kernel_is_caught_with_the_reinstall(gpu_seen):
    """The arch is in the build, but the matrix product fails (here: this build has no CUDA)."""
    gpu_seen.setattr(torch.cuda, "get_arch_list", lambda: ["sm_80", "sm_90"])
    msg = failure()
    assert msg.startswith("a CUDA kernel failed on NVIDIA H100")
    assert "pip install torch --index-url https://download.pytorch.org/whl/cu128" in msg


def test_wheel_index_is_the_newest_the_driver_runs():
    assert gc.cuda_wheel((12, 5)).endswith("/cu124")
    assert gc.cuda_wheel((13, 2)).endswith("/cu130")
    assert gc.cuda_wheel((11, 0)) is None


@pytest.mark.workflow
def test_failing_preflight_job_stops_the_run_with_the_fix_in_its_log(tmp_path):
    """device: cuda on this CPU machine, as a job: it fails within seconds and Snakemake shows
    its log, with the message (show-failed-logs, as profiles/slurm sets it)."""
    config = small_config(tmp_path, device="cuda")
    t0 = time.monotonic()
    proc = snakemake("--cores", "1", "--configfile", config, "-f", "preflight", cwd=tmp_path, check=False)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert f"PREFLIGHT FAILED: torch {torch.__version__} is a CPU-only build" in out, out[-3000:]
    assert not (tmp_path / "results/preflight/report.md").exists()
    assert time.monotonic() - t0 < 120  # planning and one failed job, nothing measured


def test_script_main_exits_with_the_message(monkeypatch, tmp_path):
    monkeypatch.setattr(torch.version, "cuda", None)
    job = SimpleNamespace(params=SimpleNamespace(device="cuda", datasets={}, jobs={}, limits={}, data_dir=str(tmp_path),
                                                 steps=1, probe_examples=1, repo=str(REPO), configfiles=["my.yaml"]),
                          output=SimpleNamespace(report=str(tmp_path / "report.md"), rates=str(tmp_path / "rates.tsv")))
    with pytest.raises(SystemExit, match="PREFLIGHT FAILED: torch .* is a CPU-only build"):
        pf.main(job)


def test_fake_examples_follow_the_length_distribution():
    rng = np.random.default_rng(0)
    table = timing.fake_examples("translation", np.array([[4, 3]]), 5, 50, rng)
    assert table["src_ids"].map(len).tolist() == [4] * 5 and table["tgt_ids"].map(len).tolist() == [3] * 5
    cls = timing.fake_examples("classification", np.array([[6]]), 3, 50, rng)
    assert cls["ids"].map(len).tolist() == [6] * 3 and set(cls["label"]) <= {0.0, 1.0}


# -- GPU-hours from measured rates (src/attnlearn/cost/gpu_rates.tsv, rule gpu_hours) -------------

RATES = rates.RATES


def rate(**row) -> dict:
    """A row of the rates table, as read_rates gives it."""
    base = {"id": "r", "task": "translation", "stage": "train", "arch": "lstm", "device": "NVIDIA H100",
            "jobs_sharing": 1, "stack": 1, "batch": 16, "positions": 16, "bleu": "-", "value": 1.0, "unit": "s/step",
            "count": None, "dataset": ""}
    row = {**base, **row}
    return {**row, "s_per_position": rates.UNITS[row["unit"]](row)}


def test_every_committed_rate_is_a_figure_of_docs_benchmarks_md():
    """Never an invented rate: each row of the table names a section of docs/benchmarks.md whose
    text holds the row's commit and its figure (the preflight's own rows: their commit)."""
    page = (REPO / "docs" / "benchmarks.md").read_text()
    sections = dict(re.findall(r"^## (.+)\n((?:(?!## ).*\n)*)", page, re.M))
    table = rates.read_rates(RATES)
    assert len(table) >= 15 and {r["device"] for r in table} <= {"NVIDIA H100", "NVIDIA H200"}
    for row in table:
        assert row["section"] in sections, row["id"]
        text = sections[row["section"]]
        assert row["commit"].rstrip("+") in text, row["id"]
        if not row["id"].startswith("preflight-"):
            assert f"{row['value']:,g}" in text, row["id"]


def test_each_unit_becomes_gpu_seconds_per_position():
    """A rate of all the jobs sharing the GPU is the GPU's; one job's time is split among them."""
    assert rate(unit="positions/s", value=20_000)["s_per_position"] == pytest.approx(1 / 20_000)
    assert rate(unit="examples/s", value=1000, positions=50)["s_per_position"] == pytest.approx(1 / 50_000)
    assert rate(unit="s/step", value=0.032, batch=32, positions=50, jobs_sharing=2)["s_per_position"] == \
        pytest.approx(0.032 / (32 * 50 * 2))
    assert rate(unit="s/job", value=150, count=4000, batch=32, positions=185, jobs_sharing=3)["s_per_position"] == \
        pytest.approx(150 / (4000 * 32 * 185 * 3))
    probe = rate(stage="probe", unit="s/job", value=19, count=22 * 796, batch=64, positions=185)
    assert probe["s_per_position"] == pytest.approx(19 / (22 * 796 * 185))  # a probe's count: examples x checkpoints
    assert rate(stage="probe", unit="checkpoints/min", value=300, count=200, positions=10)["s_per_position"] == \
        pytest.approx(60 / (300 * 200 * 10))


def test_a_bad_rates_table_is_named_by_file_line_and_column(tmp_path):
    path = tmp_path / "rates.tsv"
    good = "\t".join(str(v) for v in ("a", "translation", "train", "lstm", "NVIDIA H100", 1, 1, "", 16, 16, "-", 9000,
                                       "positions/s", "", "", "abc1234", "2026-11-28", "s", "cmd", ""))
    path.write_text("\t".join(rates.COLUMNS) + "\n" + good + "\n" + good.replace("a\ttranslation", "a\tspeech")
                    .replace("\t9000\t", "\tfast\t") + "\n")
    with pytest.raises(rates.RatesError) as e:
        rates.read_rates(path)
    assert f"{path}:3: task: 'speech' is not one of classification, translation" in str(e.value)
    assert f"{path}:3: value: 'fast' is not a number" in str(e.value)
    assert f"{path}: id 'a' is on 2 rows" in str(e.value)
    path.write_text("id\ttask\n")
    with pytest.raises(rates.RatesError, match=r"rates.tsv:1: the header must be the columns id task stage"):
        rates.read_rates(path)


def test_a_job_is_priced_by_its_card_its_sharing_its_own_dataset_then_the_nearest_work():
    table = [rate(id="h200", device="NVIDIA H200", value=0.001), rate(id="alone", unit="positions/s", value=20_000),
             rate(id="eight", unit="positions/s", value=60_000, jobs_sharing=8),
             rate(id="sixteen", unit="positions/s", value=61_000, jobs_sharing=16),
             rate(id="long", unit="positions/s", value=50_000, jobs_sharing=8, positions=40),
             rate(id="own", unit="positions/s", value=40_000, jobs_sharing=8, positions=30, dataset="news"),
             rate(id="own-alone", unit="positions/s", value=15_000, positions=30, dataset="news")]
    pick = rates.pick
    assert pick(table, "translation", "train", 18, sharing=8)[0]["id"] == "eight"  # 16 share more than the run lets
    assert pick(table, "translation", "train", 36, sharing=8)[0]["id"] == "long"  # nearer its 36 target tokens
    assert pick(table, "translation", "train", 16, sharing=1)[0]["id"] == "alone"
    assert pick(table, "translation", "train", 36, sharing=8, dataset="news")[0]["id"] == "own"  # nearer: long
    assert pick(table, "translation", "train", 36, sharing=4, dataset="news")[0]["id"] == "own-alone"  # none at 2-4
    assert pick(table[:-2], "translation", "train", 36, sharing=1, dataset="news")[0]["id"] == "alone"
    assert pick(table, "translation", "train", 16, card="H200")[0]["id"] == "h200"
    row, notes = pick(table, "translation", "train", 20, sharing=8, arch="transformer")
    assert notes == ["the lstm model's rate (no transformer rate)", "scaled from 16 to 20 target tokens"]
    assert pick(table, "classification", "train", 25) is None
    probe = [rate(id="p", stage="probe", device="NVIDIA H200", bleu="no", unit="s/example", value=0.001)]
    assert pick(probe, "translation", "probe", 16, bleu=True)[1] == ["measured on NVIDIA H200",
                                                                    "BLEU decoding not priced"]


def test_a_stack_takes_the_largest_measured_stack_or_its_runs_shared_whichever_is_cheaper():
    """Two stacks of three sharing an H100 cost what six separate jobs sharing it cost (SMS spam's
    paper-size part, docs/benchmarks.md): a stack never prices above its runs as separate jobs."""
    table = [rate(id="shared", task="classification", unit="examples/s", value=3700, positions=200, jobs_sharing=8),
             rate(id="k4", task="classification", unit="examples/s", value=1500, positions=200, stack=4),
             rate(id="k16", task="classification", unit="examples/s", value=4600, positions=200, stack=16)]
    row, notes = rates.pick(table, "classification", "train", 200, stack=10, sharing=8)
    assert row["id"] == "shared" and notes == ["a stack of 10 at the rate of its runs as separate jobs"]
    assert rates.pick(table, "classification", "train", 200, stack=16, sharing=8)[0]["id"] == "k16"
    assert rates.pick(table, "classification", "train", 200, stack=10, sharing=1)[0]["id"] == "k4"


def test_a_dataset_is_priced_job_by_job_from_the_rates():
    """GPU-hours: each job's positions at the rate of its row with the run's jobs sharing the GPU;
    the chain at the rates alone."""
    from attnlearn.reporting.config_cost import priced

    table = [rate(id="alone", unit="positions/s", value=20_000), rate(id="eight", unit="positions/s", value=60_000,
                                                                      jobs_sharing=8),
             rate(id="probe", stage="probe", bleu="no", unit="s/example", value=0.002, positions=10)]
    d = {"task": "translation", "model": {}, "train": {"batch_size": 16, "checkpoints": {"steps": [0], "every": None}},
         "probe": {"max_examples": 100, "bleu": True, "measures": ["alpha", "xi"]}}
    size = {"steps": 1000, "n_valid": 50, "positions": 20.0}
    jobs = {"train": [1, 1, 1], "probe": 3, "probe_train": 3, "proxy": 3, "proxy_probe_train": 3}
    c = priced("ds", d, size, jobs, table, "H100", 8)
    run = 1000 * 16 * 20  # target tokens of a training
    assert c["hours"]["train"] == pytest.approx(3 * run / 60_000 / 3600)
    per_example = 0.002 / 10 * 20  # scaled from 10 to 20 target tokens
    assert c["hours"]["probe"] == pytest.approx(3 * 2 * 50 * per_example / 3600)  # checkpoints 0 and 1000
    assert c["hours"]["probe_train"] == pytest.approx(3 * 2 * 100 * per_example / 3600)
    assert c["chain"] == pytest.approx(run / 20_000 / 3600 + 2 * 100 * per_example / 3600)
    assert c["rates"][0] == "train: eight (scaled from 16 to 20 target tokens)"
    assert "BLEU decoding not priced" in c["rates"][1]


def test_a_standard_runs_g_and_norm_are_priced_at_the_best_checkpoints_alone(monkeypatch):
    """A rate times every measure at a checkpoint; with probe.at_best the probe pays their
    share (cost_jobs.AT_BEST_SHARE, measured on a CPU) at the best checkpoint by each metric alone, and
    the rates used say so; without at_best measures the rate prices every checkpoint whole."""
    from attnlearn.reporting.config_cost import priced

    monkeypatch.setitem(cost_jobs.AT_BEST_SHARE, "translation", 0.75)
    table = [rate(id="alone", unit="positions/s", value=20_000),
             rate(id="probe", stage="probe", bleu="yes", unit="s/example", value=0.002, positions=20)]
    probe = {"max_examples": 100, "bleu": True, "measures": ["alpha", "xi", "grad", "norm"], "at_best": ["grad", "norm"]}
    d = {"task": "translation", "model": {}, "probe": probe,
         "train": {"batch_size": 16, "checkpoints": {"steps": [0, 10, 20, 30], "every": None, "last": False}}}
    size = {"steps": 1000, "n_valid": 50, "positions": 20.0}
    jobs = {"train": [1], "probe": 1, "probe_train": 1, "proxy": 1, "proxy_probe_train": 1}
    at_best = priced("ds", d, size, jobs, table, "H100", 8)
    whole = priced("ds", {**d, "probe": {**probe, "at_best": []}}, size, jobs, table, "H100", 8)
    assert whole["hours"]["probe"] == pytest.approx(4 * 50 * 0.002 / 3600)
    assert at_best["hours"]["probe"] == pytest.approx(whole["hours"]["probe"] * (4 * 0.25 + 2 * 0.75) / 4)
    assert at_best["hours"]["probe_train"] == pytest.approx(whole["hours"]["probe_train"] * (4 * 0.25 + 0.75) / 4)
    assert "probe: probe (g and norm at the best checkpoints only, 75% of a checkpoint's probe on a CPU)" in \
        at_best["rates"]
    assert "probe: probe" in whole["rates"]


def test_a_training_timed_at_one_length_is_reported_as_low():
    """Before the data are tokenized, the preflight times every example at Table 9's median (or
    an assumed) length, but a training batch pads to its longest example (Multi30k's real batches
    cost more a step than its medians', docs/benchmarks.md). Such a row's training estimate says
    it is low and how to time the real lengths; a tokenized row's does not."""
    from attnlearn.config import load_config

    d = load_config(yaml.safe_load(TINY.read_text()), REPO / "config/schema.yaml")["datasets"]["tiny_mt"]
    jobs = {"train": [1, 1], "probe": 2, "probe_train": 0, "proxy": 1, "proxy_probe_train": 0}
    m = {"entry": d, "train": d["train"], "probe": d["probe"], "steps": 1000, "n_valid": 100, "s_per_step": 0.2,
         "s_per_example": 0.01, "best_share": 0.0}
    measured = [{**m, "dataset": "paper_mt", "lengths": "paper (Table 9)"},
                {**m, "dataset": "own_mt", "lengths": "tokenized"}]
    report = cc.preflight_report("found", measured, {"train": 60.0, "probe": 60.0}, torch.device("cpu"),
                                 {"paper_mt": jobs, "own_mt": jobs})
    rows = {tuple(c.strip() for c in line.split("|")[1:7:5]): line for line in report.splitlines()
            if line.startswith("| paper_mt") or line.startswith("| own_mt")}
    assert rows[("paper_mt", "train")].endswith("| ok (low: every example at one length; rerun after "
                                                "`--until tokenize`) |")
    assert rows[("own_mt", "train")].endswith("| ok |") and rows[("paper_mt", "probe")].endswith("| ok |")
    assert "a training batch pads to its longest example" in report
    tokenized = cc.preflight_report("found", measured[1:], {"train": 60.0}, torch.device("cpu"), {"own_mt": jobs})
    assert "longest example" not in tokenized


def test_the_preflights_measurements_read_back_as_rates(tmp_path):
    """On a GPU the preflight writes what it timed as rows of the table (results/preflight/rates.tsv),
    for gpu_checks.sh to carry back and a person to append; read back, they price as timed."""
    from attnlearn.config import load_config

    d = load_config(yaml.safe_load(TINY.read_text()), REPO / "config/schema.yaml")["datasets"]["tiny_mt"]
    m = {"dataset": "tiny_mt", "entry": d, "vocab": 50, "positions": 8.0, "lengths": "config", "s_per_step": 0.012,
         "s_per_example": 0.003, "best_share": 0.75}
    rows = rates.rate_rows([m], "NVIDIA H100 80GB HBM3", "abc1234", "2026-11-28", "snakemake -f preflight")
    rates.write_rates(rows, tmp_path / "rates.tsv")
    train, probe = rates.read_rates(tmp_path / "rates.tsv")
    assert (train["id"], train["commit"], train["device"]) == ("preflight-tiny_mt-train-2026-11-28", "abc1234",
                                                               "NVIDIA H100 80GB HBM3")
    assert train["section"] == "What the paper costs on a GPU"  # where docs/benchmarks.md records them
    assert train["s_per_position"] == pytest.approx(0.012 / (d["train"]["batch_size"] * 8))
    assert probe["s_per_position"] == pytest.approx(0.003 / 8)
    assert "every measure at the checkpoint, of which probe.at_best's took 75%" in probe["note"]
    assert rates.pick([train, probe], "translation", "train", 8, dataset="tiny_mt") == (train, [])
    assert checkout_commit(REPO, {"ATTNLEARN_COMMIT": "feed123"}) == "feed123"


def job_stats(output: str) -> dict[str, int]:
    """A dry run's jobs per rule, the stacks' rules counted as train."""
    stats = output.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    counts = {}
    for rule, n in re.findall(r"^(\w+)\s+(\d+)$", stats, re.M):
        rule = "train" if rule.startswith("train_stack_") else rule
        counts[rule] = counts.get(rule, 0) + int(n)
    return counts


def priced_counts(report: str) -> dict[str, int]:
    """The jobs per rule that a report's Total line counts."""
    line = re.search(r"^Total: (\d+) training and probing jobs as planned \((.*?)\)", report, re.M)
    counts = {rule: int(n) for n, rule in re.findall(r"(\d+) (\w+)", line.group(2))}
    assert sum(counts.values()) == int(line.group(1))
    return counts


@pytest.mark.workflow
@pytest.mark.parametrize("configs", [["config/paper.yaml"], ["config/paper.yaml", "benchmarks/ten_replicates.yaml"]],
                         ids=["paper", "ten_replicates_stacked"])
def test_gpu_hours_counts_the_jobs_the_plan_has(configs, tmp_path):
    """Rule gpu_hours (no GPU needed) counts each training and probing rule's jobs as `snakemake -n`
    plans them, stacks (train.stack: fewer train jobs), variants and proxies included, and prices
    every dataset of the config from the rates table."""
    files = [REPO / c for c in configs]
    snakemake("--cores", "1", "--configfile", *files, "-f", "gpu_hours", cwd=tmp_path / "run")
    report = (tmp_path / "run/results/preflight/gpu_hours.md").read_text()
    plan = job_stats(snakemake("-n", "--configfile", *files, cwd=tmp_path / "plan").stdout)
    counts = priced_counts(report)
    assert counts == {rule: plan[rule] for rule in counts}
    datasets = re.findall(r"^\| (\w+) \| (?:paper \(Table 9\)|assumed) \| [\d.]+ \| [\d,]+ \| \d+ \| [\d.]+ \| [\d.]+ \| "
                          r"[\d.]+ \| [\d.]+ \| train: .* \|$", report, re.M)
    assert len(datasets) == (12 if len(configs) == 2 else 14)
    assert "8 jobs sharing it" in report  # profiles/default's gpu: 8
