"""No finished work is lost, whichever way a training run is stopped (docs/faults.md).

Two levels:

- a training process killed (SIGKILL, as the OOM killer or a failed node would) at each
  chosen point of its life: after a checkpoint is written but before the resume state that
  lists it, after a resume state, after the finished training is recorded, after the log is
  written, with the checkpoint folder assembled but not yet in place, and after it is in
  place (the job's outputs are complete, but it never exits 0). The kill windows are reached
  with the test-only hook ``ATTNLEARN_FAULT=point[@step]`` (``attnlearn.runtime.faults.fault``). The
  rerun, after the outputs are deleted as Snakemake deletes those of an incomplete job, ends
  with every checkpoint byte-identical to an uninterrupted run's;
- Snakemake itself stopped: Ctrl-C to Snakemake only (it waits for the job, then marks its
  outputs incomplete), Ctrl-C to the terminal (Snakemake and the job), ``kill -9`` of
  Snakemake alone (its training goes on; after ``--unlock`` a second trainer of the same run
  is refused), a kill after the job's last write, and a probe that finds a checkpoint gone.

faults/kill_resume.py kills a training job at random instants, 20 times.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pandas as pd
import pytest

from test_slurm import wait_for
from test_workflow import SNAKEMAKE, snakemake

TESTS = Path(__file__).parent
FAULTS = TESTS / "slurm" / "faults.yaml"  # tiny_mt, 200 steps, a checkpoint every 20
RUN = "results/runs/tiny_mt/standard-s1"
TRAIN_LOG = f"{RUN}/train_log.parquet"
TIMEOUT = 600


def sha256s(folder: Path) -> dict[str, str]:
    """sha256 of every file of a checkpoint folder, by name (Snakemake's hidden timestamp file aside)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if not p.name.startswith(".")}


# -- the training process killed at a chosen point -------------------------------------------------

SCRIPT = textwrap.dedent("""
    import sys, pathlib
    sys.path.insert(0, {tests!r})
    import conftest
    from attnlearn.data.synthetic import synthetic_mt
    from attnlearn.data.tokenize import tokenize_translation, load_sentencepiece
    from attnlearn.models.tasks import make_task
    from attnlearn.training.train import train_run
    data = synthetic_mt(n_sentences=200, seed=0, **conftest.MT_OPTIONS)
    model, tables = tokenize_translation({{"train": data}}, 120, 0)
    task = make_task("translation", load_sentencepiece(model).get_piece_size())
    params = conftest.run_params("translation", steps=16)  # checkpoints at 0, 2, 4, 5, 8, 12, 16
    root = pathlib.Path(sys.argv[1])
    train_run(task, tables["train"], params, root / "ckpt", root / "log.parquet", root / "work",
              resume_every_s=3600, progress=False)
""")

# the same for a stack of three classification runs (train.stack), each member's outputs in m{{k}}/
STACK_SCRIPT = textwrap.dedent("""
    import sys, pathlib
    sys.path.insert(0, {tests!r})
    import conftest
    from attnlearn.data.synthetic import synthetic_cls
    from attnlearn.data.tokenize import tokenize_classification
    from attnlearn.models.tasks import make_task
    from attnlearn.training.train import train_stack
    vocab, tables = tokenize_classification({{"train": synthetic_cls(n_sentences=200, seed=0, **conftest.CLS_OPTIONS)}}, 2)
    task = make_task("classification", len(vocab))
    params = [{{**conftest.run_params("classification", seed=s, steps=16), "name": f"s{{s}}"}} for s in (1, 2, 3)]
    root = pathlib.Path(sys.argv[1])
    train_stack(task, tables["train"], params, [root / f"m{{k}}" / "ckpt" for k in range(3)],
                [root / f"m{{k}}" / "log.parquet" for k in range(3)], root / "work", resume_every_s=3600, progress=False)
""")

# the same for a stack of three translation runs (2 layers, dropout 0.2): each member's dropout
# generator is in the resume state
MT_STACK_SCRIPT = textwrap.dedent("""
    import sys, pathlib
    sys.path.insert(0, {tests!r})
    import conftest
    from attnlearn.data.synthetic import synthetic_mt
    from attnlearn.data.tokenize import tokenize_translation, load_sentencepiece
    from attnlearn.models.tasks import make_task
    from attnlearn.training.train import train_stack
    model, tables = tokenize_translation({{"train": synthetic_mt(n_sentences=200, seed=0, **conftest.MT_OPTIONS)}}, 120, 0)
    task = make_task("translation", load_sentencepiece(model).get_piece_size())
    params = [{{**conftest.run_params("translation", seed=s, steps=16), "name": f"s{{s}}"}} for s in (1, 2, 3)]
    root = pathlib.Path(sys.argv[1])
    train_stack(task, tables["train"], params, [root / f"m{{k}}" / "ckpt" for k in range(3)],
                [root / f"m{{k}}" / "log.parquet" for k in range(3)], root / "work", resume_every_s=3600, progress=False)
""")

# point -> what a kill there leaves
POINTS = {
    "checkpoint@8": "checkpoint 8 written, the resume state still at step 5",
    "resume@8": "the resume state at step 8",
    "checkpoint@0": "checkpoint 0 written, no resume state yet",
    "done": "training finished and recorded (done.json), resume.pt not yet removed",
    "log": "the training log written, no checkpoint folder",
    "staged": "the checkpoint folder assembled beside its place",
    "published": "every output in place, the job not yet exited (a kill between move and clean-up)",
}


def train_process(root: Path, fault: str | None = None, template: str = SCRIPT) -> subprocess.CompletedProcess:
    script = root.parent / f"train_job_{abs(hash(template))}.py"
    if not script.exists():
        script.write_text(template.format(tests=str(TESTS)))
    env = {k: v for k, v in os.environ.items() if k != "ATTNLEARN_FAULT"}
    if fault:
        env["ATTNLEARN_FAULT"] = fault
    return subprocess.run([sys.executable, str(script), str(root)], env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def as_snakemake_would(root: Path):
    """Snakemake deletes an incomplete job's outputs before running it again (a stack's: every
    member's)."""
    for out in [root, *root.glob("m[0-9]")]:
        shutil.rmtree(out / "ckpt", ignore_errors=True)
        (out / "log.parquet").unlink(missing_ok=True)


@pytest.fixture(scope="module")
def killed(tmp_path_factory):
    """An uninterrupted run, and for every point a run killed there then rerun (2 at a time)."""
    base = tmp_path_factory.mktemp("kills")

    def play(point):
        root = base / (point or "ref").replace("@", "_")
        if point is None:
            proc = train_process(root)
            return {"rc": proc.returncode, "err": proc.stderr}
        first = train_process(root, point)
        left = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
        complete_before = (root / "ckpt" / "manifest.json").exists()
        as_snakemake_would(root)
        again = train_process(root)
        return {"rc": first.returncode, "left": left, "complete_before": complete_before,
                "rerun_rc": again.returncode, "rerun_err": again.stderr}

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip([None, *POINTS], pool.map(play, [None, *POINTS])))
    assert results[None]["rc"] == 0, results[None]["err"][-3000:]
    return base, results


@pytest.mark.parametrize("point", list(POINTS))
def test_job_killed_at_any_point_reruns_to_identical_checkpoints(point, killed):
    base, results = killed
    r = results[point]
    assert r["rc"] == -signal.SIGKILL, (point, r)
    assert r["rerun_rc"] == 0, r["rerun_err"][-3000:]
    root, ref = base / point.replace("@", "_"), base / "ref"
    assert sha256s(root / "ckpt") == sha256s(ref / "ckpt")
    assert sorted(sha256s(root / "ckpt")) == ["manifest.json"] + [f"step{s:08d}.pt" for s in (0, 2, 4, 5, 8, 12, 16)]
    pd.testing.assert_frame_equal(pd.read_parquet(root / "log.parquet").drop(columns="elapsed_s"),
                                  pd.read_parquet(ref / "log.parquet").drop(columns="elapsed_s"))
    if point in ("done", "log", "staged", "published"):  # finished: the rerun published, it did not train
        assert "training finished in an earlier attempt" in r["rerun_err"]
    if point == "published":
        assert r["complete_before"]  # the outputs were complete: Snakemake would still have deleted them
    if point == "staged":
        assert "work/done.json" in r["left"] and ".ckpt.staging/manifest.json" in r["left"]
    assert not [p for p in root.rglob(".*")], point  # no temporary file or staging folder left


STACK_POINTS = ["checkpoint@8", "resume@8", "done", "staged", "published"]  # staged, published: member 0's


@pytest.mark.process
@pytest.mark.parametrize("script", [STACK_SCRIPT, MT_STACK_SCRIPT], ids=["classification", "translation"])
def test_stack_killed_at_any_point_reruns_to_identical_checkpoints(script, tmp_path):
    """A stack's job killed (SIGKILL) at each point, its outputs deleted as Snakemake would,
    then rerun: every member's checkpoints byte-identical to an uninterrupted stack's."""
    def play(point):
        root = tmp_path / (point or "ref").replace("@", "_")
        first = train_process(root, point, script)
        if point is None:
            return first.returncode, first.stderr, None
        as_snakemake_would(root)
        again = train_process(root, None, script)
        return first.returncode, again.stderr, again.returncode

    with ThreadPoolExecutor(2) as pool:
        results = dict(zip([None, *STACK_POINTS], pool.map(play, [None, *STACK_POINTS])))
    assert results[None][0] == 0, results[None][1][-3000:]
    for point in STACK_POINTS:
        rc, err, rerun_rc = results[point]
        assert rc == -signal.SIGKILL and rerun_rc == 0, (point, err[-3000:])
        root = tmp_path / point.replace("@", "_")
        for k in range(3):
            assert sha256s(root / f"m{k}" / "ckpt") == sha256s(tmp_path / "ref" / f"m{k}" / "ckpt"), (point, k)
            pd.testing.assert_frame_equal(pd.read_parquet(root / f"m{k}" / "log.parquet").drop(columns="elapsed_s"),
                                          pd.read_parquet(tmp_path / "ref" / f"m{k}" / "log.parquet").drop(
                                              columns="elapsed_s"))
        if point in ("done", "staged", "published"):
            assert "training finished in an earlier attempt" in err


# -- Snakemake stopped -----------------------------------------------------------------------------

def _sigint_as_in_a_terminal():
    """A shell's background job (nohup, `cmd &`, a CI runner) starts with SIGINT ignored and its
    children inherit that, so Python installs no KeyboardInterrupt handler and Snakemake never
    sees Ctrl-C: give Snakemake the terminal's default, as a user's Ctrl-C finds it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args, cwd: Path, log: Path, env=None, **kw) -> subprocess.Popen:
    kw.setdefault("preexec_fn", _sigint_as_in_a_terminal)
    with open(log, "w") as out:
        return subprocess.Popen([*SNAKEMAKE, "-d", str(cwd), *map(str, args)], stdout=out, stderr=subprocess.STDOUT,
                                text=True, env=env, **kw)


def trainer_pid(workdir: Path) -> int:
    """The training process of the run, from its lock file ('pid N on host H, since ...')."""
    text = (workdir / RUN / "work" / "lock").read_text()
    return int(text.split()[1])


def job_log(workdir: Path) -> str:
    return (workdir / "results/logs/train/tiny_mt/standard-s1.log").read_text(errors="replace")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """The fault config's data, and an uninterrupted training of the run (the reference)."""
    ref = tmp_path_factory.mktemp("faults-ref")
    snakemake("--cores", "2", TRAIN_LOG, "--configfile", FAULTS, cwd=ref)
    return ref


@pytest.fixture
def workdir(prepared, tmp_path):
    work = tmp_path / "work"
    for sub in ("results/data", "results/tokenized"):  # copies are dated now, newer than the code
        shutil.copytree(prepared / sub, work / sub, copy_function=shutil.copy)
    return work


def assert_same_as_reference(workdir, prepared):
    assert sha256s(workdir / RUN / "checkpoints") == sha256s(prepared / RUN / "checkpoints")
    pd.testing.assert_frame_equal(pd.read_parquet(workdir / TRAIN_LOG).drop(columns="elapsed_s"),
                                  pd.read_parquet(prepared / TRAIN_LOG).drop(columns="elapsed_s"))


def sigint_pending(pid: int) -> bool:
    """Whether SIGINT waits to be delivered to the (stopped) process ``pid`` (Linux /proc)."""
    status = Path(f"/proc/{pid}/status").read_text()
    pending = [int(line.split()[1], 16) for line in status.splitlines() if line.startswith(("SigPnd:", "ShdPnd:"))]
    return any(mask & (1 << (signal.SIGINT - 1)) for mask in pending)


@pytest.mark.workflow
def test_sigint_to_snakemake_only_stops_the_training_at_its_next_step(workdir, prepared, tmp_path):
    """SIGINT to Snakemake's pid only (`kill -INT`, a scheduler): Snakemake forwards it to its
    jobs (runtime/interrupt.py), so the training saves its state at the end of its step and
    exits, as with a terminal's Ctrl-C, instead of running to its end while Snakemake waits.
    Snakemake exits 1 and marks the outputs incomplete; the rerun's job log says where it
    resumed, and the checkpoints equal an uninterrupted run's."""
    proc = start(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir, log=tmp_path / "first.out")
    wait_for((workdir / RUN / "work" / "resume.pt").exists, "a resume state", proc, tmp_path / "first.out")
    trainer = trainer_pid(workdir)
    os.kill(trainer, signal.SIGSTOP)  # held, so that it is still training when the forwarded signal comes
    try:
        proc.send_signal(signal.SIGINT)
        wait_for(lambda: sigint_pending(trainer), "Snakemake to forward the SIGINT", proc, tmp_path / "first.out",
                 timeout=120)
    finally:
        os.kill(trainer, signal.SIGCONT)
    assert proc.wait(timeout=TIMEOUT) != 0
    out = (tmp_path / "first.out").read_text()
    assert "Terminating processes on user request" in out, out[-3000:]
    stopped = re.search(r"training stopped at step (\d+) \(SIGINT\)", job_log(workdir))
    assert stopped, job_log(workdir)[-3000:]
    assert not (workdir / RUN / "work" / "done.json").exists()  # stopped, not run to its end
    snakemake(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir)
    assert f"resumed from step {stopped.group(1)} of 200" in job_log(workdir)
    assert_same_as_reference(workdir, prepared)


MANY_JOBS = """
from attnlearn.runtime.interrupt import defer_sigterm
defer_sigterm()
rule all:
    input: expand("out/{i}.txt", i=range(400))
rule one:
    output: "out/{i}.txt"
    shell: "sleep 0.05; touch {output}"
"""


@pytest.mark.workflow
def test_sigterm_at_any_instant_stops_snakemake_and_releases_its_lock(tmp_path):
    """SIGTERM to Snakemake's process group (a time limit, scancel, parallel_parts' stop) at a
    random instant of a run of many short jobs, where the scheduler holds its lock much of the
    time (from about the 100th job on, as measured): Snakemake ends and leaves no lock. Its
    stock handler took that lock in the signal handler and hung for good in 8 of 15 such tries
    (a CI run timed out on it); runtime/interrupt.defer_sigterm moves the handler's work to a
    thread."""
    (tmp_path / "Snakefile").write_text(MANY_JOBS)
    rng = random.Random(0)
    for trial in range(6):
        shutil.rmtree(tmp_path / "out", ignore_errors=True)
        with open(tmp_path / "run.log", "w") as log:
            proc = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "2", "-d", str(tmp_path)],
                                    cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for(lambda: len(list((tmp_path / "out").glob("*.txt"))) >= 100, "jobs to finish", proc,
                     tmp_path / "run.log")
            time.sleep(rng.uniform(0, 1))
            os.killpg(proc.pid, signal.SIGTERM)
            assert proc.wait(timeout=60) != 0, f"try {trial}: ran to its end before the stop"
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                pytest.fail(f"try {trial}: Snakemake hung after SIGTERM")
        assert not list((tmp_path / ".snakemake/locks").glob("*")), f"try {trial}: a lock was left"


@pytest.mark.workflow
def test_ctrl_c_to_the_terminal_resumes(workdir, prepared, tmp_path):
    """SIGINT to Snakemake and its job (a terminal's Ctrl-C): the job saves its state at the end
    of its step and exits 1; the rerun resumes from there. The console reads as a stop (issue
    64: it read as a crash, with "Error in rule train", a 14-line traceback and "WorkflowError"):
    one line for the training, its step and the command that resumes it; the rerun's console
    says from which step the training resumed."""
    proc = start(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir, log=tmp_path / "first.out",
                 start_new_session=True)
    wait_for((workdir / RUN / "work" / "resume.pt").exists, "a resume state", proc, tmp_path / "first.out")
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=TIMEOUT) != 0
    assert "training stopped at step" in job_log(workdir) and "(SIGINT)" in job_log(workdir)
    assert not (workdir / RUN / "checkpoints").exists()
    step = re.search(r"training stopped at step (\d+)", job_log(workdir)).group(1)
    out = (tmp_path / "first.out").read_text()
    said = [line for line in out.splitlines() if "stopped" in line]
    assert said[0].startswith(f"stopped train (tiny_mt, standard-s1) at step {int(step):,} of 200 (SIGINT); `snakemake ")
    assert said[0].endswith(f"--configfile {FAULTS}` resumes it from there"), said
    assert said[1:] == ["Stopped: 1 job (above); " + said[0].split("; ", 1)[1].replace(
        "resumes it from there", "goes on from where it stopped.")], said
    for crash in ("Traceback", "Error in rule", "WorkflowError", "^^^", "job failed", "Exiting because"):
        assert crash not in out, (crash, out[-3000:])
    again = snakemake(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir)
    assert f"resumed from step {int(step):,} of 200" in again.stdout + again.stderr, (again.stdout + again.stderr)[-3000:]
    # and why it runs, before it runs (the resumed trainings once had no line there)
    assert f"  train (1 job): resumed from where a stop left it: tiny_mt/standard-s1 at step {int(step):,}" in \
        again.stderr.splitlines(), again.stderr[-3000:]
    assert_same_as_reference(workdir, prepared)


@pytest.mark.workflow
def test_second_trainer_after_unlock_is_refused(workdir, prepared, tmp_path):
    """kill -9 of Snakemake alone: its training goes on. The rerun finds Snakemake's lock;
    after --unlock, the rerun's job is refused while the first trainer holds the run's work
    folder, naming it. Once the first has finished, a rerun publishes its checkpoints."""
    proc = start(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir, log=tmp_path / "first.out")
    wait_for((workdir / RUN / "work" / "resume.pt").exists, "a resume state", proc, tmp_path / "first.out")
    orphan = trainer_pid(workdir)
    os.kill(orphan, signal.SIGSTOP)  # held mid-run, lock and all, while Snakemake is run again
    try:
        proc.kill()
        proc.wait()
        locked = snakemake(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir, check=False)
        assert locked.returncode != 0 and "LockException" in locked.stdout + locked.stderr
        snakemake("--unlock", "--configfile", FAULTS, cwd=workdir)
        env = {**os.environ, "ATTNLEARN_LOCK_WAIT_S": "1"}
        second = subprocess.run([*SNAKEMAKE, "-d", str(workdir), TRAIN_LOG, "--configfile", str(FAULTS)],
                                capture_output=True, text=True, env=env, timeout=TIMEOUT)
        assert second.returncode != 0
        log = job_log(workdir)
        assert "RunLocked" in log and f"pid {orphan} on host" in log and "is in use by another training" in log
    finally:
        os.kill(orphan, signal.SIGCONT)
    wait_for(lambda: not Path(f"/proc/{orphan}").exists() or Path(f"/proc/{orphan}/stat").read_text().split()[2]
             == "Z", "the first trainer to end")
    assert (workdir / RUN / "work" / "done.json").exists()
    snakemake(TRAIN_LOG, "--configfile", FAULTS, cwd=workdir)
    assert_same_as_reference(workdir, prepared)


@pytest.mark.workflow
def test_kill_after_the_last_write_then_probe_names_a_missing_checkpoint(workdir, prepared, tmp_path):
    """The job killed with its outputs complete (before it exits 0). Snakemake removes them
    as those of a failed job; the rerun publishes them again (it used to leave an empty
    checkpoint folder that Snakemake trusted), and the probe runs. A checkpoint deleted
    afterwards is named by the probe."""
    env = {**os.environ, "ATTNLEARN_FAULT": "published"}
    first = subprocess.run([*SNAKEMAKE, "-d", str(workdir), TRAIN_LOG, "--configfile", str(FAULTS)],
                           capture_output=True, text=True, env=env, timeout=TIMEOUT)
    assert first.returncode != 0 and "Error in rule train" in first.stdout + first.stderr
    assert not (workdir / RUN / "checkpoints").exists()
    probe = "results/probes/tiny_mt/standard-s1.parquet"
    snakemake(probe, "--configfile", FAULTS, cwd=workdir)
    assert_same_as_reference(workdir, prepared)
    (workdir / RUN / "checkpoints" / "step00000100.pt").unlink()
    broken = snakemake(probe, "--forcerun", "probe", "--configfile", FAULTS, cwd=workdir, check=False)
    assert broken.returncode != 0
    log = (workdir / "results/logs/probe/tiny_mt/standard-s1.log").read_text()
    assert "IncompleteCheckpoints" in log and "standard-s1/checkpoints/step00000100.pt is missing" in log
