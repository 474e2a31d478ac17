"""Why jobs rerun, one line per rule when a run starts (src/attnlearn/runtime/reruns.py; once a
changed probe.max_examples reran 23 jobs and the console said nothing)."""

import os
from types import SimpleNamespace

from attnlearn.runtime.reruns import changed_keys, params_keys, summary


class Params(dict):
    """Snakemake's job.params as reruns reads it: items() of name -> value."""


class Change(SimpleNamespace):
    def __bool__(self):
        return bool(self.only_old or self.only_new)


def reason(**kw):
    base = dict(forced=False, incomplete_output=set(), params_changed=Change(only_old=set(), only_new=set()),
                code_changed=False, software_stack_changed=False, input_changed=False, updated_input=set(),
                updated_input_run=set(), missing_output=set())
    return SimpleNamespace(**{**base, **kw})


def job(rule, params=None, output=("out",), input=()):
    return SimpleNamespace(rule=SimpleNamespace(name=rule), params=Params(params or {}), output=list(output),
                           input=list(input))


class Dag:
    def __init__(self, jobs):
        self.jobs = jobs
        self.workflow = SimpleNamespace(persistence=SimpleNamespace(params_changed=lambda j: j.own_params))

    def needrun_jobs(self):
        return [j for j, _ in self.jobs]

    def reason(self, j):
        return dict((id(a), r) for a, r in self.jobs)[id(j)]


def test_changed_keys_down_to_the_config_key():
    old = {"max_examples": 200, "batch_size": 50, "measures": ["alpha", "xi"]}
    assert changed_keys(old, {**old, "max_examples": 100}, "probe") == ["probe.max_examples"]
    assert changed_keys(old, {**old, "measures": ["alpha"]}, "probe") == ["probe.measures"]
    assert changed_keys({"a": {"b": 1}}, {"a": {"b": 2}, "c": 3}, "run") == ["run.a.b", "run.c"]
    assert changed_keys("cpu", "cuda", "device") == ["device"]


def test_a_changed_param_is_named_by_its_key():
    """Snakemake keeps each param's repr without its name; the new values are named from the job."""
    old_probe, old_run = {"max_examples": 200, "batch_size": 50}, {"lr": 0.1, "steps": 20}
    new_probe = {**old_probe, "max_examples": 100}
    j = job("probe", {"run": old_run, "probe": new_probe, "work_dir": "x"})
    assert params_keys(j, Change(only_old={repr(old_probe)}, only_new={repr(new_probe)})) == ["probe.max_examples"]


def test_one_line_per_rule_and_one_for_the_jobs_that_follow(tmp_path):
    lib = str(tmp_path / "src" / "attnlearn") + os.sep
    old_probe = {"max_examples": 200, "batch_size": 50}
    new_probe = {**old_probe, "max_examples": 100}
    probes = [job("probe", {"probe": new_probe}) for _ in range(6)]
    trains = [job("train", {}) for _ in range(2)]
    jobs = [(p, reason(params_changed=Change(only_old={repr(old_probe)}, only_new={repr(new_probe)}),
                       updated_input_run=set())) for p in probes]
    jobs += [(t, reason(updated_input={lib + "models/seq2seq.py", "results/data/d/train.parquet"})) for t in trains]
    jobs += [(job("agreement"), reason(updated_input_run={"results/probes/d/x.parquet"})) for _ in range(16)]
    jobs += [(job("tables"), reason(updated_input_run={"results/agreement/d.parquet"}))]
    jobs += [(job("figures"), reason(missing_output={"results/figures/e/h.png"}))]  # a new dataset: no rerun
    jobs += [(job("train"), reason(incomplete_output={"results/runs/d/standard-s3/checkpoints"}))]
    for j, _ in jobs:
        j.own_params = Change(only_old=set(), only_new=set())
    lines = summary(Dag(jobs), [lib])
    assert lines == [
        "Why jobs rerun (their outputs from an earlier run are out of date):",
        "  probe (6 jobs): params changed: probe.max_examples",
        "  train (3 jobs): code changed: models/seq2seq.py; input newer: results/data/d/train.parquet; "
        "stopped before its end (incomplete outputs)",
        "  then 17 jobs of agreement, tables on their outputs"]
    assert summary(Dag([(job("figures"), reason(missing_output={"x"}))]), [lib]) == []  # first runs: nothing


def test_a_job_rerun_below_another_says_its_own_causes_too(tmp_path):
    """Snakemake stops looking once a job above reruns; a job whose own code or params changed
    is named for them, not only as following."""
    lib = tmp_path / "src"
    (lib / "models").mkdir(parents=True)
    out = tmp_path / "out.parquet"
    out.write_text("x")
    os.utime(out, (1_000_000_000, 1_000_000_000))
    (lib / "models/seq2seq.py").write_text("code")  # newer than the output
    j = job("train", {}, output=[str(out)], input=[str(lib / "models/seq2seq.py"), "results/data/d/train.parquet"])
    j.own_params = Change(only_old=set(), only_new=set())
    lines = summary(Dag([(j, reason(updated_input_run={"results/data/d/train.parquet"}))]), [str(lib) + os.sep])
    assert lines[1] == "  train (1 job): code changed: models/seq2seq.py"


def test_the_target_rule_is_not_a_job_that_reruns():
    j = job("all", output=())
    j.own_params = Change(only_old=set(), only_new=set())
    assert summary(Dag([(j, reason(updated_input_run={"results/tables/table2.parquet"}))]), []) == []


def test_a_job_whose_outputs_are_all_missing_is_no_rerun_though_its_inputs_read_as_updated():
    """Fault seen re-tabling SST's block with --train-split: the 15 training-split probes, made
    for the first time, were listed as reruns ("input newer: results/runs/sst/frozen-s4/checkpoints"),
    as Snakemake's reason for them held updated inputs beside the missing outputs."""
    first = job("probe_train", output=("t/a.parquet", "t/a.perf.parquet"))
    partly = job("probe", output=("p/a.parquet", "p/a.perf.parquet"))
    for j in (first, partly):
        j.own_params = Change(only_old=set(), only_new=set())
    newer = {"results/runs/d/standard-s1/checkpoints"}
    assert summary(Dag([(first, reason(missing_output={"t/a.parquet", "t/a.perf.parquet"}, updated_input=newer))]),
                   []) == []
    lines = summary(Dag([(partly, reason(missing_output={"p/a.perf.parquet"}, updated_input=newer))]), [])
    assert lines[1] == "  probe (1 job): input newer: results/runs/d/standard-s1/checkpoints"


def test_a_training_that_a_stop_left_without_outputs_resumes_and_says_from_which_step(tmp_path):
    """A fault this reproduces: after a Ctrl-C, "Why jobs rerun" named 6 trainings where 8 ran:
    a training stopped mid-way has no outputs, so it read as made for the first time. Its log's
    last words say where it stopped; a job never started, or one whose log ends otherwise, is
    still no rerun."""
    stopped, other, fresh = tmp_path / "s1.log", tmp_path / "s2.log", tmp_path / "none.log"
    stopped.write_text("d/standard-s1:  40%|####  | 80/200\ntraining stopped at step 1200 (SIGINT); rerun to "
                       "resume from there\n\n")
    other.write_text("training stopped at step 5 (SIGINT); rerun to resume from there\nresumed from step 5 of 200\n"
                     "ValueError: x\n")
    jobs = []
    for name, log in (("standard-s1", stopped), ("standard-s2", other), ("uniform-s1", fresh)):
        j = job("train", output=(f"r/{name}/checkpoints", f"r/{name}/train_log.parquet"))
        j.log, j.wildcards_dict, j.own_params = [str(log)], {"dataset": "d", "run": name}, Change(only_old=set(),
                                                                                                only_new=set())
        # Snakemake names the missing log table, not the checkpoint folder (a directory output)
        jobs.append((j, reason(missing_output={j.output[1]})))
    assert summary(Dag(jobs), []) == ["Why jobs rerun (their outputs from an earlier run are out of date):",
                                      "  train (1 job): resumed from where a stop left it: d/standard-s1 at step 1,200"]
