"""The GPU side of every device branch, run on the CPU.

Jobs on a GPU take other code paths than on a CPU: the LSTM encoder steps packed batches
(cuDNN) instead of ``bilstm``, and the gradient saliency runs one forward pass per chunk of
target steps (``_saliency_steps``) instead of batched backward passes. Here those paths run on
a stand-in GPU (tests/fake_gpu.py: real numbers, a device that is not the CPU, CUDA's refusals)
and must give the CPU's numbers, so a missing ``device=``, a missing ``.cpu()`` before
``.numpy()`` or a hard-coded device fails a test. docs/gpu_branches.md lists the mutations
each test catches. With a GPU the same tests run on it too (marker ``gpu``).
"""

import copy

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp
import torch

from attnlearn.probing import probes
from attnlearn.probing.proxy import probe_proxy
from attnlearn.training import proxy as PX
from attnlearn.training import train as T
from attnlearn.analyses import rows as A
from attnlearn.models import bilstm
from attnlearn.probing.probes import probe_checkpoints
from attnlearn.training.model import build_model
from attnlearn.training.train import train_run
from attnlearn.training.workdir import list_checkpoints
from conftest import run_params, toy_experiment_frames
from fake_gpu import DEVICE, FakeGPU, on_device
from test_analyses import SETTINGS
from test_gpu_ready import _models

HAS_GPU = torch.cuda.is_available()
KINDS = ["fake", pytest.param("cuda", marks=[pytest.mark.gpu, pytest.mark.skipif(not HAS_GPU, reason="no GPU")])]
MEASURES = ["alpha", "xi", "grad", "norm"]
# torch's meta-device check warns on every load_state_dict into the stand-in's parameters;
# the values are copied all the same (the probes' numbers depend on them)
pytestmark = pytest.mark.filterwarnings("ignore:for .*non-meta parameter")


@pytest.fixture
def gpu_paths(monkeypatch):
    """Counts of the GPU-only paths taken: packed LSTM batches, per-chunk saliency passes."""
    seen = {"packed": 0, "bilstm": 0, "steps": 0, "batched": 0}

    def count(key, fn):
        def wrapped(*a, **kw):
            seen[key] += 1
            return fn(*a, **kw)
        return wrapped

    monkeypatch.setattr(bilstm, "pack_padded_sequence", count("packed", bilstm.pack_padded_sequence))
    monkeypatch.setattr(bilstm, "bilstm", count("bilstm", bilstm.bilstm))
    monkeypatch.setattr(probes, "_saliency_steps", count("steps", probes._saliency_steps))
    monkeypatch.setattr(probes, "_saliency_batched", count("batched", probes._saliency_batched))
    return seen


def _close(got, ref, name="", tol=1e-5):
    np.testing.assert_allclose(got, ref, rtol=10 * tol, atol=tol, err_msg=name)


def _adam_close(got: dict, ref: dict, step: int, lr: float):
    """The checkpoints at ``step`` of two trainings whose float order differs (packed vs fused
    LSTM). Adam moves a weight of near-0 gradient by up to about lr a step whichever way its
    rounding points (the attention score's bias has gradient 0 exactly: softmax ignores it),
    so such a weight may differ by 2 lr a step (seen: 0.48 lr at step 5 on an AMD EPYC); the
    typical weight of the checkpoint must agree as closely as the float order allows."""
    diffs = {k: np.abs(got[k] - ref[k]) for k in ref}
    for k, d in diffs.items():
        assert d.max() <= 2 * lr * step + 1e-6, (step, k, d.max())
    typical = np.median(np.concatenate([d.ravel() for d in diffs.values()]))
    assert typical <= lr / 1000, (step, typical)


def _tables_close(got: pa.Table, ref: pa.Table):
    assert got.column_names == ref.column_names
    for c in ref.column_names:
        if pa.types.is_large_list(ref.schema.field(c).type):
            assert got[c].combine_chunks().offsets.equals(ref[c].combine_chunks().offsets), c
            _close(pa.compute.list_flatten(got[c]).to_numpy(), pa.compute.list_flatten(ref[c]).to_numpy(), c)
        else:
            assert got[c].equals(ref[c]), c


def _perturbed(state: dict, seed: int) -> dict:
    """Another checkpoint of the same model: the probe must load each one onto the device."""
    g = torch.Generator().manual_seed(seed)
    return {k: v + 0.1 * torch.randn(v.shape, generator=g) if v.is_floating_point() else v
            for k, v in state.items()}


def _model(arch, mt_data, cls_data):
    if arch == "cls":
        task, tables = cls_data
        return task, tables, build_model(task, run_params("classification")).eval()
    task, tables = mt_data
    return task, tables, _models(task)[arch]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("arch", ["lstm", "mh", "tf", "cls"])
def test_probe_on_a_gpu_gives_the_cpus_table(arch, kind, mt_data, cls_data, gpu_paths, tmp_path):
    task, tables, model = _model(arch, mt_data, cls_data)
    ckpts = [(0, tmp_path / "a.pt"), (3, tmp_path / "b.pt")]
    torch.save(model.state_dict(), ckpts[0][1])
    torch.save(_perturbed(model.state_dict(), 0), ckpts[1][1])
    valid = tables["valid"].iloc[:12]
    bleu = {"beam": 2, "max_len": 6, "detok": lambda ids: " ".join(map(str, ids))}

    def run(device, model, out):
        return probe_checkpoints(task, model, valid, ckpts, MEASURES, 6, device, out, progress=False, bleu=bleu)

    ref = run("cpu", copy.deepcopy(model), tmp_path / "ref.parquet")
    before = dict(gpu_paths)
    with on_device(kind) as device:
        got = run(device, copy.deepcopy(model).to(device), tmp_path / "got.parquet")
    _tables_close(pq.read_table(tmp_path / "got.parquet"), pq.read_table(tmp_path / "ref.parquet"))
    pd.testing.assert_frame_equal(got, ref, rtol=1e-4)
    taken = {k: gpu_paths[k] - before[k] for k in gpu_paths}
    assert taken["bilstm"] == taken["batched"] == 0, taken  # no CPU path on the GPU
    if arch != "tf":
        assert taken["packed"] > 0
    if arch != "cls":
        assert taken["steps"] > 0


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("arch", ["lstm", "mh", "tf"])
def test_analyses_on_a_gpu_give_the_cpus_rows(arch, kind, mt_data, starts_word, gpu_paths):
    task, tables = mt_data
    model = _models(task)[arch]
    valid = tables["valid"].iloc[:12]
    calls = {"norms": lambda m, d: A.norm_rows(task, m, valid, 6, d),
             "alignment": lambda m, d: A.alignment_rows(task, m, valid, SETTINGS, 6, d, starts_word),
             "effective": lambda m, d: A.effective_rows(task, m, valid, SETTINGS, 6, d),
             "roles": lambda m, d: A.head_role_rows(task, m, valid, SETTINGS, 6, d, has_gold=True)}
    for name, call in calls.items():
        ref = pd.DataFrame(call(model, "cpu"))
        before = dict(gpu_paths)
        with on_device(kind) as device:
            got = pd.DataFrame(call(copy.deepcopy(model).to(device), device))
        pd.testing.assert_frame_equal(got, ref, rtol=1e-4, atol=1e-5, obj=name)
        assert gpu_paths["bilstm"] == before["bilstm"] and (gpu_paths["packed"] > before["packed"] or arch == "tf")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task_name", ["translation", "classification"])
def test_training_on_a_gpu_gives_the_cpus_checkpoints(task_name, kind, mt_data, cls_data, gpu_paths, tmp_path,
                                                      monkeypatch):
    """Dropout 0: the packed kernel draws its dropout masks otherwise than ``bilstm``."""
    task, tables = mt_data if task_name == "translation" else cls_data
    params = run_params(task_name, steps=8)
    params["model"] = {**params["model"], "dropout": 0.0}

    def train(root):
        train_run(task, tables["train"], params, root / "ckpt", root / "log.parquet", root / "work", progress=False)
        return {s: torch.load(p, weights_only=True) for s, p in list_checkpoints(root / "ckpt")}, \
            pd.read_parquet(root / "log.parquet")

    ref, ref_log = train(tmp_path / "cpu")
    before = dict(gpu_paths)
    with on_device(kind) as device:
        monkeypatch.setattr(T, "resolve_device", lambda name: device)
        got, got_log = train(tmp_path / kind)
    assert got.keys() == ref.keys()
    lr = params["train"]["lr"]
    for step in ref:
        for k in ref[step]:
            assert got[step][k].device.type == "cpu" and type(got[step][k]) is torch.Tensor, (step, k)
        _adam_close({k: v.numpy() for k, v in got[step].items()}, {k: v.numpy() for k, v in ref[step].items()},
                    step, lr)
    _close(got_log["loss"].to_numpy(), ref_log["loss"].to_numpy(), tol=1e-4)
    assert gpu_paths["packed"] > before["packed"] and gpu_paths["bilstm"] == before["bilstm"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("task_name", ["translation", "classification"])
def test_proxy_on_a_gpu_gives_the_cpus_probe(task_name, kind, mt_data, cls_data, monkeypatch):
    task, tables = mt_data if task_name == "translation" else cls_data
    params = {"embed": 8, "lr": 1e-2, "batch_size": 16, "epochs": 2, "seed": 0}
    n_tgt = task.vocab_size if task_name == "translation" else 2
    t_table = sp.random(task.vocab_size, n_tgt, density=0.3, format="csr", random_state=0)
    valid = tables["valid"].iloc[:20]

    def run(device):
        monkeypatch.setattr(PX, "resolve_device", lambda name: device)
        model, log = PX.train_proxy(task, tables["train"], valid, params, progress=False)
        return probe_proxy(task, model, t_table, valid, 8, PX.best_epoch(log)), log

    ref, ref_log = run(torch.device("cpu"))
    with on_device(kind) as device:
        got, got_log = run(device)
    pd.testing.assert_frame_equal(got_log, ref_log, rtol=1e-4)
    _tables_close(got, ref)


@pytest.mark.parametrize("kind", KINDS)
def test_toy_experiments_on_a_gpu_give_the_cpus_frames(kind):
    ref = toy_experiment_frames("cpu")
    with on_device(kind) as device:
        got = toy_experiment_frames(device)
    for a, b in zip(got, ref):
        pd.testing.assert_frame_equal(a, b, rtol=1e-4, atol=1e-5)


# -- the stand-in refuses what CUDA refuses ------------------------------------------------------------

def test_the_stand_in_gpu_refuses_what_cuda_refuses():
    with FakeGPU():
        x = torch.ones(3, device=DEVICE)
        with pytest.raises(RuntimeError, match="same device"):
            x * torch.ones(3)  # made without device=
        with pytest.raises(RuntimeError, match="same device"):
            x + torch.arange(3, device="cpu")  # hard-coded device
        with pytest.raises(TypeError, match="Use Tensor.cpu"):
            x.numpy()
        with pytest.raises(RuntimeError, match="indexed by"):
            torch.arange(3)[torch.tensor([0, 2], device=DEVICE)]
        # what CUDA accepts: 0-dim host tensors, host indices, .cpu(), .tolist(), .item()
        y = x * torch.tensor(2.0) + x[torch.tensor([0, 0, 1])]
        assert y.cpu().numpy().tolist() == y.tolist() == [3.0] * 3 and y.sum().item() == 9.0
        assert y.device == DEVICE and y.cpu().device.type == "cpu"
