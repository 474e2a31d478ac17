"""Training is reproducible, follows its schedule, and resumes exactly after a kill."""

import os
import signal
import subprocess
import sys
import textwrap

import pandas as pd
import pytest
import torch

from attnlearn.train import checkpoint_steps, list_checkpoints, train_run
from conftest import run_params


def _train(task, table, params, root, **kw):
    train_run(task, table, params, root / "ckpt", root / "log.parquet", root / "work", progress=False, **kw)
    return {step: torch.load(p, weights_only=True) for step, p in list_checkpoints(root / "ckpt")}


def _same(a, b):
    assert a.keys() == b.keys()
    for step in a:
        for k in a[step]:
            assert torch.equal(a[step][k], b[step][k]), (step, k)


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
    assert not (tmp_path / "cut" / "work").exists()
    log = pd.read_parquet(tmp_path / "cut" / "log.parquet")
    assert log["step"].tolist() == list(range(2, 21, 2))


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
    from attnlearn.tokenize import tokenize_translation, load_sentencepiece
    from attnlearn.tasks import make_task
    from attnlearn.train import train_run
    data = synthetic_mt(n_sentences=200, seed=0, **conftest.MT_OPTIONS)
    model, tables = tokenize_translation({{"train": data}}, 120, 0)
    task = make_task("translation", load_sentencepiece(model).get_piece_size())
    params = conftest.run_params("translation", steps={steps})
    root = pathlib.Path({root!r})
    print("start", flush=True)
    train_run(task, tables["train"], params, root / "ckpt", root / "log.parquet", root / "work",
              resume_every_s=0.0, progress=False)
""")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_killed_process_resumes_to_identical_final_checkpoint(sig, tmp_path):
    """A real process killed mid-run (SIGKILL; SIGTERM = preemption) resumes on rerun."""
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
    final = f"step{steps:08d}.pt"
    a = torch.load(tmp_path / "ref" / "ckpt" / final, weights_only=True)
    b = torch.load(tmp_path / "cut" / "ckpt" / final, weights_only=True)
    assert all(torch.equal(a[k], b[k]) for k in a)
