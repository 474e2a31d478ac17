"""Training is reproducible, follows its schedule, and resumes exactly after a kill.
(Kills at chosen points, two trainers, Snakemake stopped: tests/test_faults.py.)"""

import hashlib
import io
import os
import signal
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch

from attnlearn.models.tasks import Rows
from attnlearn.training.adam import Adam
from attnlearn.training.model import build_model
from attnlearn.training.schedule import checkpoint_steps, total_steps
from attnlearn.training.train import batch_indices, train_run, train_step
from attnlearn.training.workdir import IncompleteCheckpoints, RunLocked, list_checkpoints, run_lock
from conftest import run_params


def sha256s(folder) -> dict[str, str]:
    """sha256 of every file of a checkpoint folder (manifest included), by name."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())
            if not p.name.startswith(".")}


def _train(task, table, params, root, **kw):
    train_run(task, table, params, root / "ckpt", root / "log.parquet", root / "work", progress=False, **kw)
    return {step: torch.load(p, weights_only=True) for step, p in list_checkpoints(root / "ckpt")}


def _same(a, b):
    assert a.keys() == b.keys()
    for step in a:
        for k in a[step]:
            assert torch.equal(a[step][k], b[step][k]), (step, k)


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_a_batch_from_rows_read_once_is_the_tables(data, request):
    """Training reads its batches from the table's columns converted once (``Rows``): each batch
    is the DataFrame's, tensor for tensor (same values, dtypes and shapes), whatever the rows."""
    task, tables = request.getfixturevalue(data)
    table = tables["train"]
    rows = Rows(table, task)
    assert len(rows) == len(table)
    rng = np.random.default_rng(0)
    for idx in [np.arange(8), rng.permutation(len(table))[:16], np.array([len(table) - 1, 0]), [3]]:
        want, got = task.batch(table, idx), task.batch(rows, idx)
        assert want.keys() == got.keys()
        for key in want:
            assert want[key].dtype == got[key].dtype and torch.equal(want[key], got[key]), key


@pytest.mark.parametrize("data, variant", [("mt_data", "standard"), ("cls_data", "standard"), ("cls_data", "frozen")])
def test_adam_is_torchs_adam_bit_for_bit(data, variant, request):
    """training/adam.py's Adam (torch's arithmetic, foreach, without torch.compile's wrapping) makes
    torch.optim.Adam's weights exactly, with its default (single-tensor) loop on a CPU; and a state
    saved and loaded (a resume) carries on to the same weights."""
    task, tables = request.getfixturevalue(data)
    params = {**run_params(task.name, variant), "train": {"lr": 3e-2}}
    weights = []
    for make in (lambda ps: torch.optim.Adam(ps, lr=3e-2), lambda ps: Adam(ps, 3e-2)):
        model = build_model(task, params)
        optim = make([p for p in model.parameters() if p.requires_grad])
        torch.manual_seed(0)  # the dropout's draws
        for step in range(6):
            if step == 3 and isinstance(optim, Adam):  # a resume: the state through torch.save
                buffer = io.BytesIO()
                torch.save(optim.state_dict(), buffer)
                optim = Adam([p for p in model.parameters() if p.requires_grad], 3e-2)
                optim.load_state_dict(torch.load(io.BytesIO(buffer.getvalue()), weights_only=True))
            train_step(task, model, optim, task.batch(tables["train"], batch_indices(step, len(tables["train"]), 8, 1)))
        weights.append(model.state_dict())
    torch_adam, ours = weights
    assert all(torch.equal(torch_adam[k], ours[k]) for k in torch_adam)


def test_checkpoint_schedule():
    assert checkpoint_steps({"steps": [0, 50, 100, 500], "every": 200, "last": True}, 450) == [
        0, 50, 100, 200, 400, 450]
    assert checkpoint_steps({"steps": [0], "every": None, "last": False}, 10) == [0]


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_same_seed_gives_same_checkpoints(data, request, tmp_path):
    task, tables = request.getfixturevalue(data)
    params = run_params(task.name)
    first = _train(task, tables["train"], params, tmp_path / "a")
    second = _train(task, tables["train"], params, tmp_path / "b")
    assert sorted(first) == [0, 2, 4, 5, 8, 12]
    _same(first, second)
    other = _train(task, tables["train"], {**params, "seed": 2}, tmp_path / "c")
    assert not torch.equal(other[12]["embed.weight"], first[12]["embed.weight"])


def test_resume_after_stop_equals_uninterrupted(mt_data, tmp_path):
    task, tables = mt_data
    params = run_params("translation", steps=20)  # dropout on: the RNG state must be restored
    whole = _train(task, tables["train"], params, tmp_path / "whole")
    with pytest.raises(SystemExit):
        _train(task, tables["train"], params, tmp_path / "cut", stop_after=7)
    assert not (tmp_path / "cut" / "ckpt").exists()  # nothing final before training ends
    resumed = _train(task, tables["train"], params, tmp_path / "cut")
    _same(whole, resumed)
    assert sha256s(tmp_path / "cut" / "ckpt") == sha256s(tmp_path / "whole" / "ckpt")  # byte for byte
    work = tmp_path / "cut" / "work"
    assert sorted(p.name for p in work.iterdir()) == ["checkpoints", "done.json", "lock"]  # no resume.pt
    log = pd.read_parquet(tmp_path / "cut" / "log.parquet")
    assert log["step"].tolist() == list(range(2, 21, 2))
    assert log["elapsed_s"].is_monotonic_increasing


def test_identical_runs_give_byte_identical_checkpoint_files(cls_data, tmp_path):
    """torch.save to a path stores the (random temporary) file name inside the zip; through a
    file object the archive is always 'archive'."""
    task, tables = cls_data
    params = run_params(task.name)
    _train(task, tables["train"], params, tmp_path / "a")
    _train(task, tables["train"], params, tmp_path / "b")
    a = sha256s(tmp_path / "a" / "ckpt")
    assert a == sha256s(tmp_path / "b" / "ckpt")
    assert sorted(a) == ["manifest.json"] + [f"step{s:08d}.pt" for s in (0, 2, 4, 5, 8, 12)]
    names = zipfile.ZipFile(tmp_path / "a" / "ckpt" / "step00000012.pt").namelist()
    assert all(n.startswith("archive/") for n in names), names


def test_elapsed_s_runs_on_over_saves_and_resumes(mt_data, tmp_path):
    task, tables = mt_data
    params = run_params("translation", steps=20)
    with pytest.raises(SystemExit):
        train_run(task, tables["train"], params, tmp_path / "ckpt", tmp_path / "log.parquet", tmp_path / "work",
                  progress=False, stop_after=9, resume_every_s=0.0)  # a resume state after every step
    train_run(task, tables["train"], params, tmp_path / "ckpt", tmp_path / "log.parquet", tmp_path / "work",
              progress=False, resume_every_s=0.0)
    elapsed = pd.read_parquet(tmp_path / "log.parquet")["elapsed_s"]
    assert elapsed.is_monotonic_increasing and elapsed.iloc[0] > 0, elapsed.tolist()


def test_finished_training_is_published_again_without_training(cls_data, tmp_path, monkeypatch):
    """Snakemake deletes the outputs of a job it did not see finish (Snakemake stopped, a kill
    after the job's last write): the rerun publishes them again from the work folder."""
    task, tables = cls_data
    params = run_params(task.name)
    _train(task, tables["train"], params, tmp_path)
    before = sha256s(tmp_path / "ckpt")
    log = pd.read_parquet(tmp_path / "log.parquet")
    for f in (tmp_path / "ckpt").iterdir():
        f.unlink()
    (tmp_path / "ckpt").rmdir()
    (tmp_path / "log.parquet").unlink()
    monkeypatch.setattr(task, "loss", lambda *a: pytest.fail("trained again"))
    _train(task, tables["train"], params, tmp_path)
    assert sha256s(tmp_path / "ckpt") == before
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "log.parquet"), log)


def test_finished_work_of_other_inputs_is_not_reused(cls_data, tmp_path):
    """The work folder's identity covers the job's input files and code (``inputs``), not only
    the settings: after a code change the rerun trains again."""
    task, tables = cls_data
    params = run_params(task.name)
    first = _train(task, tables["train"], params, tmp_path / "x", inputs="code v1")
    calls = []
    loss = task.loss
    task.loss = lambda *a: calls.append(1) or loss(*a)
    try:
        again = _train(task, tables["train"], params, tmp_path / "x", inputs="code v2")
    finally:
        task.loss = loss
    assert len(calls) == 12
    _same(first, again)


def test_second_trainer_in_the_same_work_folder_is_refused(cls_data, tmp_path):
    task, tables = cls_data
    (tmp_path / "work").mkdir()
    with run_lock(tmp_path / "work"), pytest.raises(RunLocked) as err:
        _train(task, tables["train"], run_params(task.name), tmp_path, lock_wait_s=0.3)
    assert f"pid {os.getpid()} on host" in str(err.value) and str(tmp_path / "work") in str(err.value)
    assert not (tmp_path / "ckpt").exists()
    _train(task, tables["train"], run_params(task.name), tmp_path, lock_wait_s=0.3)  # free again


def test_missing_checkpoint_is_named(cls_data, tmp_path):
    task, tables = cls_data
    _train(task, tables["train"], run_params(task.name), tmp_path)
    (tmp_path / "ckpt" / "step00000005.pt").unlink()
    with pytest.raises(IncompleteCheckpoints, match=r"checkpoint .*/ckpt/step00000005.pt is missing"):
        list_checkpoints(tmp_path / "ckpt")
    (tmp_path / "ckpt" / "manifest.json").unlink()
    with pytest.raises(IncompleteCheckpoints, match=r"manifest.json is missing: .* not the output of a finished"):
        list_checkpoints(tmp_path / "ckpt")
    (tmp_path / "empty").mkdir()  # what an interrupted publishing once left
    with pytest.raises(IncompleteCheckpoints, match="manifest.json is missing"):
        list_checkpoints(tmp_path / "empty")


def test_length_must_be_set_and_checkpoints_beyond_it_are_reported(cls_data, tmp_path, capfd):
    with pytest.raises(ValueError, match="neither steps nor epochs"):
        total_steps({"steps": None, "epochs": None, "batch_size": 8}, 100)
    task, tables = cls_data
    params = run_params(task.name, steps=4)  # checkpoints at 0, 2, 5, every 4
    _train(task, tables["train"], params, tmp_path)
    assert "checkpoint steps [5] are beyond the run's 4 steps: not saved" in capfd.readouterr().err


def test_stale_resume_state_from_other_settings_is_discarded(mt_data, tmp_path):
    task, tables = mt_data
    params = run_params("translation", steps=10)
    with pytest.raises(SystemExit):
        _train(task, tables["train"], {**params, "seed": 5}, tmp_path / "x", stop_after=3)
    fresh = _train(task, tables["train"], params, tmp_path / "ref")
    after = _train(task, tables["train"], params, tmp_path / "x")
    _same(fresh, after)


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
    params = conftest.run_params("translation", steps={steps})
    root = pathlib.Path({root!r})
    print("start", flush=True)
    train_run(task, tables["train"], params, root / "ckpt", root / "log.parquet", root / "work",
              resume_every_s=0.2, progress=False)
""")


@pytest.mark.process
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_killed_process_resumes_to_identical_final_checkpoint(sig, tmp_path):
    """A real process killed mid-run (SIGKILL; SIGTERM = preemption; SIGINT = Ctrl-C) resumes on
    rerun, to the same checkpoint files byte for byte."""
    steps = 400
    tests = os.path.dirname(__file__)
    script = tmp_path / "job.py"

    def run(root):
        script.write_text(SCRIPT.format(tests=tests, steps=steps, root=str(root)))
        return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)

    ref = run(tmp_path / "ref")
    assert ref.wait(timeout=300) == 0
    job = run(tmp_path / "cut")
    assert job.stdout.readline().strip() == "start"
    resume = tmp_path / "cut" / "work" / "resume.pt"
    deadline = 300
    import time
    t0 = time.monotonic()
    while not resume.exists() and time.monotonic() - t0 < deadline:
        time.sleep(0.05)
    job.send_signal(sig)
    assert job.wait(timeout=60) != 0
    assert resume.exists() and not (tmp_path / "cut" / "ckpt").exists()
    assert run(tmp_path / "cut").wait(timeout=300) == 0
    assert sha256s(tmp_path / "cut" / "ckpt") == sha256s(tmp_path / "ref" / "ckpt")


@pytest.mark.parametrize("signals, echo_s, said", [
    ([signal.SIGHUP], 2.0, "stopped at step 7 (SIGHUP)"),
    ([signal.SIGINT, signal.SIGINT], 2.0, "stopped at step 7 (SIGINT)"),  # a terminal's and Snakemake's: one
    ([signal.SIGTERM, signal.SIGTERM], 0.0, "stopped by a second SIGTERM")])
def test_signal_stops_at_the_end_of_the_step_and_the_rerun_is_identical(signals, echo_s, said, mt_data, tmp_path,
                                                                       monkeypatch):
    """SIGHUP (a closed terminal) stops like SIGTERM and SIGINT: the state of the step is saved.
    The same signal twice within ECHO_S (Ctrl-C from the terminal and forwarded by Snakemake) is
    one stop; a second signal after that stops at once, from the last saved state. Either way
    the rerun ends with the uninterrupted run's files."""
    from attnlearn.runtime.interrupt import StopAtStepEnd

    monkeypatch.setattr(StopAtStepEnd, "ECHO_S", echo_s)
    task, tables = mt_data
    params = run_params("translation", steps=20)
    _train(task, tables["train"], params, tmp_path / "whole")
    loss, calls = task.loss, []

    def signalling_loss(*a):
        calls.append(1)
        if len(calls) == 7:
            for s in signals:
                os.kill(os.getpid(), s)
        return loss(*a)

    monkeypatch.setattr(task, "loss", signalling_loss)
    handlers = [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)]
    with pytest.raises(SystemExit) as stop:
        _train(task, tables["train"], params, tmp_path / "cut")
    monkeypatch.undo()
    assert said in str(stop.value)
    if "at step 7" in said:
        assert torch.load(tmp_path / "cut" / "work" / "resume.pt", weights_only=False)["step"] == 7
    assert [signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)] == handlers  # restored
    _train(task, tables["train"], params, tmp_path / "cut")
    assert sha256s(tmp_path / "cut" / "ckpt") == sha256s(tmp_path / "whole" / "ckpt")


def test_a_training_never_succeeds_without_every_scheduled_checkpoint(cls_data, tmp_path, monkeypatch):
    """The last act of a training job checks its published folder against the schedule."""
    import attnlearn.training.workdir as workdir

    task, tables = cls_data
    link = workdir.link_or_copy
    monkeypatch.setattr(workdir, "link_or_copy",
                        lambda src, dst: None if src.name == "step00000005.pt" else link(src, dst))
    with pytest.raises(IncompleteCheckpoints, match=r"ckpt/step00000005.pt is missing"):
        _train(task, tables["train"], run_params(task.name), tmp_path)
    monkeypatch.undo()
    _train(task, tables["train"], run_params(task.name), tmp_path)  # the rerun publishes it whole
    assert [s for s, _ in list_checkpoints(tmp_path / "ckpt", hashes=True)] == [0, 2, 4, 5, 8, 12]


@pytest.mark.process
def test_training_and_the_toy_experiments_do_not_import_torch_compile():
    """training/adam.py calls torch's Adam arithmetic without torch.optim.Adam's wrapping for
    torch.compile, whose constructor and steps import torch._dynamo (1.3 CPU-seconds a job): a
    training and a toy experiment run without it."""
    code = textwrap.dedent("""
        import sys
        import numpy as np, pandas as pd, torch
        from attnlearn.experiments.data import CopyTask
        from attnlearn.experiments.train import build, train_curve
        from attnlearn.models.tasks import make_task
        from attnlearn.training.adam import Adam
        from attnlearn.training.model import build_model
        from attnlearn.training.train import train_step
        task = make_task("classification", 20)
        table = pd.DataFrame({"ids": [[1, 5, 7, 2], [1, 9, 2]] * 4, "label": [0.0, 1.0] * 4})
        model = build_model(task, {"variant": "standard", "seed": 1,
                                   "model": {"embed": 8, "hidden": 8, "att_hidden": 4}})
        optim = Adam(model.parameters(), 1e-2)
        for _ in range(2):
            train_step(task, model, optim, task.batch(table, np.arange(8)))
        copy = CopyTask(vocab=6, length=3)
        train_curve(build(copy, {"hidden": 8}, 0), copy, 2, 0, batch_size=4, eval_every=1, eval_samples=4)
        print("torch._dynamo" in sys.modules)
        """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
