"""envs/attnlearn.yaml, the rules' conda environment (--use-conda), agrees with pyproject.toml
and installs this checkout from wherever the file is copied (Snakemake builds it from a copy
in .snakemake/conda/)."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

tomllib = pytest.importorskip("tomllib")
REPO = Path(__file__).resolve().parents[1]
ENV = REPO / "envs" / "attnlearn.yaml"


def pip_lines():
    env = yaml.safe_load(ENV.read_text())
    return env, next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))


def test_conda_env_file_agrees_with_pyproject():
    env, pip = pip_lines()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert SpecifierSet(project["requires-python"]).contains(python.split("=", 1)[1] + ".0")
    declared = {Requirement(r).name: Requirement(r).specifier for r in project["dependencies"]}
    for line in (p for p in pip if not p.startswith("-")):
        req = Requirement(line)
        assert req.name in declared and req.specifier == declared[req.name], line
    # the project itself: from the checkout that rules/common.smk names, not a relative path
    assert [p for p in pip if p.startswith("-e ")] == ["-e ${ATTNLEARN_ROOT}"]
    assert re.search(r'os\.environ\.setdefault\("ATTNLEARN_ROOT", workflow\.basedir\)',
                     (REPO / "rules" / "common.smk").read_text())


@pytest.mark.workflow
def test_env_file_copy_installs_this_project(tmp_path):
    """What conda does with a copy of the file: write the pip lines to a requirements file in
    the copy's folder and run pip there. The project must resolve (pip's dry run, offline)."""
    copy = tmp_path / ".snakemake" / "conda"
    copy.mkdir(parents=True)
    shutil.copy(ENV, copy / "abc123_.yaml")
    _, pip = pip_lines()
    (copy / "condaenv.requirements.txt").write_text("\n".join(p for p in pip if p.startswith("-e")) + "\n")
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--no-deps", "--no-index",
                           "--no-build-isolation", "-r", "condaenv.requirements.txt"], cwd=copy,
                          capture_output=True, text=True, env={**os.environ, "ATTNLEARN_ROOT": str(REPO)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "Would install attnlearn" in proc.stdout


def test_every_documented_install_can_build_the_report():
    """`snakemake --report` needs pygments: the base dependencies carry it (snakemake's
    `reports` extra), so `pip install -e .`, `.[slurm]` and envs/attnlearn.yaml all build it."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    snakemake = next(Requirement(r) for r in project["dependencies"] if Requirement(r).name == "snakemake")
    assert "reports" in snakemake.extras
