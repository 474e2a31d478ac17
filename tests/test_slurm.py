"""The workflow on a real SLURM cluster through profiles/slurm.

A single-node cluster (slurmctld, slurmd, munged from Debian's packages) is
started on 127.0.0.1 for this module, and every daemon it started is stopped by
its pid afterwards (tests/slurm/cluster.py). The tests check:

- the tiny end-to-end config run through the profile gives bit-identical
  results to a local ``--cores 2`` run, each rule one SLURM job with the
  profile's resources;
- faults: a training job's process killed (SIGKILL) or its job cancelled
  (scancel: SIGTERM, as a preemption) mid-run resumes from its last state when
  Snakemake is rerun; a job that fails once is retried and resumes; a job
  requeued by SLURM (``scontrol requeue``) resumes; all end with the
  checkpoints of an uninterrupted local run. A job that fails for good stops
  the run with its log shown and leaves no outputs.

All SLURM runs (the tiny one and the fault scenarios, each in its own working
directory) go at the same time, the local runs beside them: most of a SLURM run
is waiting for the plugin's next status check.

Needs root and ``apt-get install slurmctld slurmd slurm-client munge``; skipped
otherwise, but never in CI (CI=true), where .ci/run installs them. Select
with ``pytest -m slurm``. About 10 minutes on 2 cores: every SLURM job parses
the Snakefile twice (the job's Snakemake, then the one srun starts), and the
tiny spine config has about 40 jobs.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest
import torch
import yaml

from slurm.cluster import Cluster, unavailable
from test_workflow import REPO, SNAKEMAKE, TINY, snakemake


PROFILE = REPO / "profiles" / "slurm"
FAULTS = REPO / "tests" / "slurm" / "faults.yaml"
STEPS, EVERY = 200, 20  # FAULTS: training steps, and a checkpoint (with a resume state) every EVERY steps
# The shipped profile as it is, with the plugin polling after 1 s instead of 40 s.
SLURM = ["--workflow-profile", PROFILE, "--slurm-init-seconds-before-status-checks", "1",
         "--seconds-between-status-checks", "1"]
RUN_TIMEOUT = 1200


# -- running Snakemake -----------------------------------------------------------------------------

def start_snakemake(*args, cwd, log):
    """A Snakemake run in the background, its output going to ``log``."""
    with open(log, "w") as out:
        return subprocess.Popen([*SNAKEMAKE, "-d", str(cwd), *map(str, args)], stdout=out,
                                stderr=subprocess.STDOUT, text=True)


def stop_snakemake(proc):
    """SIGINT (Snakemake then cancels its SLURM jobs); KILL if it does not stop."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def finish(proc, log, timeout=RUN_TIMEOUT) -> tuple[int, str]:
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_snakemake(proc)
        raise AssertionError(f"snakemake ran over {timeout} s:\n{Path(log).read_text()[-4000:]}")
    return proc.returncode, Path(log).read_text()


def run_slurm(*args, cwd, log) -> tuple[int, str]:
    proc = start_snakemake(*SLURM, *args, cwd=cwd, log=log)
    try:
        return finish(proc, log)
    finally:
        stop_snakemake(proc)


def wait_for(check, what, proc=None, log=None, timeout=RUN_TIMEOUT):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if check():
            return
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"snakemake ended before {what}:\n{Path(log).read_text()[-4000:]}")
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


# -- reading what SLURM did ------------------------------------------------------------------------

def submissions(output: str) -> dict[str, tuple[str, str]]:
    """SLURM job id -> (rule, wildcards) of every job a run submitted (from its output)."""
    found = re.findall(r"submitted with SLURM jobid (\d+) \(log: \S*/rule_(\w+)/(\S*?)/?\d+\.log\)", output)
    return {jobid: (rule, wc) for jobid, rule, wc in found}


def jobcomp(cluster: Cluster) -> dict[str, dict[str, str]]:
    """Job id -> fields of its last record in the cluster's job completion log."""
    path = cluster.root / "log" / "jobcomp.log"
    records = {}
    for line in path.read_text().splitlines() if path.exists() else []:
        fields = dict(re.findall(r"(\w+)=(\S*)", line))
        records[fields["JobId"]] = fields
    return records


def show_job(cluster: Cluster, jobid: str) -> str:
    return cluster.run("scontrol", "show", "job", jobid).stdout


def job_training(cluster: Cluster, run: str, workdir: Path) -> str:
    """The id of the running SLURM job training ``run`` in ``workdir``."""
    out = cluster.run("squeue", "-h", "-t", "running", "-o", "%i|%k|%Z").stdout
    ids = [i for i, comment, wd in (line.split("|") for line in out.splitlines())
           if comment == f"rule_train_wildcards_tiny_mt_{run}" and Path(wd) == workdir]
    assert len(ids) == 1, f"no single running SLURM job trains {run} in {workdir}:\n{out}"
    return ids[0]


def training_pid(jobid: str) -> int:
    """The pid of the Python process running the train script inside SLURM job ``jobid``."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            env = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if f"SLURM_JOB_ID={jobid}".encode() in env and any(a.endswith(b".train.py") for a in argv):
            return int(proc.name)
    raise AssertionError(f"no training process in SLURM job {jobid}")


# -- results ---------------------------------------------------------------------------------------

def train_log(run: str) -> str:
    return f"results/runs/tiny_mt/{run}/train_log.parquet"


def run_dir(workdir: Path, run: str) -> Path:
    return workdir / f"results/runs/tiny_mt/{run}"


def outputs_of(workdir: Path, run: str) -> list[str]:
    """Whatever of the run's outputs (checkpoints, training log) exists."""
    return [p.name for p in (run_dir(workdir, run) / "checkpoints", workdir / train_log(run)) if p.exists()]


def checkpoints(path: Path) -> dict[str, dict[str, torch.Tensor]]:
    return {p.name: torch.load(p, weights_only=True) for p in sorted((path / "checkpoints").glob("*.pt"))}


def assert_same_checkpoints(a: Path, b: Path):
    ca, cb = checkpoints(a), checkpoints(b)
    assert ca and ca.keys() == cb.keys(), (sorted(ca), sorted(cb))
    for name in ca:
        assert ca[name].keys() == cb[name].keys()
        for key in ca[name]:
            assert torch.equal(ca[name][key], cb[name][key]), f"{a.name}/{name}: {key} differs"


def resume_step(workdir: Path, run: str) -> int:
    return torch.load(run_dir(workdir, run) / "work" / "resume.pt", weights_only=False)["step"]


def training_starts(workdir: Path, run: str) -> list[int]:
    """The steps the job log's training started from (tqdm's first bar; Snakemake clears a job's
    log when the job starts, so this is the last attempt's)."""
    text = (workdir / f"results/logs/train/tiny_mt/{run}.log").read_text(errors="replace")
    return [int(s) for s in re.findall(rf"\b(\d+)/{STEPS} \[00:00<\?", text)]


# -- fixtures --------------------------------------------------------------------------------------

def largest_memory_request() -> int:
    profile = yaml.safe_load((PROFILE / "config.yaml").read_text())
    rules = [profile["default-resources"], *profile.get("set-resources", {}).values()]
    return max(r.get("mem_mb", 0) for r in rules)


@pytest.fixture(scope="module")
def cluster():
    why = unavailable()
    if not why and Cluster("/").mem_mb < largest_memory_request():
        why = f"the profile asks for {largest_memory_request()} MB per job; this machine has less"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the SLURM tests for real: {why}")
        pytest.skip(why)
    root = Path(tempfile.mkdtemp(prefix="attnlearn-slurm-"))  # not under pytest's 0700 tmp: slurm writes here
    with pytest.MonkeyPatch.context() as mp:
        for var in list(os.environ):  # submit to the test cluster only, with no inherited sbatch options
            if var.startswith(("SLURM_", "SBATCH_", "SRUN_", "SQUEUE_")):
                mp.delenv(var)
        c = Cluster(root)
        try:
            c.start()
            yield c
        finally:
            c.stop()
            shutil.rmtree(root, ignore_errors=True)


def spine_config(folder: Path) -> Path:
    """The tiny config's study spine (tiny_mt, tiny_cls: data to Table 2, figures and the
    translation analyses) without the extras that add jobs but no new scheduling case
    (experiments, the Transformer dataset, TanhMax runs, training-split probes): every
    SLURM job parses the Snakefile twice, so jobs cost time here."""
    config = yaml.safe_load(TINY.read_text())
    config.pop("experiments", None)
    config["tables"] = {"train_split": False}
    config["datasets"] = {d: config["datasets"][d] for d in ("tiny_mt", "tiny_cls")}
    config["datasets"]["tiny_cls"]["runs"]["tanhmax"] = []
    path = folder / "spine.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def planned_jobs(config: Path, folder: Path) -> Counter:
    """Jobs per rule that a fresh run of ``config`` executes (a dry run's job stats), less the
    target rule `all`, which Snakemake runs itself."""
    out = snakemake("-n", "--configfile", config, cwd=folder).stdout
    stats = out.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    counts = Counter({rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", stats, re.M)})
    del counts["total"], counts["all"]
    return counts


def play_tiny(cluster, tmp_path_factory):
    """The tiny config's spine end to end on SLURM, and locally with --cores 2 at the same time."""
    local, remote = tmp_path_factory.mktemp("tiny-local"), tmp_path_factory.mktemp("tiny-slurm")
    config = spine_config(tmp_path_factory.mktemp("tiny-config"))
    t0 = time.monotonic()
    local_proc = start_snakemake("--cores", "2", "--configfile", config, cwd=local, log=local / "snakemake.out")
    try:
        rc, out = run_slurm("--configfile", config, cwd=remote, log=remote / "snakemake.out")
        local_rc, local_out = finish(local_proc, local / "snakemake.out")
    finally:
        stop_snakemake(local_proc)
    assert rc == 0, f"SLURM run failed:\n{out[-6000:]}\n{cluster.log_tail()}"
    assert local_rc == 0, f"local run failed:\n{local_out[-4000:]}"
    print(f"\ntiny config on SLURM and locally: {time.monotonic() - t0:.0f} s")
    return local, remote, out, planned_jobs(config, tmp_path_factory.mktemp("tiny-plan"))


def killed_then_rerun(cluster, workdir, run, how):
    """SIGKILL of the training process, or scancel of its job, mid-run; then a rerun."""
    first = workdir.parent / "first.out"
    proc = start_snakemake(*SLURM, "--retries", "0", train_log(run), "--configfile", FAULTS, cwd=workdir,
                           log=first)
    try:
        wait_for((run_dir(workdir, run) / "work" / "resume.pt").exists, f"{run}'s first resume state", proc, first)
        jobid = job_training(cluster, run, workdir)
        if how == "sigkill":
            os.kill(training_pid(jobid), signal.SIGKILL)
        else:
            cluster.run("scancel", jobid)
        rc, out = finish(proc, first)
    finally:
        stop_snakemake(proc)
    record = {"rc": rc, "out": out, "jobid": jobid, "state": jobcomp(cluster)[jobid]["JobState"],
              "outputs_after_kill": outputs_of(workdir, run), "resume_step": resume_step(workdir, run)}
    record["rerun_rc"], record["rerun_out"] = run_slurm(train_log(run), "--configfile", FAULTS, cwd=workdir,
                                                        log=workdir.parent / "rerun.out")
    record["starts"] = training_starts(workdir, run)
    return record


def retried_and_requeued(cluster, workdir, killed, requeued):
    """The profile as shipped (retries: 1, slurm-requeue): one training killed once, another's
    job requeued by SLURM, in one run."""
    log = workdir.parent / "run.out"

    def kill(run):
        os.kill(training_pid(job_training(cluster, run, workdir)), signal.SIGKILL)
        return None

    def requeue(run):
        jobid = job_training(cluster, run, workdir)
        cluster.run("scontrol", "requeue", jobid)
        # SLURM holds a requeued job back for 2 minutes (BeginTime); an admin may release it at once
        wait_for(lambda: cluster.jobs().get(jobid) == "PENDING", "the requeued job to pend", timeout=120)
        cluster.run("scontrol", "update", f"jobid={jobid}", "StartTime=now")
        return jobid

    def when_saved(run, fault):  # each fault as soon as its training has saved a state
        wait_for((run_dir(workdir, run) / "work" / "resume.pt").exists, f"{run}'s first resume state", proc, log)
        return fault(run)

    proc = start_snakemake(*SLURM, train_log(killed), train_log(requeued), "--configfile", FAULTS, cwd=workdir,
                           log=log)
    try:
        # One thread per fault: waiting out the requeue (seconds under load) must not hold
        # back the kill, or the other training finishes first (CI, 2026-11-24).
        with ThreadPoolExecutor(2) as pool:
            acts = {run: pool.submit(when_saved, run, fault) for run, fault in ((killed, kill), (requeued, requeue))}
            requeued_job = acts[requeued].result()
            acts[killed].result()
        rc, out = finish(proc, log)
    finally:
        stop_snakemake(proc)
    return {"rc": rc, "out": out, "requeued_job": show_job(cluster, requeued_job),
            "starts": {run: training_starts(workdir, run) for run in (killed, requeued)}}


def failing_for_good(cluster, workdir, run):
    """device: cuda where CUDA is unusable: training raises on every attempt."""
    config = yaml.safe_load(FAULTS.read_text())
    config["device"] = "cuda"
    broken = workdir.parent / "broken.yaml"
    broken.write_text(yaml.safe_dump(config))
    rc, out = run_slurm(train_log(run), "--configfile", broken, cwd=workdir, log=workdir.parent / "run.out")
    jobs = submissions(out)
    last = max(jobs, key=int) if jobs else None  # slurmctld forgets a job MinJobAge (300 s) after its end
    return {"rc": rc, "out": out, "jobs": jobs, "records": {j: jobcomp(cluster).get(j, {}) for j in jobs},
            "last_job": show_job(cluster, last) if last else "", "outputs": outputs_of(workdir, run),
            "files": sorted(str(p.relative_to(workdir)) for p in run_dir(workdir, run).rglob("*") if p.is_file())}


def play_faults(cluster, tmp_path_factory):
    """Uninterrupted local trainings of the fault config (the reference), then every fault
    scenario at the same time, each in a fresh workdir holding the reference's prepared data
    (so that only training runs on SLURM). Scenario -> its record or exception; "ref" -> the
    reference's workdir."""
    ref = tmp_path_factory.mktemp("faults-ref")
    snakemake("--cores", "2", *map(train_log, ["standard-s1", "standard-s2", "uniform-s1", "frozen-s1"]),
              "--configfile", FAULTS, cwd=ref)
    scenarios = {
        "sigkill": (killed_then_rerun, "standard-s1", "sigkill"),
        "sigterm": (killed_then_rerun, "standard-s2", "sigterm"),
        "retry_requeue": (retried_and_requeued, "uniform-s1", "frozen-s1"),
        "failing": (failing_for_good, "standard-s1"),
    }
    t0 = time.monotonic()
    workdirs = {name: tmp_path_factory.mktemp(f"fault-{name}") / "work" for name in scenarios}

    def play(name):
        fn, *args = scenarios[name]
        workdir = workdirs[name]
        for sub in ("results/data", "results/tokenized"):  # in this order: copies are dated now,
            shutil.copytree(ref / sub, workdir / sub, copy_function=shutil.copy)  # newer than the code
        try:
            return {"workdir": workdir, **fn(cluster, workdir, *args)}
        except Exception as e:  # reported by that scenario's test
            return e

    stop = threading.Event()
    watcher = threading.Thread(target=first_in_queue, args=(cluster, set(workdirs.values()), stop), daemon=True)
    watcher.start()
    try:
        with ThreadPoolExecutor(len(scenarios)) as pool:
            results = dict(zip(scenarios, pool.map(play, scenarios)))
    finally:
        stop.set()
        watcher.join()
    print(f"\nfault scenarios: {time.monotonic() - t0:.0f} s")
    return {"ref": ref, **results}


def first_in_queue(cluster, workdirs, stop):
    """Moves the fault scenarios' pending jobs ahead of the tiny run's (scontrol top). A run
    whose only job waits in the queue lets the plugin's status checks back off (10 s more
    after each check that finds nothing finished): queued behind the tiny run's jobs,
    a fault run would then notice its job's end minutes late."""
    while not stop.wait(0.5):
        out = cluster.run("squeue", "-h", "-t", "pending", "-o", "%i|%Z", check=False).stdout
        ids = [i for i, wd in (line.split("|", 1) for line in out.splitlines()) if Path(wd) in workdirs]
        if ids:
            cluster.run("scontrol", "top", ",".join(ids), check=False)


@pytest.fixture(scope="module")
def campaign(cluster, tmp_path_factory):
    """The tiny run and the fault scenarios, at the same time: the first keeps the CPUs busy,
    the second mostly waits (for the plugin's status checks, which back off by 10 s each
    time nothing has finished). Name -> result, or the exception it raised."""
    t0 = time.monotonic()
    with ThreadPoolExecutor(2) as pool:
        futures = {"tiny": pool.submit(play_tiny, cluster, tmp_path_factory),
                   "faults": pool.submit(play_faults, cluster, tmp_path_factory)}
        results = {name: f.exception() or f.result() for name, f in futures.items()}
    print(f"\nall SLURM runs: {time.monotonic() - t0:.0f} s")
    return results


def outcome(result):
    if isinstance(result, BaseException):
        raise result
    return result


@pytest.fixture(scope="module")
def tiny(campaign):
    return outcome(campaign["tiny"])


@pytest.fixture(scope="module")
def faults(campaign):
    return outcome(campaign["faults"])


@pytest.fixture(scope="module")
def fault_ref(faults):
    return faults["ref"]


def scenario(faults, name):
    return outcome(faults[name])


# -- no cluster needed -----------------------------------------------------------------------------

def gpu_rules() -> set[str]:
    """Rules whose params carry the config's device (directly, in a run's params, or in an
    analysis's): the jobs that compute on a GPU under device: cuda."""
    carriers = ('config["device"]', "run_params", "analysis_rule_params")
    texts = [smk.read_text() for smk in (REPO / "rules").glob("*.smk")]
    rules = {rule for text in texts
             for rule, body in re.findall(r"^rule (\w+):\n((?:    .*\n|\n)*)", text, re.M)
             if any(c in body.split("    log:")[0] for c in carriers)}
    # `use rule X as Y with:` keeps X's params and resources
    return rules | {new for text in texts for old, new in re.findall(r"^use rule (\w+) as (\w+)", text, re.M)
                    if old in rules}


@pytest.mark.workflow
def test_profile_asks_for_a_gpu_for_every_job_that_computes_on_one(tmp_path):
    """The paper config with device: cuda through the SLURM profile: every job whose script
    resolves the device (training, probing, the proxy, the analyses of run A, the controlled
    experiments) carries the standard `gpu` resource (the plugin's sbatch --gpus), every other
    job none. The proxy and the analyses asked for none: on SLURM they landed on nodes without
    a GPU and failed."""
    proc = snakemake("-n", "--workflow-profile", PROFILE, "--configfile", REPO / "config" / "paper.yaml",
                     "--config", "device=cuda", cwd=tmp_path)
    gpu, runtime = {}, {}
    for rule, resources in re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", proc.stdout,
                                      re.M):
        gpu.setdefault(rule, set()).add(re.search(r"\bgpu=(\d+)", resources).group(1))
        runtime.setdefault(rule, set()).add(re.search(r"\bruntime=(\d+)", resources).group(1))
    expected = gpu_rules()
    assert {"train", "probe", "probe_train", "proxy", "proxy_probe_train", "norms", "effective_attention", "head_roles",
            "copying", "multihead", "keyword"} <= expected
    expected -= {"preflight"}  # run by name (-f preflight), never planned by `all`
    assert expected <= set(gpu)  # the paper config plans every one of them
    assert {r: v for r, v in gpu.items() if r in expected} == {r: {"1"} for r in expected}
    assert all(v == {"0"} for r, v in gpu.items() if r not in expected), gpu
    assert runtime["train"] == {"720"} and runtime["probe"] == runtime["probe_train"] == {"240"}
    assert runtime["tokenize"] == {"60"}


def profile() -> dict:
    return yaml.safe_load((PROFILE / "config.yaml").read_text())


def rules_with_gpu_resource() -> set[str]:
    """Rules that declare a `gpu` resource in rules/*.smk (and the rules `use rule` derives
    from them, which keep it): every rule that can ask for a GPU, whatever the config."""
    texts = [smk.read_text() for smk in (REPO / "rules").glob("*.smk")]
    rules = {rule for text in texts
             for rule, body in re.findall(r"^rule (\w+):\n((?:    .*\n|\n)*)", text, re.M)
             if re.search(r"^    resources:\n(?:        .*\n)*?        gpu=", body, re.M)}
    return rules | {new for text in texts for old, new in re.findall(r"^use rule (\w+) as (\w+)", text, re.M)
                    if old in rules}


def gpu_partition() -> str:
    """The GPU partition: the profile's `&gpu_job` entry, as train has it."""
    return profile()["set-resources"]["train"]["slurm_partition"]


def planned_resources(output: str) -> list[tuple[str, dict[str, str]]]:
    """(rule, resources) of every job a dry run lists."""
    jobs = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", output, re.M)
    return [(rule, dict(kv.split("=", 1) for kv in resources.split(", "))) for rule, resources in jobs]


def test_every_rule_with_a_gpu_resource_is_routed_to_the_gpu_partition():
    """A new rule that asks for a GPU must be listed in the profile, else SLURM sends it to the
    default partition (the proxy, the analyses and the experiments went there). All take the
    partition and memory of one entry, &gpu_job."""
    gpu = rules_with_gpu_resource()
    assert {"train", "probe", "probe_train", "proxy", "proxy_probe_train", "norms", "effective_attention",
            "head_roles", "copying", "multihead", "keyword", "preflight"} <= gpu
    assert gpu_rules() <= gpu  # every rule whose job resolves the config's device
    routed = {rule for rule, res in profile()["set-resources"].items() if "slurm_partition" in res}
    assert gpu - routed == set(), f"rules with a gpu resource missing from {PROFILE}/config.yaml: {gpu - routed}"
    cpu = {r for text in map(Path.read_text, (REPO / "rules").glob("*.smk"))
           for r in re.findall(r"^(?:rule|use rule \w+ as) (\w+)", text, re.M)} - gpu
    assert routed & cpu == set(), f"the profile sends rules without a GPU to the GPU partition: {routed & cpu}"
    entries = profile()["set-resources"]
    shared = {k: v for k, v in entries["train"].items() if k != "runtime"}  # &gpu_job
    assert shared["mem_mb"] >= 8000 and "slurm_partition" not in profile()["default-resources"]
    assert all({k: v for k, v in entries[r].items() if k != "runtime"} == shared for r in routed)


def slurm_docs_commands() -> list[str]:
    """The cluster commands of docs/slurm.md (those naming the SLURM profile)."""
    from test_docs import snakemake_commands

    commands = snakemake_commands((REPO / "docs" / "slurm.md").read_text())
    return [c for c in commands if "--workflow-profile profiles/slurm" in c]


SLURM_DOCS = slurm_docs_commands()


def test_the_slurm_docs_name_a_run_a_table2_run_and_the_preflight():
    assert any("config/paper.yaml" in c and "allow_unverified_downloads=True" in c and "device=cuda" in c
               and "table2.parquet" not in c and "preflight" not in c for c in SLURM_DOCS), SLURM_DOCS
    assert any("results/tables/table2.parquet" in c and "tables={train_split: false}" in c for c in SLURM_DOCS)
    assert any(c.endswith("-f preflight") for c in SLURM_DOCS)


@pytest.mark.workflow
def test_the_login_node_command_fetches_every_download_and_glove(tmp_path):
    """Compute nodes without internet: the documented login-node step plans every download of
    paper.yaml and GloVe (the classification vocabularies need it), nothing else, none refused
    (5 of 21 have no published checksum: allow_unverified_downloads)."""
    from test_docs import snakemake_commands

    (command,) = {c for c in snakemake_commands((REPO / "docs" / "slurm.md").read_text()) if "--until" in c}
    proc = snakemake("-n", *shlex.split(command)[1:], cwd=tmp_path)
    stats = proc.stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    jobs = dict(re.findall(r"^(\w+)\s+(\d+)$", stats, re.M))
    assert jobs == {"download": "21", "glove_download": "1", "total": "22"}, stats
    assert "will refuse" not in proc.stdout + proc.stderr
    run = next(c for c in SLURM_DOCS if "table2" not in c and "preflight" not in c)  # same options as the run
    assert command.split("--config", 1)[1].split("--until")[0].split() == run.split("--config", 1)[1].split()


@pytest.mark.workflow
@pytest.mark.parametrize("command", SLURM_DOCS)
def test_documented_cluster_commands_send_exactly_the_gpu_jobs_to_the_gpu_partition(command, tmp_path):
    """Each cluster command of docs/slurm.md, dry-run with the SLURM profile: every job that asks
    for a GPU (gpu=1) names the GPU partition and gets its memory, every other job names no
    partition (the cluster's default, or default-resources' where a site sets one)."""
    words = [w for w in shlex.split(command)[1:] if w != "--report"]
    proc = snakemake("-n", *words, cwd=tmp_path)
    jobs = planned_resources(proc.stdout)
    assert jobs and any(res["gpu"] == "1" for _, res in jobs), proc.stdout[-2000:]
    partition = gpu_partition()
    for rule, res in jobs:
        if res["gpu"] == "1":
            assert res.get("slurm_partition") == partition and int(res["mem_mb"]) >= 8000, (rule, res)
        else:
            assert "slurm_partition" not in res, (rule, res)


@pytest.mark.workflow
def test_a_stack_job_asks_slurm_for_a_training_jobs_resources_for_k_times_its_time(tmp_path):
    """A stack's rule is named for its runs, which the profile's set-resources cannot name: it
    takes `train`'s partition, memory and GPU, with K times one run's time limit."""
    proc = snakemake("-n", "--workflow-profile", PROFILE, "results/runs/tiny_cls/standard-s1/train_log.parquet",
                     "results/runs/tiny_cls/frozen-s1/train_log.parquet", "--configfile", TINY, "--config",
                     "only=[tiny_cls]", "override={train: {stack: 3}}", "device=cuda", cwd=tmp_path)
    jobs = dict(planned_resources(proc.stdout))
    train, stack = jobs["train"], jobs["train_stack_tiny_cls_standard_s1_2_3"]
    assert stack["slurm_partition"] == train["slurm_partition"] == "gpu"
    assert stack["gpu"] == train["gpu"] == "1" and stack["mem_mb"] == train["mem_mb"]
    assert int(stack["runtime"]) == 3 * int(train["runtime"])


@pytest.mark.workflow
def test_device_auto_is_decided_where_the_jobs_run(tmp_path):
    """`auto` is the GPU where the machine running the jobs has one. Locally that is the machine
    running Snakemake (here: none, so no job claims one). A cluster's jobs run elsewhere, where a
    login node cannot look: the run stops before submitting anything, asking for cuda or cpu
    (it trained every job on the CPU, having asked SLURM for no GPU)."""
    auto = tmp_path / "auto.yaml"
    auto.write_text(TINY.read_text().replace("device: cpu", "device: auto"))
    local = snakemake("-n", "--configfile", auto, cwd=tmp_path / "local").stdout
    claims = re.findall(r"^    resources: .*\bgpu=(\d+)", local, re.M)
    assert claims and set(claims) == {str(int(torch.cuda.is_available()))}
    proc = snakemake("--executor", "slurm", "--jobs", "1", "--configfile", auto, cwd=tmp_path / "cluster",
                     check=False)
    assert proc.returncode != 0
    assert "device: auto cannot tell on this machine whether the cluster's jobs get a GPU" in proc.stdout + proc.stderr
    assert not (tmp_path / "cluster" / "results").exists()  # nothing ran
    assert not list((tmp_path / "cluster" / ".snakemake").glob("slurm_logs/**/*.log"))


# -- the tiny config end to end --------------------------------------------------------------------

@pytest.mark.slurm
@pytest.mark.workflow
def test_slurm_run_equals_local_run(tiny):
    local, remote, _, planned = tiny
    for table in ("table2", "agreement", "performance", "gold_agreement"):
        a = pd.read_parquet(local / f"results/tables/{table}.parquet")
        b = pd.read_parquet(remote / f"results/tables/{table}.parquet")
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    runs = sorted(p.relative_to(local) for p in local.glob("results/runs/*/*") if p.is_dir())
    # tiny_cls: 3 standard, 3 uniform (Table 2 replicates), 1 frozen; tiny_mt: 2 additive
    assert len(runs) == planned["train"] == 13
    for run in runs:
        assert_same_checkpoints(local / run, remote / run)
    for ds in ("tiny_mt", "tiny_cls"):
        for fig in ("contextualized", "heatmap"):
            assert (remote / f"results/figures/{ds}/{fig}.png").stat().st_size > 10_000


def profile_limits(rule) -> tuple[str, str, str]:
    """(time limit, memory, partition) that SLURM records for a job of ``rule`` under the profile
    (the test cluster's default partition: debug)."""
    default, entry = profile()["default-resources"], profile()["set-resources"].get(rule, {})
    return (str(entry.get("runtime", default["runtime"])), f"{entry.get('mem_mb', default['mem_mb'])}M",
            entry.get("slurm_partition", "debug"))


@pytest.mark.slurm
@pytest.mark.workflow
def test_every_job_ran_on_slurm_with_the_profiles_resources(tiny, cluster, tmp_path):
    _, _, out, planned = tiny
    jobs = submissions(out)
    assert Counter(rule for rule, _ in jobs.values()) == planned, jobs
    records = jobcomp(cluster)
    assert profile_limits("train") == ("720", "8000M", "gpu") and profile_limits("tokenize") == ("60", "4000M", "debug")
    for jobid, (rule, wildcards) in jobs.items():
        rec = records[jobid]
        assert rec["JobState"] == "COMPLETED", (rule, wildcards, rec)
        limit, mem, partition = profile_limits(rule)
        assert rec["TimeLimit"] == limit and f"mem={mem}" in rec["Tres"], (rule, rec)
        # device: cpu here, yet the GPU rules go to the GPU partition: the profile cannot see the device
        assert rec["Partition"] == partition, (rule, rec)
    # device: cpu: no job asks for a GPU (the run's console is one line a job: its plan says it)
    plan = planned_resources(snakemake("-n", "--workflow-profile", PROFILE, "--configfile", TINY, "--config",
                                       "device=cpu", cwd=tmp_path).stdout)
    assert len(plan) >= len(jobs) and all(res["gpu"] == "0" for _, res in plan), plan


# -- faults ----------------------------------------------------------------------------------------

@pytest.mark.slurm
@pytest.mark.workflow
@pytest.mark.parametrize("how", ["sigkill", "sigterm"])
def test_killed_training_resumes_on_rerun_to_identical_checkpoints(how, faults, fault_ref):
    """SIGKILL of the training process (as the OOM killer would), or scancel of its job (SIGTERM,
    as a preemption), mid-run: the run stops with no outputs but the resume state; rerunning
    Snakemake resumes from that state and ends with the uninterrupted run's checkpoints."""
    r = scenario(faults, how)
    run = "standard-s1" if how == "sigkill" else "standard-s2"
    assert r["rc"] != 0 and "Error in rule train" in r["out"], r["out"][-3000:]
    assert r["state"] == ("FAILED" if how == "sigkill" else "CANCELLED")
    assert r["outputs_after_kill"] == []
    assert 0 < r["resume_step"] < STEPS
    if how == "sigkill":
        assert r["resume_step"] % EVERY == 0  # the last checkpoint's state: nothing is saved at a SIGKILL
    assert r["rerun_rc"] == 0, r["rerun_out"][-4000:]
    assert r["starts"] == [r["resume_step"]]  # the rerun started where the killed job stopped
    work = run_dir(r["workdir"], run) / "work"  # kept: hard links to the checkpoints and the finished record
    assert (work / "done.json").exists() and not (work / "resume.pt").exists()
    assert_same_checkpoints(run_dir(fault_ref, run), run_dir(r["workdir"], run))
    pd.testing.assert_frame_equal(pd.read_parquet(fault_ref / train_log(run)).drop(columns="elapsed_s"),
                                  pd.read_parquet(r["workdir"] / train_log(run)).drop(columns="elapsed_s"))


@pytest.mark.slurm
@pytest.mark.workflow
def test_failed_job_is_retried_and_requeued_job_resumes(faults, fault_ref):
    """The profile as shipped: a training killed once is retried by Snakemake (retries: 1); a
    training whose job SLURM requeues (slurm-requeue) starts again. Both resume, the run succeeds
    without a rerun, with the uninterrupted run's checkpoints."""
    r = scenario(faults, "retry_requeue")
    assert r["rc"] == 0, r["out"][-5000:]
    trains = sorted(wc for rule, wc in submissions(r["out"]).values() if rule == "train")
    assert trains == ["tiny_mt_frozen-s1", "tiny_mt_uniform-s1", "tiny_mt_uniform-s1"]  # one resubmission
    assert "Trying to restart job" in r["out"]
    assert "Restarts=1" in r["requeued_job"] and "JobState=COMPLETED" in r["requeued_job"]
    for run in ("uniform-s1", "frozen-s1"):
        (start,) = r["starts"][run]
        assert 0 < start < STEPS, (run, start)
        assert_same_checkpoints(run_dir(fault_ref, run), run_dir(r["workdir"], run))
    assert r["starts"]["uniform-s1"][0] % EVERY == 0


@pytest.mark.slurm
@pytest.mark.workflow
def test_job_failing_for_good_stops_the_run_with_its_log_and_no_outputs(faults):
    """device: cuda on a node whose GPU CUDA cannot use: the job gets its GPU from SLURM, the
    training raises, the retry fails too, and the run stops with the job's log printed and
    nothing of the run left behind."""
    r = scenario(faults, "failing")
    assert r["rc"] != 0
    assert "Error in rule train" in r["out"]
    assert "device 'cuda' requested in config but CUDA is not available" in r["out"]  # the job's log, shown
    assert len(r["jobs"]) == 2, r["jobs"]  # the first attempt and its retry
    for jobid in r["jobs"]:
        assert r["records"][jobid]["JobState"] == "FAILED", r["records"][jobid]
    assert "TresPerJob=gres:gpu:1" in r["last_job"], r["last_job"]  # SLURM was asked for the GPU
    assert re.search(r"\bPartition=gpu\b", r["last_job"]), r["last_job"]  # and sent it where the GPUs are
    assert r["outputs"] == [] and r["files"] == [], r["files"]
