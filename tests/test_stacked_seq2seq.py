"""The batched translation stack (models/stacked_seq2seq.py), what a GPU trains for train.stack:
each member's forward and backward its own model's, its dropout its own, its training within
1e-3 of its separate run's where no dropout is drawn, and resumed to the bytes of an
uninterrupted stack. On the CPU, where train.stack steps translation members in turn, the
batched path is forced here."""

import numpy as np
import pandas as pd
import pytest
import torch

import attnlearn.training.train as train_module
from attnlearn.models.tasks import stacked
from attnlearn.training.model import build_model
from attnlearn.training.train import train_run, train_stack
from attnlearn.training.workdir import list_checkpoints
from conftest import run_params
from test_train import sha256s

GPU = pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(),
                                                                          reason="no GPU")])


def params_of(task, variant, seed, model=None, lr=1e-2, device="cpu"):
    p = run_params(task.name, variant, seed)
    return {**p, "name": f"{variant}-s{seed}", "model": {**p["model"], **(model or {})},
            "train": {**p["train"], "lr": lr}, "device": device}


@pytest.mark.parametrize("variant, model", [("standard", {}), ("uniform", {}), ("standard", {"heads": 2}),
                                            ("additive", {}), ("frozen", {"layers": 1})])
def test_stacked_translation_model_is_its_members_forward_and_backward(variant, model, mt_data):
    """Each member's logits at its real positions and its weights' gradients equal its own
    Seq2Seq's on its own batch (no dropout drawn: eval mode), though the stack pads every
    member's batch to the longest source and target of all."""
    task, tables = mt_data
    params = [params_of(task, variant, seed, model) for seed in (1, 2, 3)]
    members = [build_model(task, p) for p in params]
    adapter = stacked(task, params[0]["model"])
    stack = adapter.build(members).eval()
    idx = [np.arange(8) + 8 * k for k in range(3)]
    b = adapter.batch(tables["train"], idx)
    logits = stack(b["src"], b["src_len"], b["tgt_in"], b["tgt_len"])["logits"]
    adapter.loss(stack, b).backward()
    losses = adapter.member_losses(stack, b).detach()
    for k, member in enumerate(members.copy()):
        member.eval()
        own = task.batch(tables["train"], idx[k])
        torch.testing.assert_close(logits[k, :, :own["tgt_in"].shape[1]], task.run(member, own)["logits"],
                                   atol=1e-5, rtol=0)
        loss = task.loss(member, own)
        loss.backward()
        torch.testing.assert_close(losses[k], loss.detach(), atol=1e-3, rtol=1e-6)
        for name, p in member.named_parameters():
            grad = stack.weight(name).grad
            if p.grad is None:  # frozen weights, uniform attention's unused scorer
                assert grad is None or not grad[k].any(), name
                continue
            torch.testing.assert_close(grad[k], p.grad, atol=1e-5, rtol=1e-5, msg=f"member {k}: {name}")


def test_a_members_dropout_is_its_own(mt_data):
    """Member 0's output in training mode depends on its own generator and batch alone: beside
    other members (other rows, other lengths) it draws the same masks."""
    task, tables = mt_data
    outs = []
    for seeds, rows in (((1, 2), 16), ((1, 3, 4), 24)):
        params = [params_of(task, "standard", seed) for seed in seeds]
        adapter = stacked(task, params[0]["model"])
        stack = adapter.build([build_model(task, p) for p in params]).train()
        stack.start_generators([7] * len(seeds), [torch.Generator().manual_seed(7).get_state()] * len(seeds))
        idx = [np.arange(8)] + [np.arange(8) + rows + 8 * k for k in range(len(seeds) - 1)]
        b = adapter.batch(tables["train"], idx)
        T = int(b["tgt_len"][0].max())
        outs.append(stack(b["src"], b["src_len"], b["tgt_in"], b["tgt_len"])["logits"][0, :, :T].detach())
    torch.testing.assert_close(outs[0], outs[1], atol=1e-5, rtol=0)
    with torch.no_grad():  # and dropout is drawn: the eval-mode output differs
        stack.eval()
        assert not torch.allclose(stack(b["src"], b["src_len"], b["tgt_in"], b["tgt_len"])["logits"][0, :, :T],
                                  outs[1], atol=1e-3)


def _stack(task, table, seeds, root, params, **kw):
    dirs = [root / f"s{seed}" for seed in seeds]
    train_stack(task, table, params, dirs, [d.with_suffix(".parquet") for d in dirs], root / "work",
                progress=False, **kw)
    return dirs


@pytest.mark.parametrize("device", ["cpu", GPU])
def test_each_batched_member_follows_its_separate_run_where_no_dropout_is_drawn(device, mt_data, tmp_path,
                                                                               monkeypatch):
    """The batched stack trained (dropout 0, lr 1e-3): every member's checkpoints within 1e-3 of
    its separate run's, as the classification stack on a GPU."""
    monkeypatch.setattr(train_module, "_batched", lambda *a: True)
    task, tables = mt_data
    seeds = [1, 2, 3]
    params = [params_of(task, "standard", s, {"dropout": 0.0}, 1e-3, device) for s in seeds]
    dirs = _stack(task, tables["train"], seeds, tmp_path / "stack", params)
    worst = 0.0
    for p, folder in zip(params, dirs):
        own = tmp_path / f"own{p['seed']}"
        train_run(task, tables["train"], p, own / "ckpt", own / "log.parquet", own / "work", progress=False)
        mine, theirs = (dict(list_checkpoints(d)) for d in (folder, own / "ckpt"))
        assert mine.keys() == theirs.keys() == {0, 2, 4, 5, 8, 12}
        for step in mine:
            a, b = (torch.load(x[step], weights_only=True) for x in (mine, theirs))
            worst = max(worst, max((a[k] - b[k]).abs().max().item() for k in b))
        np.testing.assert_allclose(pd.read_parquet(folder.with_suffix(".parquet"))["loss"],
                                   pd.read_parquet(own / "log.parquet")["loss"], rtol=1e-4)
    assert worst <= 1e-3, worst


@pytest.mark.parametrize("device", ["cpu", GPU])
def test_killed_batched_translation_stack_resumes_to_the_bytes_of_an_uninterrupted_one(device, mt_data, tmp_path,
                                                                                      monkeypatch):
    """With dropout 0.2: each member's generator is in the resume state."""
    monkeypatch.setattr(train_module, "_batched", lambda *a: True)
    task, tables = mt_data
    seeds = [1, 2, 3]
    params = [params_of(task, "standard", s, device=device) for s in seeds]
    whole = _stack(task, tables["train"], seeds, tmp_path / "whole", params)
    with pytest.raises(SystemExit, match="stopped at step 7"):
        _stack(task, tables["train"], seeds, tmp_path / "cut", params, stop_after=7)
    resumed = _stack(task, tables["train"], seeds, tmp_path / "cut", params)
    for a, b in zip(whole, resumed):
        assert sha256s(a) == sha256s(b)
