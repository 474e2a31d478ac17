"""Stacked training (train.stack): K classification runs as one batched model, K translation runs
in turn in one process, each member following its separate run and resuming as exactly as a
single run."""

import shutil

import numpy as np
import pandas as pd
import pytest
import torch

from attnlearn.config import stack_groups
from attnlearn.models.tasks import StackedTask, StackedTranslationTask, make_task, pad, stacked
from attnlearn.training.model import build_model
from attnlearn.training.train import train_run, train_stack
from attnlearn.training.workdir import list_checkpoints
from conftest import run_params
from test_train import sha256s


def members(task, seeds, variant="standard"):
    return [build_model(task, run_params(task.name, variant, seed)) for seed in seeds]


def random_rows(rng, vocab, lengths):
    return [list(rng.integers(1, vocab, n)) for n in lengths]


@pytest.mark.parametrize("path", ["fused", "stepped"])
@pytest.mark.parametrize("variant", ["standard", "uniform"])
def test_stacked_model_is_its_members_forward_and_backward(path, variant, monkeypatch):
    """Each member's logits and weight gradients equal its own Classifier's on its own batch,
    though the stack pads every member's rows to the longest of all; on the CPU path (fused
    kernel per member) and the GPU path (one batched time loop), both run here."""
    task = make_task("classification", 30)
    models = members(task, [1, 2, 3], variant)
    stack = StackedTask(task).build(models)
    rng = np.random.default_rng(0)
    rows = [random_rows(rng, 30, lengths) for lengths in ([2, 5, 3], [7, 1, 4], [3, 3, 9])]
    parts = [pad(r) for r in rows]
    width = max(ids.shape[1] for ids, _ in parts)
    ids = torch.stack([torch.nn.functional.pad(i, (0, width - i.shape[1])) for i, _ in parts])
    lengths = torch.stack([n for _, n in parts])
    monkeypatch.setattr(type(stack), "_encode", getattr(type(stack), path))
    out = stack(ids, lengths)
    out["logit"].square().sum().backward()
    for k, model in enumerate(models):
        own = model(*parts[k])
        own["logit"].square().sum().backward()
        torch.testing.assert_close(out["logit"][k], own["logit"], atol=1e-6, rtol=0)
        for name, p in model.named_parameters():
            grad = stack.weight(name).grad
            if p.grad is None:  # uniform attention: its scorer is not used
                assert grad is None, name
                continue
            torch.testing.assert_close(grad[k], p.grad, atol=1e-6, rtol=0, msg=f"member {k}: {name}")
        assert not stack.weight("embed.weight").grad[k, 0].any()  # the pad row learns nothing


def test_member_checkpoint_is_a_classifier_state_dict_in_its_own_storage():
    task = make_task("classification", 30)
    models = members(task, [1, 2])
    stack = StackedTask(task).build(models)
    state = stack.member_state(1)
    assert state.keys() == models[1].state_dict().keys()
    for name, value in state.items():
        assert torch.equal(value, models[1].state_dict()[name])
        assert value.untyped_storage().nbytes() == value.numel() * value.element_size()  # not a view of the stack


def params_of(task, variant, seed, lr=1e-2, device="cpu"):
    params = run_params(task.name, variant, seed)
    return {**params, "name": f"{variant}-s{seed}", "train": {**params["train"], "lr": lr}, "device": device}


def _stack(task, table, seeds, root, variant="standard", lr=1e-2, device="cpu", **kw):
    params = [params_of(task, variant, seed, lr, device) for seed in seeds]
    dirs = [root / f"s{seed}" for seed in seeds]
    train_stack(task, table, params, dirs, [d.with_suffix(".parquet") for d in dirs], root / "work", progress=False,
                **kw)
    return dirs


def _checkpoints(folder):
    return {step: torch.load(p, weights_only=True) for step, p in list_checkpoints(folder, hashes=True)}


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=[
    pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU")])])
@pytest.mark.parametrize("variant", ["standard", "uniform", "frozen"])
def test_each_member_follows_its_separate_run(variant, device, cls_data, tmp_path):
    """On a CPU the members are their separate runs exactly (each stepped in turn, _Members):
    every checkpoint and loss the same. On a GPU (one batched model) every weight within 1e-3 of
    the separate run's (at the task's lr, 1e-3): the stack steps its own time loop where the
    separate run uses cuDNN, and the one that comes near the bound is the attention score's bias,
    to which softmax is blind: its gradient is rounding noise, which Adam scales up to steps of
    lr, so the two drift apart."""
    task, tables = cls_data
    seeds = [1, 2, 3]
    dirs = _stack(task, tables["train"], seeds, tmp_path / "stack", variant, lr=1e-3, device=device)
    for seed, folder in zip(seeds, dirs):
        own = tmp_path / f"own{seed}"
        train_run(task, tables["train"], params_of(task, variant, seed, 1e-3, device), own / "ckpt",
                  own / "log.parquet", own / "work", progress=False)
        mine, theirs = _checkpoints(folder), _checkpoints(own / "ckpt")
        assert mine.keys() == theirs.keys() == {0, 2, 4, 5, 8, 12}
        for step in mine:
            for name in theirs[step]:
                gap = (mine[step][name] - theirs[step][name]).abs().max().item()
                assert gap <= (1e-3 if device == "cuda" else 0.0), (seed, step, name, gap)
        a, b = pd.read_parquet(folder.with_suffix(".parquet")), pd.read_parquet(own / "log.parquet")
        assert a["step"].tolist() == b["step"].tolist()
        np.testing.assert_allclose(a["loss"], b["loss"], atol=1e-4 if device == "cuda" else 0.0)


def test_killed_stack_resumes_to_the_bytes_of_an_uninterrupted_one(cls_data, tmp_path):
    task, tables = cls_data
    whole = _stack(task, tables["train"], [1, 2, 3], tmp_path / "whole")
    with pytest.raises(SystemExit, match="stopped at step 7"):
        _stack(task, tables["train"], [1, 2, 3], tmp_path / "cut", stop_after=7)
    assert not (tmp_path / "cut" / "s1").exists()  # nothing published before the training ends
    resumed = _stack(task, tables["train"], [1, 2, 3], tmp_path / "cut")
    for a, b in zip(whole, resumed):
        assert sha256s(a) == sha256s(b)
        pd.testing.assert_frame_equal(pd.read_parquet(a.with_suffix(".parquet")).drop(columns="elapsed_s"),
                                      pd.read_parquet(b.with_suffix(".parquet")).drop(columns="elapsed_s"))
    # a finished stack is published again from its work folder, not trained again
    for d in resumed:
        shutil.rmtree(d)
    again = _stack(task, tables["train"], [1, 2, 3], tmp_path / "cut")
    assert [sha256s(d) for d in again] == [sha256s(d) for d in whole]


def test_stack_members_differ_in_their_seed_only(cls_data, tmp_path):
    task, tables = cls_data
    params = [run_params(task.name, "standard", 1), run_params(task.name, "uniform", 2)]
    with pytest.raises(ValueError, match="differ in their seed only"):
        train_stack(task, tables["train"], params, [tmp_path / "a", tmp_path / "b"],
                    [tmp_path / "a.parquet", tmp_path / "b.parquet"], tmp_path / "work", progress=False)


@pytest.mark.parametrize("variant", ["standard", "uniform", "frozen", "additive"])
def test_each_translation_member_follows_its_separate_run(variant, mt_data, tmp_path):
    """A stack of translation runs (2 layers, dropout 0.2 between them) on a CPU: each member steps
    in turn with its own generators, so its dropout masks are its separate run's and every
    checkpoint and loss is its separate run's, byte for byte."""
    task, tables = mt_data
    seeds = [1, 2, 3]
    dirs = _stack(task, tables["train"], seeds, tmp_path / "stack", variant)
    for seed, folder in zip(seeds, dirs):
        own = tmp_path / f"own{seed}"
        train_run(task, tables["train"], params_of(task, variant, seed), own / "ckpt", own / "log.parquet",
                  own / "work", progress=False)
        assert sha256s(folder) == sha256s(own / "ckpt"), (variant, seed)
        a, b = pd.read_parquet(folder.with_suffix(".parquet")), pd.read_parquet(own / "log.parquet")
        pd.testing.assert_frame_equal(a.drop(columns="elapsed_s"), b.drop(columns="elapsed_s"))


def test_translation_members_need_their_own_dropout_streams(mt_data, tmp_path, monkeypatch):
    """The test above has the power to see a shared stream: members that draw their dropout masks
    one after another from one generator end elsewhere than their separate runs."""
    import attnlearn.training.train as T

    task, tables = mt_data
    shared = T.members_step
    monkeypatch.setattr(T, "members_step", lambda task, models, optim, batches, rngs=None, **kw:
                        shared(task, models, optim, batches, None, **kw))
    dirs = _stack(task, tables["train"], [1, 2], tmp_path / "stack")
    own = tmp_path / "own2"
    train_run(task, tables["train"], params_of(task, "standard", 2), own / "ckpt", own / "log.parquet",
              own / "work", progress=False)
    mine, theirs = _checkpoints(dirs[1]), _checkpoints(own / "ckpt")
    assert max((mine[12][k] - theirs[12][k]).abs().max().item() for k in mine[12]) > 1e-3


def test_killed_translation_stack_resumes_to_the_bytes_of_an_uninterrupted_one(mt_data, tmp_path):
    """Each member's generators are in the resume state: a stack stopped at step 7 (between the
    checkpoints at 5 and 8) resumes to every member's bytes."""
    task, tables = mt_data
    whole = _stack(task, tables["train"], [1, 2, 3], tmp_path / "whole")
    with pytest.raises(SystemExit, match="stopped at step 7"):
        _stack(task, tables["train"], [1, 2, 3], tmp_path / "cut", stop_after=7)
    resumed = _stack(task, tables["train"], [1, 2, 3], tmp_path / "cut")
    for a, b in zip(whole, resumed):
        assert sha256s(a) == sha256s(b)
        pd.testing.assert_frame_equal(pd.read_parquet(a.with_suffix(".parquet")).drop(columns="elapsed_s"),
                                      pd.read_parquet(b.with_suffix(".parquet")).drop(columns="elapsed_s"))


def test_a_gpu_stacks_lstm_models_as_one_batched_model_and_steps_transformers_in_turn():
    """stacked(): the batched adapter a GPU trains (classification, LSTM translation), or None
    where there is none (the transformer: its members step in turn there too)."""
    assert isinstance(stacked(make_task("classification", 30)), StackedTask)
    assert isinstance(stacked(make_task("translation", 30), {"hidden": 8}), StackedTranslationTask)
    assert stacked(make_task("translation", 30), {"arch": "transformer"}) is None


def test_stack_groups_take_each_variants_runs_k_at_a_time():
    dataset = {"task": "classification", "train": {"stack": 2},
               "runs": {"standard": [1, 2, 3], "uniform": [1, 2, 3, 4], "frozen": [1]}}
    assert stack_groups(dataset) == [["standard-s1", "standard-s2"], ["uniform-s1", "uniform-s2"],
                                     ["uniform-s3", "uniform-s4"]]  # standard-s3 and frozen-s1 train alone
    assert stack_groups({**dataset, "train": {}}) == []
    assert stack_groups({**dataset, "task": "translation"}) == stack_groups(dataset)  # translation stacks too


def test_recurrence_backward_is_the_gradient_of_its_forward():
    """The hand-written back-propagation through time (models/recurrence.py) against finite
    differences, from zero states and from given ones (a decoder's), through the outputs and the
    cell states (an encoder's final states); its forward against nn.LSTM's cell equations."""
    from attnlearn.models.recurrence import Recurrence

    S, D, B, H = 5, 3, 2, 4
    gen = torch.Generator().manual_seed(0)
    inputs = torch.randn(S, D, B, 4 * H, dtype=torch.float64, generator=gen, requires_grad=True)
    w_hh = (0.5 * torch.randn(D, 4 * H, H, dtype=torch.float64, generator=gen)).requires_grad_()
    h0, c0 = (torch.randn(D, B, H, dtype=torch.float64, generator=gen, requires_grad=True) for _ in range(2))
    assert torch.autograd.gradcheck(lambda i, w: Recurrence.apply(i, w)[0], (inputs, w_hh))
    assert torch.autograd.gradcheck(lambda *a: torch.cat(Recurrence.apply(*a)), (inputs, w_hh, h0, c0))
    for start in (None, (h0, c0)):
        out, cells = Recurrence.apply(inputs, w_hh, *(start or ()))
        for d in range(D):
            h, c = (torch.zeros(B, H, dtype=torch.float64),) * 2 if start is None else (h0[d], c0[d])
            for t in range(S):  # inputs[t, d] is x_t W_ih^T + b
                gates = inputs[t, d] + h @ w_hh[d].T
                i, f, g, o = gates.chunk(4, -1)
                c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
                h = torch.sigmoid(o) * torch.tanh(c)
                torch.testing.assert_close(out[t, d], h)
                torch.testing.assert_close(cells[t, d], c)
