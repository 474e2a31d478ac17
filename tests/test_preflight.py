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
    snakemake("--cores", "1", "--configfile", config, "-f", "preflight", "--set-resources", "train:runtime=700",
              "probe:runtime=200", "probe_train:runtime=300", cwd=tmp_path)
    report = (tmp_path / "results/preflight/report.md").read_text()
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
    n_train, n_valid, lens, where = pf.split_sizes(tmp_path, "ds", d)  # not downloaded: the paper's sizes
    assert (n_train, n_valid, lens.tolist(), where) == (160240, 7284, [[5, 5]], "paper (Table 9)")
    mine = {**d, "tokenizer": {}, "source": {"kind": "own_translation"}}
    assert pf.split_sizes(tmp_path, "ds", mine)[:2] == (None, None)
    assert pf.split_sizes(tmp_path, "ds", mine)[3] == "assumed"
    sms = {"task": "classification", "tokenizer": {}, "source": {"kind": "sms_spam", "options": {"n_train": 3500}}}
    assert pf.split_sizes(tmp_path, "sms_spam", sms)[0] == 3500  # the config's split size
    (tmp_path / "ds").mkdir()
    pd.DataFrame({"src_ids": [[1, 5, 2], [1, 5, 6, 7, 8, 9, 2]], "tgt_ids": [[1, 2], [1, 4, 2]]}).to_parquet(
        tmp_path / "ds" / "train.parquet")
    pd.DataFrame({"src_ids": [[1, 2]] * 3, "tgt_ids": [[1, 2]] * 3}).to_parquet(tmp_path / "ds" / "valid.parquet")
    n_train, n_valid, lens, where = pf.split_sizes(tmp_path, "ds", d)
    assert (n_train, n_valid, where) == (2, 3, "tokenized")
    assert lens.tolist() == [[3, 2], [5, 3]]  # cut at tokenizer.max_tokens


def test_job_minutes_multiply_the_config_sizes():
    m = {"s_per_step": 0.5, "s_per_example": 0.01, "steps": 1200, "n_valid": 10_000,
         "train": {"checkpoints": {"steps": [0, 100], "every": 500, "last": True}},
         "probe": {"max_examples": 4000}}
    minutes = pf.job_minutes(m)
    ckpts = 5  # 0, 100, 500, 1000, 1200
    assert minutes["train"] == pytest.approx(0.5 * 1200 / 60)
    assert minutes["probe"] == pytest.approx(0.01 * 4000 * ckpts / 60)  # capped at probe.max_examples
    assert pf.job_minutes({**m, "steps": None}) == {"train": None, "probe": None, "probe_train": None}


def test_the_report_totals_the_configs_jobs_and_their_wall_time_on_several_devices():
    """Issue 50: a user sizing a cluster run needs the whole config, not one job of each rule."""
    m = {"dataset": "ds", "s_per_step": 0.6, "s_per_example": 0.01, "steps": 6000, "n_valid": 4000,
         "train": {"checkpoints": {"steps": [0], "every": None}}, "probe": {"max_examples": 4000},
         "entry": {"runs": {"standard": [1, 2, 3], "uniform": [1]}}}
    line = pf.totals([m, {**m, "dataset": "later", "steps": None}], {"train": 60, "probe": 60},
                     torch.device("cuda"), at_once=(1, 4))
    hours = 4 * (0.6 * 6000 + 0.01 * 4000 * 2) / 3600  # 4 runs: a training of 1 h and a probe of 80 s each
    assert f"Total: 8 training and probing jobs, {hours:,.1f} GPU-hours" in line
    assert f"1 at once {hours:,.1f} h, 4 at once {hours / 4:,.1f} h" in line
    assert "Not counted (sizes unknown until tokenized): later." in line


def test_the_preflight_and_paper_cost_estimate_with_the_one_estimator(monkeypatch, tmp_path, capsys):
    """The preflight rule and benchmarks/paper_cost.py both time a dataset with
    attnlearn.probing.cost.time_dataset and multiply it out with cost.job_seconds: with the
    timing patched there, both report the patched times."""
    from attnlearn.config import load_config
    from attnlearn.probing import cost

    timed = []
    monkeypatch.setattr(cost, "time_dataset", lambda d, *args, **kw: timed.append(d["task"]) or (0.5, 0.01))
    d = load_config(yaml.safe_load(TINY.read_text()), REPO / "config/schema.yaml")["datasets"]["tiny_cls"]
    m = pf.measure("tiny_cls", d, tmp_path, torch.device("cpu"), 1, 1)
    assert (m["s_per_step"], m["s_per_example"]) == (0.5, 0.01)
    assert pf.job_minutes(m)["train"] == pytest.approx(0.5 * m["steps"] / 60)
    pd.DataFrame({"text": ["a few words"] * 10}).to_parquet(tmp_path / "train.parquet")
    script_module("benchmarks/paper_cost.py").main(["sst", str(tmp_path / "train.parquet"), "--valid", "872"])
    row = capsys.readouterr().out.split(" | ")
    assert row[1:3] == ["0.500", "4,000"] and row[5] == "10.0"  # s / step, steps, probe ms / example
    assert timed == ["classification", "classification"]


def test_verdicts_name_the_runtime_to_set():
    assert pf.verdict(10, 60, "train") == "ok"
    assert pf.verdict(50, 60, "train").startswith("tight")
    assert pf.verdict(100, 60, "probe") == "OVER the limit: raise probe's runtime to at least 150 in the profile"
    assert pf.verdict(None, 60, "train").startswith("unknown until the data are tokenized")
    assert pf.verdict(5, None, "train") == "no limit set"


# -- failures, simulated -------------------------------------------------------------------------

@pytest.fixture
def cuda_build(monkeypatch):
    """torch as a CUDA 12.8 build that sees no GPU, on a node whose driver is patched per test."""
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)

    def driver(version):
        monkeypatch.setattr(pf, "driver_cuda_version", lambda: version)
    return driver


def failure(device="cuda", env=None) -> str:
    with pytest.raises(pf.PreflightError) as e:
        pf.check_gpu(device, env or {})
    return str(e.value)


def test_cpu_only_torch_build_is_named(monkeypatch):
    monkeypatch.setattr(torch.version, "cuda", None)
    monkeypatch.setattr(pf, "driver_cuda_version", lambda: (12, 4))
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
    found = pf.check_gpu("auto", {})
    assert found.startswith("device auto: the jobs will run on the CPU here, because no GPU visible")


@pytest.fixture
def gpu_seen(monkeypatch):
    """torch believes it sees an H100 (sm_90)."""
    monkeypatch.setattr(torch.version, "cuda", "12.8")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i=0: "NVIDIA H100")
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda i=0: (9, 0))
    monkeypatch.setattr(pf, "driver_cuda_version", lambda: (12, 8))
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
    assert pf.cuda_wheel((12, 5)).endswith("/cu124")
    assert pf.cuda_wheel((13, 2)).endswith("/cu130")
    assert pf.cuda_wheel((11, 0)) is None


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
    job = SimpleNamespace(params=SimpleNamespace(device="cuda", datasets={}, limits={}, data_dir=str(tmp_path),
                                                 steps=1, probe_examples=1),
                          output=SimpleNamespace(report=str(tmp_path / "report.md")))
    with pytest.raises(SystemExit, match="PREFLIGHT FAILED: torch .* is a CPU-only build"):
        pf.main(job)


def test_fake_examples_follow_the_length_distribution():
    rng = np.random.default_rng(0)
    table = pf.fake_examples("translation", np.array([[4, 3]]), 5, 50, rng)
    assert table["src_ids"].map(len).tolist() == [4] * 5 and table["tgt_ids"].map(len).tolist() == [3] * 5
    cls = pf.fake_examples("classification", np.array([[6]]), 3, 50, rng)
    assert cls["ids"].map(len).tolist() == [6] * 3 and set(cls["label"]) <= {0.0, 1.0}
