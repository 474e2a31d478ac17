"""`--profile profiles/slurm` is refused with the command that uses it as the workflow profile
(src/attnlearn/runtime/profiles.py; it once silently mixed in profiles/default, and CPU jobs got
mem_mb 1000 with no runtime or cpus_per_task, where --workflow-profile gives 4000 / 60 / 1)."""

import subprocess
import sys
from pathlib import Path

import pytest

from attnlearn.runtime.profiles import profile_executor, profile_mix

REPO = Path(__file__).resolve().parents[1]


def test_a_cluster_profile_given_with_profile_is_refused_naming_the_command():
    argv = ["/venv/bin/snakemake", "table2", "--profile", "profiles/slurm", "--configfile", "my.yaml"]
    message = profile_mix(argv, {}, [str(REPO)])
    assert message.startswith("--profile profiles/slurm: Snakemake also reads this workflow's own profile")
    assert message.endswith("run instead:\n  snakemake table2 --workflow-profile profiles/slurm --configfile my.yaml")
    assert profile_mix(["snakemake", "--profile=profiles/slurm"], {}, [str(REPO)]).endswith(
        "snakemake --workflow-profile=profiles/slurm")
    assert profile_mix(["snakemake", "-n"], {"SNAKEMAKE_PROFILE": "profiles/slurm"}, [str(REPO)]).endswith(
        "snakemake --workflow-profile profiles/slurm -n")


@pytest.mark.parametrize("argv", [
    ["snakemake", "--workflow-profile", "profiles/slurm"],  # as docs/slurm.md says
    ["snakemake", "--profile", "profiles/slurm", "--workflow-profile", "none"],  # no mix either
    ["snakemake", "--profile", "profiles/default"],  # a local profile: nothing of a cluster's is replaced
    ["snakemake", "--profile", "no/such/profile"],  # Snakemake names that itself
    ["snakemake", "--cores", "2"],
])
def test_other_commands_are_left_alone(argv):
    assert profile_mix(argv, {}, [str(REPO)]) is None


def test_the_profile_is_found_where_snakemake_was_started():
    assert profile_executor("profiles/slurm", [str(REPO)]) == "slurm"
    assert profile_executor("profiles/default", [str(REPO)]) is None
    assert profile_executor(str(REPO / "profiles/slurm"), []) == "slurm"


@pytest.mark.workflow
def test_profile_slurm_stops_with_the_command_that_works(tmp_path):
    run = [sys.executable, "-m", "snakemake", "-d", str(tmp_path), "-n", "--configfile", "tests/configs/tiny.yaml"]
    refused = subprocess.run([*run, "--profile", "profiles/slurm"], cwd=REPO, capture_output=True, text=True)
    assert refused.returncode != 0
    said = refused.stdout + refused.stderr
    assert "Traceback" not in said and "ProfileError in file" not in said, said[-2000:]
    command = said.split("run instead:\n  ", 1)[1].splitlines()[0]
    assert command == f"snakemake -d {tmp_path} -n --configfile tests/configs/tiny.yaml --workflow-profile profiles/slurm"
    works = subprocess.run([sys.executable, "-m", *command.split()], cwd=REPO, capture_output=True, text=True)
    assert works.returncode == 0, works.stderr[-2000:]
    assert "mem_mb=4000" in works.stdout and "runtime=60" in works.stdout and "cpus_per_task=1" in works.stdout
