"""benchmarks/time_left.py reads the console's own lines (src/attnlearn/runtime/console.py): a
change of their format must not leave the measurement of issue 64's time-left goal reading
nothing."""

import importlib.util
from pathlib import Path

import pytest

from attnlearn.runtime.console import Console

REPO = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("time_left", REPO / "benchmarks/time_left.py")
time_left = importlib.util.module_from_spec(spec)
spec.loader.exec_module(time_left)


@pytest.fixture(autouse=True)
def no_reference(monkeypatch):
    """A console with no reference run and no earlier records: what the lines say is this run's."""
    from attnlearn.runtime import console

    monkeypatch.setattr(console, "REFERENCE", {})
    monkeypatch.setattr(console, "BENCHMARKS", {})


def console_lines(jobs):
    """The lines a run of ``jobs`` [(rule, start, end)] prints, one job at a time."""
    c, lines = Console(), []
    rules = [r for r, _, _ in jobs]
    c.record({"event": "run_info", "stats": {**{r: rules.count(r) for r in rules}, "total": len(jobs)},
              "created": 1000.0})
    for i, (rule, start, end) in enumerate(jobs):
        c.record({"event": "job_info", "jobid": i, "rule_name": rule, "wildcards": {"dataset": "d"},
                  "output": [f"results/{rule}/{i}.parquet"], "created": 1000.0 + start})
        c.record({"event": "job_finished", "job_id": i, "created": 1000.0 + end})
        lines += c.record({"event": "progress", "done": i + 1, "total": len(jobs), "created": 1000.0 + end})
    return lines


def test_the_estimates_and_the_truth_are_read_from_the_console_s_lines(tmp_path):
    lines = console_lines([("prepare", 0, 10), ("train", 10, 110), ("tables", 110, 115), ("train", 115, 215),
                           ("tables", 215, 220)])
    entries = time_left.parse(lines)
    assert [(e["rule"], e["took"], e["done"]) for e in entries] == [
        ("prepare", 10, 1), ("train", 100, 2), ("tables", 5, 3), ("train", 100, 4), ("tables", 5, 5)]
    assert entries[0]["left"] is None  # nothing priced yet: no number
    assert entries[1]["besides"]  # tables not timed yet: left out, and said
    assert entries[2]["left"] == 105 and not entries[2]["besides"]  # a train and a tables job left
    rows, worst = time_left.accuracy(entries, start=10, share=0.51)
    assert [(r["done"], r["ratio"]) for r in rows] == [(3, 1.0), (4, 1.0)]  # 105 s said at 115 s of 220
    assert worst == 1.0
    _, worst = time_left.accuracy(entries, start=10, share=0.25)
    assert worst == float("inf")  # the line with tables left out counts as off
    ref = tmp_path / "times.tsv"
    time_left.write_reference(ref, time_left.reference(entries), "test", "abc1234")
    from attnlearn.runtime.console import read_reference

    assert read_reference(ref) == {"prepare": 10.0, "tables": 5.0, "train": 100.0}


def test_a_line_without_a_number_counts_as_off():
    lines = console_lines([("prepare", 0, 10), ("train", 10, 110), ("tables", 110, 115)])
    entries = time_left.parse(lines)
    assert entries[0]["left"] is None  # "time left not known": train never timed
    _, worst = time_left.accuracy(entries, start=0, share=0.0)
    assert worst == float("inf")
