"""The run's console (attnlearn.runtime.console, the `attnlearn` logger plugin): driven with the
records Snakemake sends it, as dicts."""

from __future__ import annotations

import logging

from attnlearn.runtime.console import Console, duration, made, named_error, training_progress

TRAIN = {"event": "job_info", "jobid": 7, "rule_name": "train", "wildcards": {"dataset": "d", "run": "standard-s1"},
         "output": ["results/runs/d/standard-s1/checkpoints", "results/runs/d/standard-s1/train_log.parquet"]}


def bar(step: int, steps: int, left: str) -> str:
    return f"d/standard-s1:  {100 * step // steps}%|██   | {step}/{steps} [00:10<{left}, 12.00it/s]"


def test_a_finished_job_is_one_line_with_what_it_made_and_the_time_left():
    c = Console()
    assert c.record({"event": "run_info", "stats": {"train": 2, "tables": 1, "total": 3}, "created": 0}) is None
    assert c.record({**TRAIN, "created": 0}) == []
    assert c.record({**TRAIN, "jobid": 8, "wildcards": {"dataset": "d", "run": "standard-s2"}, "created": 0}) == []
    assert c.record({"event": "job_finished", "job_id": 7, "created": 100}) == []
    [line] = c.record({"event": "progress", "done": 1, "total": 3, "created": 100})
    assert "done train (d, standard-s1) -> results/runs/d/standard-s1/{checkpoints, train_log.parquet}" in line
    # work left: the other training (100 s, 100 s of it running already: 0 s); the table has no
    # finished or running job to time it by: named, not guessed from the trainings
    assert line.endswith("(1 min 40 s)  | 1 of 3 jobs (33%), about 0 s left besides 1 rule not timed yet (tables)"), \
        line
    c.record({"event": "job_info", "jobid": 9, "rule_name": "tables", "created": 150})
    c.record({"event": "job_finished", "job_id": 8, "created": 150})
    c.record({"event": "progress", "done": 2, "total": 3, "created": 150})
    c.record({"event": "job_finished", "job_id": 9, "created": 160})
    assert c.record({"event": "progress", "done": 3, "total": 3, "created": 160})[0].endswith("3 of 3 jobs (100%)")


def test_the_estimate_of_a_rule_not_yet_seen_comes_from_its_running_jobs_progress_bars(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(bar(10, 100, "08:20") + "\r" + bar(50, 100, "01:40"))  # tqdm redraws with \r
    c = Console()
    c.record({"event": "run_info", "stats": {"prepare": 1, "train": 1, "total": 2}, "created": 0})
    c.record({"event": "job_info", "jobid": 1, "rule_name": "prepare", "created": 0})
    c.record({**TRAIN, "log": [str(log)], "created": 10})
    c.record({"event": "job_finished", "job_id": 1, "created": 10})
    [line] = c.record({"event": "progress", "done": 1, "total": 2, "created": 110})
    # train: 100 s run + 100 s left by its bar = 200 s, 100 s of it done; 110 s of work in 110 s
    assert line.endswith("1 of 2 jobs (50%), about 1 min 40 s left"), line


def test_running_trainings_show_their_step_once_per_move(tmp_path):
    log = tmp_path / "train.log"
    log.write_text(bar(1200, 4000, "04:10"))
    c = Console()
    c.record({**TRAIN, "log": [str(log)], "created": 0})
    assert c.follow() == ["    train (d, standard-s1): step 1,200 of 4,000 (30%), 4 min 10 s left"]
    assert c.follow() == []  # the bar has not moved
    log.write_text(bar(1200, 4000, "04:10") + "\r" + bar(2000, 4000, "02:00"))
    assert c.follow() == ["    train (d, standard-s1): step 2,000 of 4,000 (50%), 2 min 0 s left"]


def test_a_failed_job_says_its_own_error_and_again_as_the_last_lines(tmp_path):
    log = tmp_path / "prepare.log"
    log.write_text("reading\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
                   "attnlearn.data.parsers.DataError: r.csv: line 3 is not UTF-8 (byte 0xe9 at column 4)\n")
    c = Console(show_failed_logs=False)
    c.record({"event": "job_info", "jobid": 3, "rule_name": "prepare_data", "wildcards": {"dataset": "r"},
              "created": 0})
    lines = c.record({"event": "job_error", "jobid": 3, "rule_name": "prepare_data", "log": [str(log)], "created": 1})
    assert lines == [f"Error in rule prepare_data (r); its log: {log}",
                     "    attnlearn.data.parsers.DataError: r.csv: line 3 is not UTF-8 (byte 0xe9 at column 4)"]
    assert c.summary() == ["1 job failed:", f"  prepare_data (r) (log: {log})", lines[1]]
    shown = Console().record({"event": "job_error", "jobid": 3, "rule_name": "prepare_data", "log": [str(log)]})
    assert shown[-1].startswith("    | attnlearn.data.parsers.DataError") and len(shown) == 5  # the log's end, once


def test_what_snakemake_says_better_elsewhere_is_left_out_and_a_dry_run_is_untouched():
    c = Console()
    assert c.record({"event": "", "msg": "Select jobs to execute..."}) == []
    assert c.record({"event": "job_started", "msg": "Execute 2 jobs...", "jobs": [1, 2]}) == []
    assert c.record({"event": "error", "msg": "RuleException:\nCalledProcessError in file \"r.smk\", line 3:\n"
                     "Command 'python x.py' returned non-zero exit status 1."}) == []
    assert c.record({"event": "error", "msg": "WorkflowError:\nAt least one job did not complete successfully."}) is None
    assert c.record({"event": "", "msg": "Building DAG of jobs..."}) is None  # printed as Snakemake does
    dry = Console(dryrun=True)
    assert all(dry.record({**TRAIN, "created": 0, "event": e}) is None for e in ("job_info", "progress", "run_info"))


def test_the_plugin_turns_records_into_lines_on_its_stream(capsys):
    """Snakemake's logger plugin registry loads the package by its name (``--logger attnlearn``)."""
    from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry

    plugin = LoggerPluginRegistry().get_plugin("attnlearn")

    class Settings:
        dryrun, stdout, show_failed_logs = False, True, True

    handler = plugin.log_handler(Settings(), plugin.settings_cls(every=0))
    record = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
    record.__dict__.update({**TRAIN, "created": 0})
    handler.handle(record)
    record = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
    record.__dict__.update({"event": "job_finished", "job_id": 7, "created": 5})
    handler.handle(record)
    record = logging.LogRecord("snakemake", logging.INFO, "", 0, None, None, None)
    record.__dict__.update({"event": "progress", "done": 1, "total": 1, "created": 5})
    handler.handle(record)
    handler.close()
    assert capsys.readouterr().out.endswith("(5 s)  | 1 of 1 jobs (100%)\n")


def test_the_small_words():
    assert [duration(s) for s in (4.6, 331, 7440)] == ["5 s", "5 min 31 s", "2 h 4 min"]
    assert made(["results/tables/a.parquet", "results/tables/b.parquet"]) == "results/tables/a.parquet and 1 more"
    assert made([f"results/probes/d/{i}.parquet" for i in range(5)]) == "results/probes/d/ (5 files)"
    assert training_progress("no bar here") is None
    assert named_error("a\nb\nc\nd\n") == ["b", "c", "d"]
