"""The ledger of rows started (paper_rows/ledger.py): a row started and given up stays on record
beside the one started again, and the page prints both."""

import json

import pytest

from conftest import rows_module

paper_row = rows_module("paper_row")
ledger = rows_module("ledger")


def _abandoned_run(argv, work=None, extra=None):
    """paper_row.run as a session's end leaves it: Snakemake stopped before any table."""
    return {"start": "2026-12-02T00:00:00+00:00", "commit": "abc1234", "wall_s": 1.0, "cpu_s": 0.5, "returncode": 1}


@pytest.mark.process  # paper_row.main asks git for the checkout's commit
def test_a_block_started_abandoned_and_started_again_is_on_record_twice(tmp_path, monkeypatch):
    monkeypatch.setattr(paper_row, "run", _abandoned_run)
    out, first, second = tmp_path / "rows", tmp_path / "first", tmp_path / "second"
    common = ["sms_spam", "--parts", "4-5", "--data", str(tmp_path / "data"), "--out", str(out)]
    assert paper_row.main([*common, "-d", str(first)]) == 1  # stopped with its session
    assert paper_row.main(["sms_spam", "-d", str(first), "--out", str(out), "--drop",
                           "--why", "lost with the session's /tmp"]) == 0
    assert paper_row.main([*common, "-d", str(second)]) == 1  # started again, still running
    entries = {d["directory"]: d for d in ledger.by_directory(ledger.read(out / ledger.NAME))}
    assert entries[str(first)]["status"] == "dropped" and "lost with" in entries[str(first)]["note"]
    assert entries[str(second)]["status"] == "open" and len(entries[str(second)]["starts"]) == 1
    assert "--parts 4-5" in entries[str(second)]["command"]
    page = "\n".join(ledger.markdown(ledger.read(out / ledger.NAME)))
    assert f"`{first}`" in page and "| dropped |" in page and f"`{second}`" in page and "| open |" in page


def test_drop_needs_a_reason():
    with pytest.raises(SystemExit):
        paper_row.main(["sms_spam", "-d", "/tmp/x", "--drop"])


def test_kept_folders_join_the_ledger_with_every_invocation(tmp_path):
    """A kept folder's run.json gives its invocations (a killed one too) and where it is kept;
    a reconstructed start for the same directory joins them and is counted as such."""
    part = tmp_path / "rows/sst/part1"
    part.mkdir(parents=True)
    (part / "run.json").write_text(json.dumps({"command": "snakemake --cores 2 -d /tmp/row_sst1 --configfile x",
                                               "invocations": [{"start": "2026-11-25T10:00", "commit": "aaa"},
                                                               {"start": "2026-11-25T12:00", "commit": "aaa",
                                                                "killed": True}]}))
    (tmp_path / "rows" / ledger.NAME).write_text(json.dumps(
        {"event": "started", "directory": "/tmp/row_sst1", "start": "2026-11-25T09:00", "commit": "aaa",
         "reconstructed": True}) + "\n")
    records = ledger.from_kept(tmp_path / "rows") + ledger.read(tmp_path / "rows" / ledger.NAME)
    (entry,) = ledger.by_directory(records)
    assert entry["status"] == "kept" and entry["note"] == "sst/part1" and len(entry["starts"]) == 3
    assert "(1 of 3 invocations reconstructed)" in "\n".join(ledger.markdown(records))


def test_a_kept_invocation_the_ledger_also_saw_start_is_one_start(tmp_path):
    """A part started after the ledger began is on record twice, in the line paper_row.py
    appended as it started and in its kept run.json: the page lists it once (Multi30k's
    20-epoch part 1 showed each of its four starts twice)."""
    part = tmp_path / "rows/multi30k_epochs20/part1"
    part.mkdir(parents=True)
    starts = ["2026-12-02T19:29:09+00:00", "2026-12-03T08:13:53+00:00"]
    (part / "run.json").write_text(json.dumps({"command": "snakemake --cores 2 -d /root/p1 --configfile x",
                                               "invocations": [{"start": s, "commit": "aaa"} for s in starts]}))
    (tmp_path / "rows" / ledger.NAME).write_text("".join(json.dumps(
        {"event": "started", "directory": "/root/p1", "start": s, "commit": "aaa", "command": "python p.py"}) + "\n"
        for s in starts))
    records = ledger.from_kept(tmp_path / "rows") + ledger.read(tmp_path / "rows" / ledger.NAME)
    (entry,) = ledger.by_directory(records)
    assert entry["starts"] == starts and entry["status"] == "kept"


def test_a_broken_ledger_line_is_named(tmp_path):
    (tmp_path / ledger.NAME).write_text('{"event": "started"}\nnot json\n')
    with pytest.raises(ValueError, match=f"{tmp_path / ledger.NAME}:2"):
        ledger.read(tmp_path / ledger.NAME)


@pytest.mark.process
def test_an_entry_point_runs_this_checkouts_code_when_another_attnlearn_comes_first(tmp_path):
    """python paper_rows/<name>.py with another checkout's attnlearn first on the path (pip's
    editable install of the main checkout, the command run from a worktree): it runs this
    checkout's attnlearn.rows, not the other's (here a package with no rows stage at all)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    (tmp_path / "other/attnlearn").mkdir(parents=True)
    (tmp_path / "other/attnlearn/__init__.py").write_text("")
    (tmp_path / ledger.NAME).write_text(json.dumps({"event": "started", "directory": "/tmp/a", "start": "s",
                                                    "commit": "c", "command": "x"}) + "\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "other")}
    done = subprocess.run([sys.executable, str(repo / "paper_rows/ledger.py"), str(tmp_path / ledger.NAME)],
                          env=env, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "| `/tmp/a` | s | `c` | open |" in done.stdout
