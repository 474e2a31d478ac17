"""The run's console (attnlearn.runtime.console, the `attnlearn` logger plugin): driven with the
records Snakemake sends it, as dicts."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from types import SimpleNamespace

from attnlearn.runtime.console import Console, duration, made, named_error, training_progress

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def no_kept_times(monkeypatch, tmp_path):
    """The times an earlier run's console kept (time_left.TIMES_FILE): none, and none written
    into the checkout by a test of the plugin."""
    from attnlearn.cost import time_left

    monkeypatch.setattr(time_left, "TIMES_FILE", tmp_path / "kept" / "job_times.tsv")

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
    # finished or running job nor a record of an earlier run to time it by: named, not guessed
    # from the trainings, and no "about 0 s left"
    assert line.endswith("(1 min 40 s)  | 1 of 3 jobs (33%), time left not known: 1 rule (tables) not timed yet, "
                         "in this run or earlier ones"), line
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


def test_a_running_job_counts_what_its_own_bar_says_is_left(tmp_path):
    """A fault this reproduces: in the default run's tail a synthetic_mt training (70 s) ran
    while the rule's mean was its 10 s synthetic_cls trainings; the estimate said 44 s where
    70 s were left."""
    log = tmp_path / "train.log"
    log.write_text(bar(20, 100, "01:20"))
    c = Console()
    c.record({"event": "run_info", "stats": {"train": 2, "total": 2}, "created": 0})
    c.record({**TRAIN, "jobid": 1, "created": 0})
    c.record({"event": "job_finished", "job_id": 1, "created": 10})  # a short training: the mean is 10 s
    c.record({**TRAIN, "log": [str(log)], "created": 10})
    [line] = c.record({"event": "progress", "done": 1, "total": 2, "created": 30})
    # the running one: 80 s left by its bar, not the mean's 10 - 20 = 0 s; 30 s of work in 30 s
    assert line.endswith("1 of 2 jobs (50%), about 1 min 20 s left"), line


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
                     "    r.csv: line 3 is not UTF-8 (byte 0xe9 at column 4)"]
    assert c.summary() == ["1 job failed:", f"  prepare_data (r) (log: {log})", lines[1]]
    # the log's end, its traceback left in the log: the message says the file, the line and the fault
    shown = Console().record({"event": "job_error", "jobid": 3, "rule_name": "prepare_data", "log": [str(log)]})
    assert shown[1:] == ["    | reading", lines[1]]


def test_a_bugs_traceback_is_shown_an_own_errors_is_not(tmp_path):
    """An error of the code (KeyError) keeps its traceback under the job, what a bug report
    needs; a download's checksum refusal, chained to another, is its message alone."""
    log = tmp_path / "tables.log"
    frames = '  File "x.py", line 1, in main\n    main(job)\n  File "y.py", line 9, in f\n    return d["k"]\n'
    log.write_text(f"reading\nTraceback (most recent call last):\n{frames}KeyError: 'k'\n")
    shown = Console().record({"event": "job_error", "jobid": 1, "rule_name": "tables", "log": [str(log)]})
    assert shown[1:] == ["    | reading", "    | Traceback (most recent call last):", '    |   File "x.py", line 1, in main',
                         "    |     main(job)", '    |   File "y.py", line 9, in f', '    |     return d["k"]',
                         "    | KeyError: 'k'"]
    log.write_text(f"Traceback (most recent call last):\n{frames}OSError: gone\n\nThe above exception was the direct "
                   f"cause of the following exception:\n\nTraceback (most recent call last):\n{frames}"
                   "attnlearn.data.download.ChecksumError: checksum mismatch for f.zip: expected sha256 ab, got cd\n")
    shown = Console().record({"event": "job_error", "jobid": 1, "rule_name": "prepare_data", "log": [str(log)]})
    assert shown[1:] == ["    | OSError: gone", "    checksum mismatch for f.zip: expected sha256 ab, got cd"]


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


STOPPED_LOG = (bar(963, 1500, "00:30") + "\n"  # the training's last bar, then its words (runtime/jobs.py)
               "training stopped at step 963 (SIGINT); rerun to resume from there\n")


def test_a_stopped_training_is_one_line_with_its_step_and_the_command_that_resumes_it(tmp_path):
    """Ctrl-C once read as a crash, "Error in rule train", the log's traceback and
    Snakemake's WorkflowError; a stop is one line per training and one at the end."""
    log = tmp_path / "train.log"
    log.write_text(STOPPED_LOG)
    c = Console()
    c.command = "snakemake --cores 2 --configfile my.yaml"
    c.record({**TRAIN, "log": [str(log)], "created": 0})
    lines = c.record({"event": "job_error", "jobid": 7, "rule_name": "train", "log": [str(log)], "created": 1})
    assert lines == ["stopped train (d, standard-s1) at step 963 of 1,500 (SIGINT); "
                     "`snakemake --cores 2 --configfile my.yaml` resumes it from there"]
    for said in ("Shutting down, this might take some time.",
                 "Exiting because a job execution failed. Look above for error messages",
                 "WorkflowError:\nAt least one job did not complete successfully."):
        assert c.record({"event": "error" if said.startswith("W") else "", "msg": said}) == [], said
    assert c.summary() == ["Stopped: 1 job (above); `snakemake --cores 2 --configfile my.yaml` goes on from where it "
                           "stopped."]
    # a log from before jobs.py wrote the words alone: the traceback's last line says the same
    log.write_text("Traceback (most recent call last):\n  File \"train.py\", line 570, in _train\n    raise x\n"
                   "    ^^^^^^^\nSystemExit: training stopped at step 963 (SIGINT); rerun to resume from there\n")
    assert Console().stop("train (d, standard-s1)", [log.read_text()]).startswith(
        "stopped train (d, standard-s1) at step 963 (SIGINT); ")
    # another job Ctrl-C interrupted: a stop too; a job that failed beside a stop still fails
    assert Console().stop("probe (d)", ["Traceback ...\n  File \"x\"\nKeyboardInterrupt\n"]).startswith(
        "stopped probe (d) (interrupted); ")
    failed = Console()
    failed.record({"event": "job_error", "jobid": 7, "rule_name": "train", "log": [str(log)]})
    (tmp_path / "prepare.log").write_text("ValueError: no\n")
    failed.record({"event": "job_error", "jobid": 8, "rule_name": "prepare", "log": [str(tmp_path / "prepare.log")]})
    assert failed.record({"event": "error", "msg": "WorkflowError:\nAt least one job did not complete successfully."}) \
        is None
    assert failed.summary()[0] == "1 job failed:"


def test_a_resumed_training_says_from_which_step(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("d/standard-s1: resumed from step 963 of 1500 (the state saved in x/resume.pt)\n"
                   + bar(1200, 1500, "00:10"))
    c = Console()
    c.record({**TRAIN, "log": [str(log)], "created": 0})
    assert c.follow() == ["    train (d, standard-s1): resumed from step 963 of 1,500",
                          "    train (d, standard-s1): step 1,200 of 1,500 (80%), 10 s left"]
    assert c.follow() == []
    c.record({"event": "job_finished", "job_id": 7, "created": 20})
    assert "(20 s)" in c.record({"event": "progress", "done": 1, "total": 1, "created": 20})[0]  # said once
    quiet = Console()  # a run too short for a follow line: the done line says it
    quiet.record({**TRAIN, "log": [str(log)], "created": 0})
    quiet.record({"event": "job_finished", "job_id": 7, "created": 20})
    assert "(20 s; resumed from step 963 of 1,500)" in quiet.record(
        {"event": "progress", "done": 1, "total": 1, "created": 20})[0]


def test_a_failed_jobs_log_is_shown_without_the_traceback_s_caret_lines(tmp_path):
    """A failure's output once started on a stray `|  ^^^^` line (the 15 lines' first)."""
    log = tmp_path / "prepare.log"
    log.write_text("".join(f"  File \"x.py\", line {i}, in f\n    call()\n    ^^^^^^\n" for i in range(10))
                   + "ValueError: r.csv: bad\n")
    lines = Console().record({"event": "job_error", "jobid": 3, "rule_name": "prepare_data", "log": [str(log)]})
    assert not [line for line in lines if set(line.strip(" |")) <= {"^", "~"}], lines
    assert lines[1].startswith("    |   File ") and lines[-1] == "    | ValueError: r.csv: bad"


def test_a_job_that_stops_with_words_puts_them_in_its_log_alone(tmp_path, capfd, monkeypatch):
    """runtime/jobs.run: a stop's words ("training stopped at step 3 ...") go into the job's log
    without a traceback, and the job exits 1 printing nothing on the terminal, where Python
    printed them a second time, without the job's name."""
    from types import SimpleNamespace

    import pytest

    from attnlearn.runtime.jobs import run

    def main(job):
        raise SystemExit("training stopped at step 3 (SIGINT); rerun to resume from there")

    import sys

    monkeypatch.setattr(sys, "stderr", open(2, "w", closefd=False))  # a job's stderr: fd 2, which the log takes
    log = tmp_path / "train.log"
    with pytest.raises(SystemExit) as stop:
        run(main, SimpleNamespace(threads=1, log=[str(log)]))
    assert stop.value.code == 1
    assert log.read_text() == "training stopped at step 3 (SIGINT); rerun to resume from there\n"
    assert capfd.readouterr().err == ""


def test_snakemakes_words_after_a_sigterm_are_said_once_and_a_profile_error_without_traceback():
    c = Console()
    msg = "Will exit after finishing currently running jobs (scheduler)."
    assert c.record({"event": "", "msg": msg}) is None  # printed as Snakemake does, once
    assert c.record({"event": "", "msg": msg}) == []
    said = c.record({"event": "error", "exception": "ProfileError",
                     "msg": 'ProfileError in file "/x/Snakefile", line 17:\n--profile profiles/slurm: ...; run '
                            'instead:\n  snakemake --workflow-profile profiles/slurm\n  File "/x/Snakefile", line 17'})
    assert said == ["--profile profiles/slurm: ...; run instead:", "  snakemake --workflow-profile profiles/slurm"]
    # the report's refusal (reporting/guard.py), raised inside asyncio's runner
    said = c.record({"event": "error", "exception": "ReportRefused",
                     "msg": 'ReportRefused:\nno report: 3 jobs of c.yaml are not up to date (rules tables); run `snakemake '
                            '--cores 2 --configfile c.yaml`.\n  File "/usr/lib/python3.11/asyncio/runners.py", line 118, '
                            'in run\n  File "/x/src/attnlearn/reporting/guard.py", line 43, in auto_report'})
    assert said == ["no report: 3 jobs of c.yaml are not up to date (rules tables); run `snakemake --cores 2 "
                    "--configfile c.yaml`."]


def after_a_10_s_prepare() -> str:
    """The progress line of a run of a prepare job and two trainings once the prepare job (10 s)
    has finished."""
    c = Console()
    c.record({"event": "run_info", "stats": {"prepare": 1, "train": 2, "total": 3}, "created": 0})
    c.record({"event": "job_info", "jobid": 1, "rule_name": "prepare", "created": 0})
    c.record({"event": "job_finished", "job_id": 1, "created": 10})
    [line] = c.record({"event": "progress", "done": 1, "total": 3, "created": 10})
    return line


def test_a_rule_not_timed_in_this_run_is_priced_from_earlier_runs_records(tmp_path, monkeypatch):
    """A fault this reproduces: later runs said "about 0 s left besides 9 rules not timed yet"
    for rules whose benchmark records of earlier runs were on disk."""
    from attnlearn.cost import time_left

    bench = tmp_path / "results/benchmarks/train/d"
    bench.mkdir(parents=True)
    for run, s in (("standard-s1", 300.0), ("standard-s2", 500.0)):
        (bench / f"{run}.tsv").write_text(f"s\th:m:s\tmax_rss\n{s}\t0:05:00\t300.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time_left, "BENCHMARKS", {})
    time_left.remember_benchmarks([SimpleNamespace(name="train", benchmark="results/benchmarks/train/{dataset}/{run}.tsv"),
                                 SimpleNamespace(name="tables", benchmark=None)])
    assert time_left.BENCHMARKS == {"train": "results/benchmarks/train/*/*.tsv"}
    assert time_left.recorded_seconds("results/benchmarks/train/*/*.tsv") == 400.0
    line = after_a_10_s_prepare()
    # two trainings of 400 s each by the records, at the parallelism so far (10 s of work in 10 s)
    assert line.endswith("1 of 3 jobs (33%), about 13 min 20 s left"), line


def test_a_resumed_run_prices_its_jobs_left_by_theirs_not_by_jobs_its_killed_attempt_finished(tmp_path, monkeypatch):
    """A fault this reproduces: a resumed SST run said "about 6 h 48 min left" with 1.5 h to go.
    Its train rule's earlier records held two 39-minute donors that the killed attempt had
    finished, and each 8-minute training left was priced at the mean of all the records. The
    DAG's jobs to run (kept as the run starts) leave the finished ones out."""
    from attnlearn.cost import time_left

    bench = tmp_path / "results/benchmarks/train/d"
    bench.mkdir(parents=True)
    for run, s in (("donor-s1", 2340.0), ("donor-s2", 2340.0), ("standard-s1", 480.0), ("standard-s2", 480.0)):
        (bench / f"{run}.tsv").write_text(f"s\th:m:s\tmax_rss\n{s}\t0:05:00\t300.0\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(time_left, "BENCHMARKS", {})
    monkeypatch.setattr(time_left, "PENDING", {})
    time_left.remember_benchmarks([SimpleNamespace(name="train", benchmark="results/benchmarks/train/{dataset}/{run}.tsv")])
    before = after_a_10_s_prepare()
    assert before.endswith("about 47 min 0 s left"), before  # without the run's jobs: (2340 + 480) / 2 each
    job = lambda rule, **wildcards: SimpleNamespace(rule=SimpleNamespace(name=rule), wildcards_dict=wildcards)  # noqa: E731
    time_left.remember_pending(SimpleNamespace(dag=SimpleNamespace(needrun_jobs=lambda: [
        job("prepare", dataset="d"), job("train", dataset="d", run="standard-s1"),
        job("train", dataset="d", run="standard-s2")])))
    assert time_left.PENDING["train"] == [("d", "standard-s1"), ("d", "standard-s2")]
    line = after_a_10_s_prepare()
    assert line.endswith("1 of 3 jobs (33%), about 16 min 0 s left"), line  # two trainings of 480 s
    time_left.remember_pending(SimpleNamespace())  # a DAG it cannot read: no list, priced as before
    assert time_left.PENDING == {} and after_a_10_s_prepare() == before


@pytest.mark.process
def test_a_real_run_s_dag_gives_its_jobs_to_run_by_rule_and_wildcards(tmp_path):
    """remember_pending reads Snakemake's DAG (workflow.dag.needrun_jobs, each job's rule and
    wildcards_dict) in a real run's onstart:, as the Snakefile calls it: a Snakemake that named
    these otherwise would leave the list empty (and the time left priced as before) unseen."""
    import json
    import subprocess
    import sys

    (tmp_path / "Snakefile").write_text(
        "import json\n"
        "from attnlearn.cost import time_left\n"
        "onstart:\n"
        "    time_left.remember_pending(workflow)\n"
        "    open('pending.json', 'w').write(json.dumps({r: keys for r, keys in time_left.PENDING.items()}))\n"
        "rule all:\n"
        "    input: expand('out/{d}/{run}.txt', d=['a'], run=['s1', 's2'])\n"
        "rule make:\n"
        "    output: 'out/{d}/{run}.txt'\n"
        "    shell: 'touch {output}'\n")
    done = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "--quiet"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pending = json.loads((tmp_path / "pending.json").read_text())
    assert {r: sorted(map(tuple, keys)) for r, keys in pending.items()} == {"all": [()], "make": [("a", "s1"), ("a", "s2")]}


def test_a_rule_never_timed_is_priced_from_the_reference_run_at_this_run_s_speed(tmp_path, monkeypatch):
    """A fresh default run once said "besides 8 rules not timed yet" and left them out of its
    estimate; the reference run's times (cost/default_times.tsv) price them, scaled by how
    this run's finished jobs went against the same rules there."""
    from attnlearn.cost import time_left

    ref = tmp_path / "times.tsv"
    ref.write_text("# a reference run\nrule\tjobs\tmean_s\nprepare\t1\t5.0\ntrain\t2\t100.0\n")
    monkeypatch.chdir(tmp_path)  # no earlier records here
    monkeypatch.setattr(time_left, "BENCHMARKS", {})
    time_left.remember_benchmarks([SimpleNamespace(name="train", benchmark="results/benchmarks/train/{run}.tsv")],
                                reference=ref)
    line = after_a_10_s_prepare()  # twice the reference's 5 s
    assert line.endswith("1 of 3 jobs (33%), about 6 min 40 s left"), line  # 2 x 100 s x 2
    time_left.remember_benchmarks([], reference=None)  # another config: no reference
    line = after_a_10_s_prepare()
    assert line.endswith("time left not known: 1 rule (train) not timed yet, in this run or earlier ones"), line


def run_of(c: Console, jobs) -> list[str]:
    """The progress lines of ``jobs`` [(rule, values, start, end)], each line as its job ends
    (a job's start is given before any later end)."""
    events = sorted([(start, 0, i) for i, (_, _, start, _) in enumerate(jobs)]
                    + [(end, 1, i) for i, (_, _, _, end) in enumerate(jobs)])
    lines = []
    for t, end, i in events:
        rule, values = jobs[i][:2]
        if not end:
            c.record({"event": "job_info", "jobid": i, "rule_name": rule, "created": t,
                      "wildcards": dict(zip(("dataset", "run"), values))})
            continue
        c.record({"event": "job_finished", "job_id": i, "created": t})
        lines += c.record({"event": "progress", "done": len(lines) + 1, "total": sum(c.counts.values()), "created": t})
    return lines


def per_job_reference(tmp_path, monkeypatch, rows: str) -> None:
    """A reference run's table of one row a job (as default_times.tsv), remembered as the
    Snakefile does, with no earlier records here."""
    from attnlearn.cost import time_left

    for name in ("REFERENCE", "REFERENCE_JOBS", "BENCHMARKS"):
        monkeypatch.setattr(time_left, name, {})
    ref = tmp_path / "times.tsv"
    ref.write_text("# a reference run\nrule\twildcards\ts\n" + rows)
    monkeypatch.chdir(tmp_path)
    time_left.remember_benchmarks([], reference=ref)


def test_a_job_yet_to_run_is_priced_by_its_own_reference_time_at_this_run_s_speed(tmp_path, monkeypatch):
    """At 25-29% of a default run the trainings left were once priced at the train rule's mean
    over the finished ones, two 60-second synthetic_mt trainings, where most left were
    10-second synthetic_cls ones (1.6 times the truth). Each job now costs its own time in the
    reference run, at this run's speed on the same jobs; a running one its own time less what
    it has run, and the run lasts at least as long as its longest job left."""
    per_job_reference(tmp_path, monkeypatch, "prepare\td\t5.0\ntrain\td, small\t5.0\ntrain\td, big\t50.0\n"
                      "tables\t\t2.5\n")
    c = Console()
    c.record({"event": "run_info", "stats": {"prepare": 1, "train": 2, "tables": 1, "total": 4}, "created": 0})
    lines = run_of(c, [("prepare", ("d",), 0, 10), ("train", ("d", "small"), 10, 20), ("tables", (), 20, 25),
                       ("train", ("d", "big"), 20, 120)])
    # after prepare (twice its reference: speed 2): a training whose key is not known yet costs
    # the mean of the two not yet run (27.5 s), at speed 2, and the table 5 s: 115 s, the truth
    assert lines[0].endswith("1 of 4 jobs (25%), about 1 min 55 s left"), lines[0]
    # after the small training, the big one left: 50 s at speed 2 (the rule's mean here said 10 s)
    assert lines[1].endswith("2 of 4 jobs (50%), about 1 min 45 s left"), lines[1]
    # the table done while the big one runs (5 of its 100 s): its own 95 s left, though two jobs
    # ran at once so far (the work over the parallelism says 95 / (30/25) = 79 s)
    assert lines[2].endswith("3 of 4 jobs (75%), about 1 min 35 s left"), lines[2]


def test_a_job_without_its_own_reference_costs_its_rule_s_mean_and_a_rule_with_none_is_named(tmp_path, monkeypatch):
    """A job whose key the reference lacks (every key it has is matched by a job of this run)
    costs its rule's mean in this run; a rule with no time anywhere is named in words, not
    counted as nothing."""
    per_job_reference(tmp_path, monkeypatch, "prepare\td\t5.0\ntrain\td, small\t5.0\n")
    c = Console()
    c.record({"event": "run_info", "stats": {"prepare": 1, "train": 3, "tables": 1, "total": 5}, "created": 0})
    lines = run_of(c, [("prepare", ("d",), 0, 10), ("train", ("d", "small"), 10, 30), ("train", ("d", "new"), 30, 60),
                       ("train", ("d", "newer"), 60, 80), ("tables", (), 80, 85)])
    # after the small training (20 s): two trainings with no reference of their own, 20 s each
    assert lines[1].endswith("2 of 5 jobs (40%), about 40 s left besides 1 rule (tables) not timed yet, "
                             "in this run or earlier ones"), lines[1]
    # then (20 + 30) / 2 = 25 s for the last one
    assert lines[2].endswith("about 25 s left besides 1 rule (tables) not timed yet, in this run or earlier ones")
    assert lines[3].endswith("4 of 5 jobs (80%), time left not known: 1 rule (tables) not timed yet, in this run "
                             "or earlier ones"), lines[3]


def test_earlier_runs_records_price_each_job_by_its_own_key(tmp_path, monkeypatch):
    """An earlier run's benchmark records here price a job yet to run by the record of the
    same job (its wildcards in the record's path), not the rule's mean over all of them."""
    from attnlearn.cost import time_left

    bench = tmp_path / "results/benchmarks/train/d"
    bench.mkdir(parents=True)
    for run, s in (("big", 300.0), ("small", 30.0)):
        (bench / f"{run}.tsv").write_text(f"s\th:m:s\tmax_rss\n{s}\t0:05:00\t300.0\n")
    per_job_reference(tmp_path, monkeypatch, "")
    time_left.remember_benchmarks([SimpleNamespace(name="train", benchmark="results/benchmarks/train/{dataset}/{run}.tsv")])
    assert time_left.recorded_jobs("results/benchmarks/train/*/*.tsv") == {("big", "d"): 300.0, ("d", "small"): 30.0}
    c = Console()
    c.record({"event": "run_info", "stats": {"train": 2, "total": 2}, "created": 0})
    [line, _] = run_of(c, [("train", ("d", "small"), 0, 60), ("train", ("d", "big"), 60, 660)])
    assert line.endswith("1 of 2 jobs (50%), about 10 min 0 s left"), line  # 300 s at twice the record's time


@pytest.mark.workflow
def test_the_shipped_reference_names_rules_of_the_workflow(tmp_path, monkeypatch):
    """default_times.tsv is read as it is shipped, and each of its rules is one the Snakefile has
    (a renamed rule would leave its jobs unpriced)."""
    from snakemake.api import SnakemakeApi
    from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

    from attnlearn.cost.time_left import DEFAULT_TIMES, read_reference

    from attnlearn.cost import time_left

    monkeypatch.setattr(time_left, "REFERENCE", {})  # reading the workflow fills it: not for later tests
    monkeypatch.setattr(time_left, "BENCHMARKS", {})
    times = read_reference(DEFAULT_TIMES)
    with SnakemakeApi(OutputSettings()) as api:
        wf = api.workflow(resource_settings=ResourceSettings(cores=1), snakefile=REPO / "Snakefile",
                          config_settings=ConfigSettings(configfiles=[REPO / "config/config.yaml"]), workdir=tmp_path)
        rules = {r.name for r in wf._workflow.rules}
    assert times and set(times) <= rules, set(times) - rules
    assert all(t >= 0 for t in times.values()) and times["train"] > 0


def test_a_target_rule_has_no_time_and_a_rule_without_records_is_priced_from_the_last_run_here(tmp_path, monkeypatch):
    """Lines once ended "besides 1 rule (table2) not timed yet" (table2 names a file, it runs
    nothing), and rules that ran before but write no benchmark record (figures) said "time
    left not known" in every run. A rule without output is no work; each run's console keeps
    the times it saw (time_left.TIMES_FILE), which price the next run's jobs."""
    from attnlearn.cost import time_left

    monkeypatch.setattr(time_left, "NO_WORK", {"all"})
    monkeypatch.setattr(time_left, "BENCHMARKS", {})
    monkeypatch.setattr(time_left, "REFERENCE", {})
    monkeypatch.setattr(time_left, "REFERENCE_JOBS", {})
    time_left.remember_benchmarks([SimpleNamespace(name="table2", output=[], benchmark=None),
                                 SimpleNamespace(name="figures", output=["results/figures/{dataset}/x.png"],
                                                 benchmark=None)])
    assert {"all", "table2"} <= time_left.NO_WORK and "figures" not in time_left.NO_WORK

    def run():
        c = Console()
        c.record({"event": "run_info", "stats": {"train": 1, "figures": 2, "table2": 1, "total": 4}, "created": 0})
        c.record({**TRAIN, "created": 0})
        c.record({"event": "job_finished", "job_id": 7, "created": 100})
        return c, c.record({"event": "progress", "done": 1, "total": 4, "created": 100})[0]

    first, line = run()
    assert line.endswith("1 of 4 jobs (25%), time left not known: 1 rule (figures) not timed yet, in this run or "
                         "earlier ones"), line
    for i, d in enumerate(("a", "b")):
        first.record({"event": "job_info", "jobid": 10 + i, "rule_name": "figures", "wildcards": {"dataset": d},
                      "created": 100})
        first.record({"event": "job_finished", "job_id": 10 + i, "created": 130})
    time_left.keep_times(first.took)
    assert time_left.kept_times() == {"train": {("d", "standard-s1"): 100.0}, "figures": {("a",): 30.0, ("b",): 30.0}}
    # the next run: the figures priced by their last times here (60 s of work left, 100 s of work
    # in 100 s), the target rule left out
    _, line = run()
    assert line.endswith("1 of 4 jobs (25%), about 1 min 0 s left"), line
    time_left.keep_times({"figures": [(("a",), 12.0)]})  # a job's latest time replaces its earlier one
    assert time_left.kept_times()["figures"] == {("a",): 12.0, ("b",): 30.0}


def test_a_training_an_earlier_attempt_began_is_work_done_not_a_price(tmp_path, monkeypatch):
    """The SST transfer run, resumed after a kill, said "about 42 s left" with some fifteen
    10-minute trainings to go: two trainings an earlier attempt had finished were published in
    3 s each, and this run's speed against their 2,300-s records made every job left cost 1/700
    of its time. A job whose log says it resumed or restored counts as work done, not as a time,
    and its benchmark record (which Snakemake rewrites with the 3 s) prices nothing after."""
    from attnlearn.cost import time_left

    bench = tmp_path / "results/benchmarks/train/d"
    bench.mkdir(parents=True)
    for run in ("s1", "s2", "s3", "s4"):
        (bench / f"{run}.tsv").write_text("s\th:m:s\n1000.0\t0:16:40\n")
    per_job_reference(tmp_path, monkeypatch, "")
    time_left.remember_benchmarks([SimpleNamespace(name="train", benchmark="results/benchmarks/train/{dataset}/{run}.tsv")])
    log = tmp_path / "s1.log"
    log.write_text("d/s1: training finished in an earlier attempt; publishing its checkpoints from w\n")
    c = Console()
    c.record({"event": "run_info", "stats": {"train": 4, "total": 4}, "created": 0})
    c.record({"event": "job_info", "jobid": 1, "rule_name": "train", "wildcards": {"dataset": "d", "run": "s1"},
              "log": [str(log)], "created": 0})
    c.record({"event": "job_finished", "job_id": 1, "created": 3})
    line = c.record({"event": "progress", "done": 1, "total": 4, "created": 3})[0]
    assert line.endswith("1 of 4 jobs (25%), about 50 min 0 s left"), line  # three 1,000-s jobs, one at a time
    assert c.partial == {"train": [(("d", "s1"), 3)]} and not c.took

    (bench / "s1.tsv").write_text("s\th:m:s\n3.0\t0:00:03\n")  # what Snakemake wrote for it
    time_left.keep_times(c.took, partial=c.partial)
    assert time_left.partial_jobs() == {("train", ("d", "s1"))}
    assert Console()._priors("train") == {("d", "s2"): 1000.0, ("d", "s3"): 1000.0, ("d", "s4"): 1000.0}
    time_left.keep_times({"train": [(("d", "s1"), 990.0)]})  # a whole run of it takes it off
    assert time_left.partial_jobs() == set()
