"""Ready for a GPU, proven on a CPU.

Device correctness: the probe, the analyses, the proxy probe and the toy experiments run with
torch's default device set to ``meta`` while the model and the data stay on the CPU, so a
tensor made without an explicit device (which on a GPU run would land on the CPU beside GPU
tensors) fails loudly; each result must equal the plain CPU run's. Also: resuming from state
saved on a GPU, the GPU each job takes, the determinism switch, and the memory bounds of the
gradient saliency and of the probe tables.
"""

import os
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from attnlearn.runtime import device as D
from attnlearn.training import train as T
from attnlearn.analyses import rows as A
from attnlearn.models.decode import beam_search
from attnlearn.probing.probes import MEASURES, Probe, probe_checkpoints
from attnlearn.training.model import build_model
from attnlearn.training.train import train_run
from attnlearn.training.workdir import list_checkpoints
from conftest import run_params, toy_experiment_frames
from test_analyses import SETTINGS, _transformer


def _models(task):
    """An LSTM, a 3-head LSTM and a Transformer, in eval mode, on the CPU."""
    multi = run_params("translation")
    multi["model"] = {**multi["model"], "heads": 3}
    return {"lstm": build_model(task, run_params("translation")).eval(), "mh": build_model(task, multi).eval(),
            "tf": _transformer(task)}


def _frame(rows):
    return rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)


# -- item 3: no tensor off the batch's device --------------------------------------------------------

@pytest.mark.parametrize("arch", ["lstm", "mh", "tf"])
def test_analyses_make_every_tensor_on_the_models_device(arch, mt_data, starts_word):
    task, tables = mt_data
    model = _models(task)[arch]
    valid = tables["valid"].iloc[:12]
    calls = {"norms": lambda: A.norm_rows(task, model, valid, 6, "cpu"),
             "alignment": lambda: A.alignment_rows(task, model, valid, SETTINGS, 6, "cpu", starts_word),
             "effective": lambda: A.effective_rows(task, model, valid, SETTINGS, 6, "cpu"),
             "roles": lambda: A.head_role_rows(task, model, valid, SETTINGS, 6, "cpu", has_gold=True)}
    for name, call in calls.items():
        ref = _frame(call())
        with torch.device("meta"):
            got = _frame(call())
        pd.testing.assert_frame_equal(got, ref, obj=name)


def _probe(task, model, valid, checkpoints, measures, out, **kw):
    return probe_checkpoints(task, model, valid, checkpoints, measures, 6, "cpu", out, progress=False, **kw)


@pytest.mark.parametrize("arch", ["lstm", "tf", "cls"])
def test_probe_makes_every_tensor_on_the_models_device(arch, mt_data, cls_data, tmp_path):
    task, tables = cls_data if arch == "cls" else mt_data
    model = build_model(task, run_params("classification")).eval() if arch == "cls" else _models(task)[arch]
    ckpt = tmp_path / "step.pt"
    torch.save(model.state_dict(), ckpt)
    measures = ["alpha", "xi", "grad", "norm"]
    valid = tables["valid"].iloc[:12]
    bleu = None if arch == "cls" else {"beam": 2, "max_len": 6, "detok": lambda ids: " ".join(map(str, ids))}
    ref = _probe(task, model, valid, [(0, ckpt), (3, ckpt)], measures, tmp_path / "ref.parquet", bleu=bleu)
    with torch.device("meta"):
        got = _probe(task, model, valid, [(0, ckpt), (3, ckpt)], measures, tmp_path / "got.parquet", bleu=bleu)
    pd.testing.assert_frame_equal(got, ref)
    assert pq.read_table(tmp_path / "got.parquet").equals(pq.read_table(tmp_path / "ref.parquet"))


def test_toy_experiments_make_every_tensor_on_their_device():
    ref = toy_experiment_frames()
    with torch.device("meta"):
        got = toy_experiment_frames()
    for a, b in zip(got, ref):
        pd.testing.assert_frame_equal(a, b)


# -- item 1: resume state saved on a GPU -------------------------------------------------------------

def _train(task, table, params, root, **kw):
    train_run(task, table, params, root / "ckpt", root / "log.parquet", root / "work", progress=False, **kw)
    return {step: torch.load(p, weights_only=True) for step, p in list_checkpoints(root / "ckpt")}


def test_resume_state_saved_on_a_gpu_resumes_here(mt_data, tmp_path, monkeypatch):
    """resume.pt as a 2-GPU job writes it (every tensor tagged cuda:0, the CUDA RNG of both GPUs):
    it resumes on this machine to the uninterrupted run's checkpoints."""
    task, tables = mt_data
    params = run_params("translation", steps=12)
    whole = _train(task, tables["train"], params, tmp_path / "whole")
    with pytest.raises(SystemExit):
        _train(task, tables["train"], params, tmp_path / "cut", stop_after=7)
    path = tmp_path / "cut" / "work" / "resume.pt"
    state = torch.load(path, weights_only=False)
    state["rng"]["cuda"] = [torch.zeros(16, dtype=torch.uint8)] * 2
    with monkeypatch.context() as m:
        m.setattr(torch.serialization, "location_tag", lambda storage: "cuda:0")
        torch.save(state, path)
    with pytest.raises(RuntimeError, match="CUDA"):
        torch.load(path, weights_only=False)  # the file really names a GPU
    resumed = _train(task, tables["train"], params, tmp_path / "cut")
    for step in whole:
        for k in whole[step]:
            assert torch.equal(whole[step][k], resumed[step][k]), (step, k)


def test_resume_reads_its_state_to_the_cpu_whatever_the_runs_device(mt_data, tmp_path, monkeypatch):
    """The job's device was the map_location: on a GPU the RNG state landed there and
    torch.set_rng_state raised 'RNG state must be a torch.ByteTensor' at every retry. Here the
    meta device stands in for the GPU: the resume must get past restoring the state."""
    task, tables = mt_data
    params = run_params("translation", steps=12)
    with pytest.raises(SystemExit):
        _train(task, tables["train"], params, tmp_path / "cut", stop_after=6)
    monkeypatch.setattr(T, "resolve_device", lambda name: torch.device("meta"))

    class PastTheResume(Exception):
        pass

    def first_batch(*args):
        raise PastTheResume

    monkeypatch.setattr(task, "batch", first_batch)
    with pytest.warns(UserWarning, match="meta parameter"), pytest.raises(PastTheResume):
        _train(task, tables["train"], params, tmp_path / "cut")


# -- item 6: the determinism switch ------------------------------------------------------------------

def test_deterministic_training_sets_the_exact_flags_and_restores_them(mt_data, tmp_path, monkeypatch):
    task, tables = mt_data
    params = run_params("translation", steps=3)
    params["train"]["deterministic"] = True
    seen = []
    loss = task.loss

    def spy(model, b):
        seen.append((torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.enabled,
                     torch.backends.cudnn.rnn.fp32_precision, torch.backends.cuda.matmul.fp32_precision,
                     os.environ.get("CUBLAS_WORKSPACE_CONFIG")))
        return loss(model, b)

    monkeypatch.setattr(task, "loss", spy)
    before = (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.enabled,
              torch.backends.cudnn.rnn.fp32_precision)
    _train(task, tables["train"], params, tmp_path / "x")
    assert set(seen) == {(True, False, "ieee", "ieee", ":4096:8")}
    assert (torch.are_deterministic_algorithms_enabled(), torch.backends.cudnn.enabled,
            torch.backends.cudnn.rnn.fp32_precision) == before


def test_config_accepts_the_determinism_switch(tmp_path):
    import yaml

    from attnlearn.config import load_config
    from test_workflow import REPO, TINY

    config = yaml.safe_load(TINY.read_text())
    config["datasets"]["tiny_mt"]["train"]["deterministic"] = True
    out = load_config(config, REPO / "config" / "schema.yaml")
    assert out["datasets"]["tiny_mt"]["train"]["deterministic"] is True
    assert "deterministic" not in out["datasets"]["tiny_cls"]["train"]  # absent: no rerun of existing runs


# -- TF32 as a stated switch, on any torch from the floor up -----------------------------------------

def _switches():
    b = torch.backends
    return (b.cuda.matmul.fp32_precision, b.cudnn.conv.fp32_precision, b.cudnn.rnn.fp32_precision)


def test_tf32_switch_sets_every_backend_and_restores_it():
    before = _switches()
    with D.float32_precision(True):
        assert _switches() == ("tf32",) * 3
        assert D.precision_in_effect().startswith("TF32")
        with D.float32_precision(False):
            assert _switches() == ("ieee",) * 3
            assert D.precision_in_effect().startswith("full float32")
        assert _switches() == ("tf32",) * 3
    assert _switches() == before


@pytest.fixture
def torch_2_2(monkeypatch):
    """torch.backends as torch 2.2 has them: allow_tf32 flags, no fp32_precision (2.9)."""
    cudnn = SimpleNamespace(enabled=True, deterministic=False, benchmark=False, allow_tf32=True)
    matmul = SimpleNamespace(allow_tf32=False)
    monkeypatch.setattr(torch.backends, "cudnn", cudnn)
    monkeypatch.setattr(torch.backends.cuda, "matmul", matmul)
    return cudnn, matmul


def test_tf32_switch_and_exact_work_on_the_torch_floor(torch_2_2):
    cudnn, matmul = torch_2_2
    assert D.precision_in_effect().startswith("mixed: TF32 in cuDNN convolutions, cuDNN LSTMs")  # torch's default
    with D.float32_precision(True):
        assert (cudnn.allow_tf32, matmul.allow_tf32) == (True, True)
        assert D.precision_in_effect().startswith("TF32")
    with D.exact():
        assert (cudnn.allow_tf32, matmul.allow_tf32, cudnn.enabled) == (False, False, False)
        assert D.precision_in_effect().startswith("full float32")
    assert (cudnn.allow_tf32, matmul.allow_tf32, cudnn.enabled) == (True, False, True)


@pytest.mark.parametrize("train, training, expected", [
    ({}, True, ("ieee", False)),  # absent: full float32, torch's own kernels choice
    ({"tf32": True}, True, ("tf32", False)),
    ({"tf32": True, "deterministic": True}, True, ("ieee", True)),
    ({"tf32": True, "deterministic": True}, False, ("ieee", False)),  # a probe: the precision only
])
def test_run_precision_follows_the_train_settings_and_is_logged_off_the_cpu(train, training, expected, capsys):
    with D.run_precision(train, "cpu", training):
        assert (torch.backends.cudnn.rnn.fp32_precision, torch.are_deterministic_algorithms_enabled()) == expected
    assert capsys.readouterr().err == ""  # a CPU job: nothing to say
    with D.run_precision(train, torch.device("cuda", 0), training):
        pass
    err = capsys.readouterr().err
    assert err.startswith("float32 precision on cuda:0: " + ("TF32" if expected[0] == "tf32" else "full float32"))
    assert ("deterministic kernels" in err) == expected[1]


def test_training_runs_in_the_configured_precision(mt_data, tmp_path, monkeypatch):
    task, tables = mt_data
    seen = []
    loss = task.loss
    monkeypatch.setattr(task, "loss", lambda model, b, **kw: seen.append(torch.backends.cudnn.rnn.fp32_precision)
                        or loss(model, b, **kw))
    for tf32 in (True, False):
        params = run_params("translation", steps=2)
        params["train"]["tf32"] = tf32
        seen.clear()
        _train(task, tables["train"], params, tmp_path / str(tf32))
        assert set(seen) == {"tf32" if tf32 else "ieee"}


def test_config_accepts_the_tf32_switch():
    import yaml

    from attnlearn.config import load_config
    from test_workflow import REPO, TINY

    config = yaml.safe_load(TINY.read_text())
    config["datasets"]["tiny_mt"]["train"]["tf32"] = True
    out = load_config(config, REPO / "config" / "schema.yaml")
    assert out["datasets"]["tiny_mt"]["train"]["tf32"] is True
    assert "tf32" not in out["datasets"]["tiny_cls"]["train"]  # absent: no rerun of existing runs


# -- item 8: one GPU per job ---------------------------------------------------------------------------

def test_each_job_takes_its_own_gpu(tmp_path, monkeypatch):
    monkeypatch.setattr(D, "_HELD", {})
    assert D.pick_gpu(["a"], env={}, lock_dir=tmp_path) == 0  # SLURM: the job's own GPU, numbered 0
    assert D.pick_gpu(["a", "b", "c"], env={"LOCAL_RANK": "2"}, lock_dir=tmp_path) == 2
    with pytest.raises(RuntimeError, match="LOCAL_RANK=3"):
        D.pick_gpu(["a", "b"], env={"LOCAL_RANK": "3"}, lock_dir=tmp_path)
    import fcntl

    other = open(tmp_path / "a.lock", "w")  # another job holds GPU a
    fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
    assert D.pick_gpu(["a", "b", "c"], env={}, lock_dir=tmp_path) == 1
    assert D.pick_gpu(["a", "b", "c"], env={}, lock_dir=tmp_path) == 1  # a process keeps its GPU
    monkeypatch.setattr(D, "_HELD", {})  # a third job: a and b are held
    assert D.pick_gpu(["a", "b", "c"], env={}, lock_dir=tmp_path) == 2


def test_jobs_sharing_gpus_spread_evenly_and_a_finished_jobs_slot_is_reused(tmp_path, monkeypatch):
    """With the `gpu` resource above the GPU count, jobs share GPUs: each goes to the GPU the
    fewest running jobs use (lock files held until the job's process exits)."""
    held = []
    for _ in range(5):  # five jobs on two GPUs, each a process of its own
        monkeypatch.setattr(D, "_HELD", {})
        held.append((D.pick_gpu(["a", "b"], env={}, lock_dir=tmp_path), D._HELD))
    assert [i for i, _ in held] == [0, 1, 0, 1, 0]
    for f in held[1][1].values():  # the second job (on GPU b) ends: its lock is released
        f.close()
    monkeypatch.setattr(D, "_HELD", {})
    assert D.pick_gpu(["a", "b"], env={}, lock_dir=tmp_path) == 1  # b runs one job, a three
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.1.lock", "a.2.lock", "a.lock", "b.1.lock", "b.lock"]

def test_resolve_device_names_the_gpu_it_picked(monkeypatch):
    picked = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: SimpleNamespace(uuid=f"gpu{i}"))
    monkeypatch.setattr(torch.cuda, "set_device", picked.append)
    monkeypatch.setenv("LOCAL_RANK", "1")
    assert D.resolve_device("cuda") == torch.device("cuda", 1) and picked == [1]
    assert D.resolve_device("auto") == torch.device("cuda", 1)


# -- items 4 and 5: memory bounds ------------------------------------------------------------------------

@pytest.mark.parametrize("arch", ["lstm", "mh", "tf"])
def test_grad_builds_bounded_logits_with_the_same_numbers(arch, mt_data):
    """The batch was copied once per target step: [T*B, T, V] logits (31 GB at T = 175,
    V = 8,000). Chunks of target steps keep each pass near probe.chunk_elems logits: on a CPU
    one forward pass of [B, T, V], one backward pass to the output layer's input, and one
    vectorised backward pass per chunk of steps from there (steps x [B, T, D], D < V)."""
    task, tables = mt_data
    model = _models(task)[arch]
    b = task.batch(tables["valid"], np.arange(8))
    B, T_ = b["tgt_out"].shape
    sizes, backward = [], []
    hook = model.out.register_forward_hook(lambda m, i, o: sizes.append(o.numel()))
    with torch.no_grad():
        out = task.run(model, b)
    whole = MEASURES["grad"](Probe(task, model, chunk_elems=T_ * B * T_ * task.vocab_size), b, out)
    sizes.clear()
    bound = 2 * B * T_ * task.vocab_size  # two target steps per pass
    grad = torch.autograd.grad

    def recorded(outputs, inputs, grad_outputs=None, **kw):
        backward.append(grad_outputs.shape if grad_outputs is not None else None)
        return grad(outputs, inputs, grad_outputs, **kw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(torch.autograd, "grad", recorded)
        chunked = MEASURES["grad"](Probe(task, model, chunk_elems=bound), b, out)
    hook.remove()
    assert T_ > 2 and sizes == [B * T_ * task.vocab_size]  # one forward pass
    assert backward[0] is None  # to the output layer's input, once
    steps = [shape[0] for shape in backward[1:]]
    assert max(steps) <= 2 and len(steps) == -(-T_ // 2)
    assert all(shape[1:] == (B, T_, model.out.in_features) for shape in backward[1:])
    assert torch.allclose(chunked, whole, atol=1e-6, rtol=1e-5)


def test_probe_host_memory_does_not_grow_with_the_checkpoints(mt_data, tmp_path):
    task, tables = mt_data
    model = _models(task)["lstm"]
    ckpt = tmp_path / "step.pt"
    torch.save(model.state_dict(), ckpt)
    valid = pd.concat([tables["valid"]] * 5, ignore_index=True)  # rows of a checkpoint: ~350 kB traced

    def peak(n):
        tracemalloc.start()
        _probe(task, model, valid, [(i, ckpt) for i in range(n)], ["alpha", "xi"], tmp_path / f"{n}.parquet")
        size = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return size

    peak(1)  # warm-up: imports, caches
    two, twelve = peak(2), peak(12)
    assert twelve < 1.5 * two, (two, twelve)
    table = pq.read_table(tmp_path / "12.parquet")
    assert table.num_rows == 6 * pq.read_table(tmp_path / "2.parquet").num_rows
    assert pq.ParquetFile(tmp_path / "12.parquet").num_row_groups == 12  # one per checkpoint
    assert pa.types.is_large_list(table.schema.field("xi").type)  # int64 offsets: no overflow at 2^31 numbers


# -- item 9: speed on a GPU ------------------------------------------------------------------------------

def test_lstm_saliency_keeps_the_cudnn_kernel_and_eval_numbers(mt_data):
    """cuDNN computes an RNN's backward in training mode only; the saliency ran the slow native
    kernel instead. Now the LSTMs run in training mode with dropout 0 (= eval numbers)."""
    task, tables = mt_data
    model = _models(task)["lstm"]
    b = task.batch(tables["valid"], np.arange(6))
    seen = []
    hooks = [m.register_forward_pre_hook(lambda m, i: seen.append((m.training, m.dropout)))
             for m in (model.encoder, model.decoder)]
    with torch.no_grad():
        out = task.run(model, b)
    seen.clear()
    grad = MEASURES["grad"](Probe(task, model), b, out)
    for h in hooks:
        h.remove()
    assert seen and set(seen) == {(True, 0.0)}
    assert not model.encoder.training and model.encoder.dropout == 0.2  # restored
    # eval-mode reference (the CPU computes an eval-mode backward)
    B, T_ = b["tgt_out"].shape
    scale = torch.ones(b["src"].shape, requires_grad=True)
    logp = torch.log_softmax(task.run(model, b, scale=scale)["logits"], -1)
    t, ex = 2, 1
    ref = torch.autograd.grad(logp[ex, t, b["tgt_out"][ex, t]], scale)[0][ex]
    assert torch.allclose(grad[ex, t], ref, atol=1e-6)


def test_transformer_beam_search_encodes_the_source_once(mt_data):
    task, tables = mt_data
    model = _models(task)["tf"]
    b = task.batch(tables["valid"], np.arange(6))
    calls = []
    hook = model.enc_layers[0].register_forward_hook(lambda *a: calls.append(1))
    hyps = beam_search(model, b["src"], b["src_len"], beam=3, max_len=8)
    hook.remove()
    assert len(calls) == 1

    class Reencoding:  # the former decoding: the whole model over source and prefix at every step
        def start(self, src, src_len):
            return {"src": src, "prefix": src.new_empty(len(src), 0)}

        def step(self, tokens, state):
            prefix = torch.cat([state["prefix"], tokens[:, None]], dim=1)
            logits = model(state["src"], None, prefix, None)["logits"][:, -1]
            return torch.log_softmax(logits, -1), {**state, "prefix": prefix}

    assert hyps == beam_search(Reencoding(), b["src"], b["src_len"], beam=3, max_len=8)


def test_batches_keep_lengths_on_the_host(mt_data, cls_data):
    """Packing reads lengths on the CPU: lengths sent to the GPU came back at every forward pass."""
    for task, tables in (mt_data, cls_data):
        b = task.batch(tables["valid"], np.arange(4), "meta")
        lengths = [v for k, v in b.items() if k.endswith("len")]
        others = [v for k, v in b.items() if not k.endswith("len")]
        assert lengths and all(v.device.type == "cpu" for v in lengths)
        assert all(v.device.type == "meta" for v in others)
