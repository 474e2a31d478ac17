"""envs/attnlearn.yaml, the conda route to the environment that runs the workflow, agrees
with pyproject.toml and installs this checkout; no rule has a per-job `conda:` env."""

import re
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

tomllib = pytest.importorskip("tomllib")
REPO = Path(__file__).resolve().parents[1]
ENV = REPO / "envs" / "attnlearn.yaml"


def test_conda_env_file_installs_this_project_as_pyproject_says():
    env = yaml.safe_load(ENV.read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert SpecifierSet(project["requires-python"]).contains(python.split("=", 1)[1] + ".0")
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    # conda runs pip in the env file's folder: the editable path is relative to it
    paths = [p.split(None, 1)[1] for p in pip if p.startswith("-e ")]
    assert len(paths) == 1
    root = (ENV.parent / paths[0]).resolve()
    assert root == REPO and tomllib.loads((root / "pyproject.toml").read_text())["project"]["name"] == "attnlearn"
    declared = {Requirement(r).name: Requirement(r).specifier for r in project["dependencies"]}
    for line in (p for p in pip if not p.startswith("-")):
        req = Requirement(line)
        assert req.name in declared and req.specifier == declared[req.name], line


def test_no_rule_builds_a_per_job_conda_env():
    """Snakemake copies a `conda:` env file into .snakemake/conda/ before building it, where the
    project path is lost; the workflow runs in the environment that runs Snakemake instead."""
    for path in (REPO / "rules").glob("*.smk"):
        assert not re.search(r"^\s+conda:", path.read_text(), re.M), path.name
