"""The transfer through Snakemake: a standard run of a dataset with `init` trains after its donor,
from the donor's checkpoint (a change to the donor reruns it), and a changed init.step reruns the
standard runs only; the transfer target on a small sweep. A few minutes on two idle cores."""

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from test_transfer import tiny_mt

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "2"]
TARGET = "results/runs/tiny_mt/standard-s1/checkpoints"


def planned(command) -> dict[str, set[str]]:
    """rule -> the runs a dry run plans for it."""
    out = subprocess.run([*command, "-n"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    jobs: dict[str, set[str]] = {}
    for block in out.stdout.split("\nrule ")[1:]:
        rule = block.split(":", 1)[0]
        run = next((w.split("run=")[1].split(",")[0].strip() for w in block.splitlines() if "run=" in w), "")
        jobs.setdefault(rule, set()).add(run)
    return jobs


@pytest.mark.workflow
def test_a_standard_run_starts_from_its_donor_and_follows_it(tmp_path):
    config = tmp_path / "transfer.yaml"
    config.write_text(yaml.safe_dump(tiny_mt()))
    command = [*SNAKEMAKE, "-d", str(tmp_path / "run"), TARGET, "--configfile", str(config)]
    assert planned(command)["train"] == {"donor-s1", "standard-s1"}
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = tmp_path / "run/results/runs/tiny_mt"
    manifest = json.loads((runs / "standard-s1/checkpoints/manifest.json").read_text())
    assert manifest["init"]["run"] == "donor-s1" and manifest["init"]["step"] == 10
    first = torch.load(runs / "standard-s1/checkpoints/step00000000.pt", weights_only=True)
    source = torch.load(runs / "donor-s1/checkpoints/step00000010.pt", weights_only=True)
    assert all(torch.equal(first[k], source[k]) != k.startswith("attn.") for k in first)

    assert planned(command) == {}  # nothing to do
    # the donor retrained: what started from it follows
    assert planned([*command, "--forcerun", "results/runs/tiny_mt/donor-s1/checkpoints"])["train"] == \
        {"donor-s1", "standard-s1"}
    # another dose: the standard run again, its donor as it is
    config.write_text(yaml.safe_dump(tiny_mt(init={"from": "donor", "step": 5})))
    assert planned(command)["train"] == {"standard-s1"}


@pytest.mark.workflow
def test_the_transfer_target_reads_each_start_against_runs_trained_once(tmp_path):
    """`snakemake transfer` on a two-start sweep over init: the uniform and donor runs are trained
    by the first value and linked into the second (one inode), and the rule writes the curves,
    the per-seed table and the page; without a plan, no plan rows."""
    entry = tiny_mt()["datasets"]["tiny_mt"]
    entry.pop("runs")
    entry["probe"]["measures"] = ["alpha", "xi"]
    config = {"device": "cpu", "only": ["dose"], "datasets": {"tiny_mt": entry},
              "sweeps": {"dose": {"base": "tiny_mt", "key": "init", "replicates": 2,
                                  "values": [{"from": "donor", "step": 0}, {"from": "donor", "step": 20},
                                             {"from": "donor", "step": 20, "params": ["embed", "encoder"]}]}},
              "transfer": {"sweep": "dose", "window": 10}}
    path = tmp_path / "dose.yaml"
    path.write_text(yaml.safe_dump(config))
    command = [*SNAKEMAKE, "-d", str(tmp_path / "run"), "transfer", "--configfile", str(path)]
    jobs = planned(command)
    assert jobs["train"] == {"standard-s1", "standard-s2", "uniform-s1", "uniform-s2", "donor-s1", "donor-s2"}
    # the first value's run probed before the others link its donor: the links must not make
    # that run look updated (Snakemake touches each output, and a hard-linked one is the source)
    ahead = [*SNAKEMAKE, "-d", str(tmp_path / "run"), "results/probes/dose_0/standard-s1.parquet", "--configfile", str(path)]
    assert subprocess.run(ahead, capture_output=True, text=True).returncode == 0
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    assert planned(command) == {}  # finished: nothing reruns
    run = tmp_path / "run/results"
    first, linked = run / "runs/dose_0/donor-s1/checkpoints", run / "runs/dose_1/donor-s1/checkpoints"
    assert (linked / "step00000020.pt").stat().st_ino == (first / "step00000020.pt").stat().st_ino
    seeds = pd.read_parquet(run / "tables/transfer_seeds.parquet")
    assert list(seeds["seed"]) == [1, 2] and seeds[["slope_xi", "top_xi", "control_xi"]].notna().all().all()
    curves = pd.read_parquet(run / "tables/transfer_curves.parquet")
    assert set(curves["against"]) == {"xi_uniform", "gold"} and set(curves["step"]) == {0, 5, 10, 20}
    assert pd.read_parquet(run / "tables/transfer_plan.parquet").empty
    assert "| transfer | all | 20 | 2 |" in (run / "tables/transfer.md").read_text()
    assert (run / "figures/transfer.png").stat().st_size > 0
