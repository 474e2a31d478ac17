"""The reproduction's commands (paper_rows/<name>.py) run as the docs print them: each entry
point calls its module's main() with no arguments, so a main that requires argv fails every
time it is run as a command, whatever its tests of the functions under it say."""

from __future__ import annotations

import inspect
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
COMMANDS = sorted(p.stem for p in (REPO / "paper_rows").glob("*.py") if not p.stem.startswith("_"))


def test_every_command_s_main_runs_without_arguments():
    assert len(COMMANDS) > 10
    required = {name: [p.name for p in inspect.signature(rows_module(name).main).parameters.values()
                       if p.default is inspect.Parameter.empty and p.kind is not p.VAR_POSITIONAL]
                for name in COMMANDS}
    assert {name: r for name, r in required.items() if r} == {}


@pytest.mark.process
def test_local_sources_writes_a_config_on_the_local_copies(tmp_path):
    """docs/data.md: python paper_rows/local_sources.py config/real_small.yaml ../shared/data > local.yaml"""
    done = subprocess.run([sys.executable, "paper_rows/local_sources.py", "config/real_small.yaml", str(tmp_path)],
                          cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    urls = [f["url"] for entry in config["datasets"].values() for f in entry["source"].get("files", {}).values()]
    assert urls and all(u.startswith(tmp_path.as_uri()) for u in urls), urls
