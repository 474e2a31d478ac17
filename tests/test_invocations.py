"""paper_rows/invocations.py: a row's record of its invocations keeps one killed outright
(SIGKILL, a session or lease ending), so that run.json's first start and its times are the
row's, not only its last resume's."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import rows_module

invocations = rows_module("invocations")


def test_running_record_keeps_the_time_so_far_and_goes_when_the_invocation_returns(tmp_path):
    with invocations.Running(tmp_path, {"start": "2026-11-28T13:54:23+00:00", "commit": "abc"}, every=0.05):
        first = json.loads((tmp_path / invocations.RUNNING).read_text())
        time.sleep(0.3)
        later = json.loads((tmp_path / invocations.RUNNING).read_text())
    assert first["commit"] == "abc" and later["wall_s"] > first["wall_s"]
    assert not (tmp_path / invocations.RUNNING).exists()
    assert invocations.settle(tmp_path) is None and invocations.read(tmp_path) == []


def test_totals_sum_wall_over_every_invocation_and_cpu_over_those_that_returned():
    runs = [{"wall_s": 3600.0, "cpu_s": None, "killed": True}, {"wall_s": 180.8, "cpu_s": 186.0}]
    assert invocations.totals(runs) == {"wall_s": 3780.8, "cpu_s": 186.0, "killed_invocations": 1}
    assert invocations.totals(runs[1:]) == {"wall_s": 180.8, "cpu_s": 186.0}
    seen = [{"wall_s": 60.0, "cpu_s": None, "cpu_s_seen": 100.5, "killed": True}, *runs]
    assert invocations.totals(seen) == {"wall_s": 3840.8, "cpu_s": 186.0, "killed_invocations": 2,
                                        "killed_cpu_s_seen": 100.5}


@pytest.mark.process
def test_a_killed_invocations_record_keeps_the_cpu_its_process_tree_had_used(tmp_path):
    """The running record reads the CPU of the invocation's whole tree (here a shell whose child
    burns a second of CPU, as Snakemake's jobs are its children), so a kill loses at most a
    minute of it: run.json had no CPU at all for the invocations session ends killed."""
    burn = "import time; t = time.process_time()\nwhile time.process_time() - t < 1: pass\ntime.sleep(60)"
    proc = subprocess.Popen(["sh", "-c", f"{sys.executable} -c '{burn}'; sleep 60"], start_new_session=True)
    try:
        with invocations.Running(tmp_path, {"start": "2026-12-03T12:00:00+00:00"}, proc.pid, every=0.1):
            for _ in range(600):  # a second of CPU, however loaded the machine
                record = json.loads((tmp_path / invocations.RUNNING).read_text())
                if record.get("cpu_s_seen", 0) >= 1:
                    break
                time.sleep(0.1)
            # the kill: the record is left as it was at the last beat
            (tmp_path / "left.json").write_text((tmp_path / invocations.RUNNING).read_text())
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert 1 <= record["cpu_s_seen"] < 5
    os.replace(tmp_path / "left.json", tmp_path / invocations.RUNNING)
    killed, = invocations.read(tmp_path)
    assert killed["killed"] and killed["cpu_s"] is None and killed["cpu_s_seen"] >= 1
    assert invocations.tree_cpu_s(proc.pid) is None  # gone


@pytest.mark.process
def test_an_invocation_killed_outright_stays_on_record(tmp_path, monkeypatch):
    """paper_row.run killed with SIGKILL (it and its job) leaves its start, commit and time:
    the next invocation logs it as killed before its own line, and the first start is the
    killed one's (plan_tests.py reads it to say a plan came before the replicates)."""
    repo, work = tmp_path / "checkout", tmp_path / "work"
    (repo / "src").mkdir(parents=True)
    work.mkdir()
    (repo / "src/row_job.py").write_text("import time; time.sleep(60)\n")
    (repo / "src/quick_job.py").write_text("print('done')\n")
    for git in (["init", "-q"], ["add", "."], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c"]):
        subprocess.run(["git", *git], cwd=repo, check=True)
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()
    row = (f"from pathlib import Path; "
           f"import attnlearn.rows.paper_row as paper_row; paper_row.REPO = Path({str(repo)!r}); "
           f"paper_row.run(['row_job'], Path({str(work)!r}), {{'device': 'cpu'}})")
    proc = subprocess.Popen([sys.executable, "-c", row], start_new_session=True)
    running = work / invocations.RUNNING
    for _ in range(600):
        if running.is_file():
            break
        time.sleep(0.05)
    assert running.is_file(), "the running invocation left no record"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    paper_row = rows_module("paper_row")
    monkeypatch.setattr(paper_row, "REPO", repo)
    invocations.append(work, paper_row.run(["quick_job"], work, {"device": "cpu"}))
    killed, resumed = invocations.read(work)
    assert killed["killed"] and killed["commit"] == head and killed["device"] == "cpu"
    assert killed["cpu_s"] is None and killed["returncode"] is None and killed["wall_s"] >= 0
    assert killed["cpu_s_seen"] >= 0  # paper_row's record reads Snakemake's tree from its start
    assert resumed["returncode"] == 0 and "killed" not in resumed and killed["start"] <= resumed["start"]
    assert not running.exists()
    assert invocations.totals([killed, resumed])["killed_invocations"] == 1
