"""The test tiers (tests/README.md). A test that starts another process, Snakemake, a SLURM
cluster or a browser carries a marker saying so; every other test is in the fast tier
(`pytest -m "not slow"`), and there a fixture fails any test that starts a process anyway,
so that the tier stays fast and the marker honest."""

from __future__ import annotations

import multiprocessing
import os
import subprocess

import pytest

# marker -> what a test with it starts; each of them puts the test in the slow tier
SLOW = {
    "workflow": "runs Snakemake (a dry run or a real one)",
    "process": "starts another process (a script, a killed and resumed job, a worker pool)",
    "slurm": "needs a real SLURM cluster (tests/slurm)",
    "browser": "opens a page in a headless browser",
}


def pytest_configure(config):
    # matplotlib builds its font cache on first use by running fc-list: done here, before any
    # test, so that the first fast test to draw a figure on a fresh machine is not refused for it
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.font_manager  # noqa: F401

    config.addinivalue_line("markers", "slow: in the slow tier (set for every test with a marker below)")
    for name, what in SLOW.items():
        config.addinivalue_line("markers", f"{name}: {what}; slow tier")


def pytest_collection_modifyitems(items):
    for item in items:
        if any(item.get_closest_marker(name) for name in SLOW):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def fast_tier_starts_no_process(request, monkeypatch):
    """In the fast tier, starting a process is an error naming the marker to add."""
    if request.node.get_closest_marker("slow"):
        return

    def refuse(*args, **kwargs):
        raise RuntimeError(f"{request.node.nodeid} starts a process but is in the fast tier: mark it "
                           "@pytest.mark.process (or workflow / slurm / browser; tests/README.md)")

    monkeypatch.setattr(subprocess.Popen, "__init__", refuse)
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", refuse)
    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "execv", "execve", "spawnv", "spawnve"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse)
