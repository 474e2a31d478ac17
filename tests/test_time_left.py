"""benchmarks/time_left.py reads the console's own lines (src/attnlearn/runtime/console.py): a
change of their format must not leave the measurement of the time-left goal (within a factor
of 1.5 of the truth from 25% of the run on) reading nothing."""

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
    from attnlearn.cost import time_left as tables

    monkeypatch.setattr(tables, "REFERENCE", {})
    monkeypatch.setattr(tables, "REFERENCE_JOBS", {})  # an earlier test's workflow may have filled it
    monkeypatch.setattr(tables, "BENCHMARKS", {})
    monkeypatch.setattr(tables, "TIMES_FILE", Path("/nonexistent/job_times.tsv"))


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
    from attnlearn.cost.time_left import read_reference

    assert read_reference(ref) == {"prepare": 10.0, "tables": 5.0, "train": 100.0}


def test_a_line_without_a_number_counts_as_off():
    lines = console_lines([("prepare", 0, 10), ("train", 10, 110), ("tables", 110, 115)])
    entries = time_left.parse(lines)
    assert entries[0]["left"] is None  # "time left not known": train never timed
    _, worst = time_left.accuracy(entries, start=0, share=0.0)
    assert worst == float("inf")


def test_the_replay_re_makes_the_console_s_estimates_with_each_job_priced_by_its_own_time(tmp_path, monkeypatch):
    """benchmarks/time_left.py --replay re-runs the console's estimator on a saved console as
    it stood at each finished job; on a run whose trainings differ tenfold, with a reference run
    at half this run's speed, each estimate is the truth (priced by the train rule's mean, 0.14
    of it once the small training is done)."""
    from attnlearn.cost import time_left as tables

    c = Console()  # the saved console: a run without a reference, so its own estimates are off
    jobs = [("prepare", ("d",), 0, 10), ("train", ("d", "small"), 10, 20), ("train", ("d", "big"), 20, 120),
            ("tables", (), 120, 125)]
    c.record({"event": "run_info", "stats": {"prepare": 1, "train": 2, "tables": 1, "total": 4}, "created": 1000.0})
    lines = []
    for i, (rule, values, start, end) in enumerate(jobs):
        c.record({"event": "job_info", "jobid": i, "rule_name": rule, "output": [f"results/{rule}/{i}"],
                  "wildcards": dict(zip(("dataset", "run"), values)), "created": 1000.0 + start})
        c.record({"event": "job_finished", "job_id": i, "created": 1000.0 + end})
        lines += c.record({"event": "progress", "done": i + 1, "total": 4, "created": 1000.0 + end})
    entries = time_left.parse(lines)
    assert [e["values"] for e in entries] == [("d",), ("d", "small"), ("d", "big"), ()]
    times = [("prepare", ("d",), 5.0), ("train", ("d", "small"), 5.0), ("train", ("d", "big"), 50.0),
             ("tables", (), 2.5)]
    replayed = time_left.replay(entries, times)
    assert [e["left"] for e in replayed[:3]] == [115, 105, 5]  # the truth: 125 s less each line's time
    rows, worst = time_left.accuracy(replayed, start=10, share=0.0)
    assert worst == 1.0 and time_left.within(rows) == 3
    # a reference whose trainings are other jobs: the rule's mean in this run prices the big one
    other = [t for t in times if t[0] != "train"] + [("train", ("e", "x"), 5.0)]
    assert time_left.replay(entries, other)[1]["left"] == 15  # 10 s for the big training, 5 s the table's
    assert tables.REFERENCE == {} and tables.REFERENCE_JOBS == {} and tables.BENCHMARKS == {}  # put back


def test_the_replay_reads_an_earlier_run_s_records_and_the_printed_bars():
    """--records: an earlier run's jobs, written as benchmark records at the rules' globs,
    price a job by its own key; a progress bar the console printed prices its running job,
    less the time since the line before it."""
    lines = ["10:00:10  done prepare (d) -> results/data/d  (10 s)  | 1 of 4 jobs (25%)",
             "10:00:20  done train (d, small) -> results/runs/d/small  (10 s)  | 2 of 4 jobs (50%)",
             "    train (d, big): step 10 of 100 (10%), 1 min 30 s left",
             "10:00:30  done prepare (e) -> results/data/e  (10 s)  | 3 of 4 jobs (75%)",
             "10:02:00  done train (d, big) -> results/runs/d/big  (1 min 40 s)  | 4 of 4 jobs (100%)"]
    entries = time_left.parse(lines)
    assert entries[2]["bars"] == [("train", ("d", "big"), 90.0)] and entries[3]["total"] == 4
    earlier = [("prepare", ("d",), 10.0), ("prepare", ("e",), 10.0), ("train", ("d", "small"), 10.0),
               ("train", ("d", "big"), 100.0)]
    globs = {"prepare": "results/benchmarks/prepare/*.tsv", "train": "results/benchmarks/train/*/*.tsv"}
    # at 10:00:30 the big training has run 10 s: its record's 100 s less those, as the bar says
    assert time_left.replay(entries, records=earlier, benchmarks=globs, bars=False)[2]["left"] == 90
    # the bar printed after 10:00:20 said 90 s: 80 s at 10:00:30
    assert time_left.replay(entries, records=earlier, benchmarks=globs)[2]["left"] == 80
    # neither records nor bars: the big training costs the train rule's mean so far (10 s), all
    # of which it has run
    assert time_left.replay(entries, bars=False)[2]["left"] == 0
