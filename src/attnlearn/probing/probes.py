"""Measures over source positions, computed for every checkpoint of a run (those of probe.at_best
at its best checkpoints alone: the tables read them nowhere else).

Each measure is one function registered in ``MEASURES``: it takes the probe
context (task, model, settings), a batch and the model's forward output and
returns a tensor [B, T, S] (classification has T = 1). Adding a measure is one function here
and its name in the config's ``probe.measures`` list.

The tables' format (one row per checkpoint step, example and target step t, each
measure a list column over the source positions) is data/probe_table.py's; probing/rows.py
turns a batch's measures into its rows.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from torch.nn.functional import logsigmoid
from tqdm.auto import tqdm

from attnlearn.data.probe_table import probe_schema
from attnlearn.models.decode import beam_search, corpus_bleu
from attnlearn.models.sites import attention_sites, gold_token_logprobs, layer_norm_weights
from attnlearn.probing.best import best_steps
from attnlearn.probing.measures import AT_BEST, MEASURE_NAMES, split_at_best
from attnlearn.probing.rows import RowAccumulator, row_mask
from attnlearn.runtime.faults import fault
from attnlearn.runtime.io import atomic_path

MEASURES: dict[str, Callable] = {}


@dataclass
class Probe:
    """What a measure may use besides the batch: the task adapter, the model, settings."""

    task: object
    model: torch.nn.Module
    chunk_elems: int = 1 << 24
    optimal: dict | None = None  # the solver's settings (probe.optimal)


def measure(name: str):
    assert name in MEASURE_NAMES, f"add {name!r} to probing/measures.py's MEASURE_NAMES"

    def register(fn):
        MEASURES[name] = fn
        return fn
    return register


def _signed(b):
    return (2 * b["label"] - 1).unsqueeze(-1)


@measure("alpha")
def attention(p: Probe, b, out):
    a = out["alpha"]
    return a if a.dim() == 3 else a.unsqueeze(1)


@measure("xi")
def lexical_probe(p: Probe, b, out):
    """Translation: log p(y_t | attend only to s); classification: beta_l (2y - 1)."""
    if p.task.name == "translation":
        return p.model.lexical_logprobs(out["enc"], out["dec"], b["tgt_out"], p.chunk_elems, b["src"] != 0)
    return (out["beta"] * _signed(b)).unsqueeze(1)


@measure("grad")
def gradient_saliency(p: Probe, b, out):
    """d log p(gold) / d scale_s, the scale multiplying each source embedding (= grad x embedding)."""
    task, model = p.task, p.model
    with _rnn_backward_ready(model), torch.enable_grad():
        if task.name == "classification":
            scale = torch.ones(b["ids"].shape, device=b["ids"].device, requires_grad=True)
            logit = task.run(model, b, scale=scale)["logit"]
            logp = logsigmoid(logit * _signed(b).squeeze(-1))
            return torch.autograd.grad(logp.sum(), scale)[0].unsqueeze(1)
        # one backward pass per target step t, each differentiating log p(y_t), in chunks of about
        # chunk_elems logits (steps x B x T x V: a GPU's batch copies), bounding memory; a CPU's
        # passes, cut at the output layer's input, carry steps x B x T x D within that bound
        B, T = b["tgt_out"].shape
        per_chunk = max(1, p.chunk_elems // max(1, B * T * task.vocab_size))
        chunks = [(t0, min(t0 + per_chunk, T)) for t0 in range(0, T, per_chunk)]
        if b["src"].device.type == "cpu":
            return _saliency_batched(task, model, b, chunks)
        return torch.cat([_saliency_steps(task, model, b, t0, t1) for t0, t1 in chunks], dim=1)



def _saliency_batched(task, model, b, chunks) -> torch.Tensor:
    """Gradient saliency [B, T, S] from one forward pass: each chunk's steps are backward passes
    vectorised over their cotangents (is_grads_batched). On a CPU this skips the repeated
    forward passes of _saliency_steps (a quarter of a translation probe's time).

    log p(y_t) depends on the output layer's input x at step t alone (the layer is position-wise),
    so one backward pass gives every d log p(y_t) / d x_t, and the per-step passes start from x:
    none of them goes back through the V-wide output layer (most of their cost at V = 8,000)."""
    scale = torch.ones(b["src"].shape, device=b["src"].device, requires_grad=True)
    with _output_input(model) as x:
        logp = gold_token_logprobs(task.run(model, b, scale=scale)["logits"], b["tgt_out"])  # [B, T]
    d_x = torch.autograd.grad(logp.sum(), x["leaf"])[0]  # [B, T, D]: row t is d log p(y_t) / d x_t
    grads = []
    for t0, t1 in chunks:
        steps = torch.arange(t0, t1, device=logp.device)
        cotangent = torch.zeros(t1 - t0, *d_x.shape, dtype=d_x.dtype, device=d_x.device)
        cotangent[steps - t0, :, steps] = d_x[:, steps].transpose(0, 1)
        grads.append(torch.autograd.grad(x["input"], scale, cotangent, retain_graph=t1 < logp.shape[1],
                                         is_grads_batched=True)[0])
    return torch.cat(grads).transpose(0, 1)


@contextlib.contextmanager
def _output_input(model):
    """Cut the graph at the output layer's input (``model.out``, position-wise in every
    translation model): yields {"input": x as computed, "leaf": a detached copy the logits are
    computed from}."""
    cut = {}

    def hook(_, args):
        if cut:
            raise RuntimeError("the output layer ran twice in one forward pass: saliency cannot be cut there")
        cut["input"], cut["leaf"] = args[0], args[0].detach().requires_grad_()
        return (cut["leaf"], *args[1:])

    handle = model.out.register_forward_pre_hook(hook)
    try:
        yield cut
    finally:
        handle.remove()


def _saliency_steps(task, model, b, t0: int, t1: int) -> torch.Tensor:
    """Gradient saliency of target steps t0 .. t1 - 1: [B, t1 - t0, S]."""
    B, T = b["tgt_out"].shape
    n = t1 - t0
    rep = {k: v.repeat(n, *[1] * (v.dim() - 1)) for k, v in b.items()}
    scale = torch.ones(rep["src"].shape, device=b["src"].device, requires_grad=True)
    logp = gold_token_logprobs(task.run(model, rep, scale=scale)["logits"], rep["tgt_out"]).view(n, B, T)
    steps = torch.arange(t0, t1, device=logp.device)
    picked = logp[steps - t0, :, steps]  # [n, B], 0 at pads
    grad = torch.autograd.grad(picked.sum(), scale)[0]
    return grad.view(n, B, -1).transpose(0, 1)


@measure("optimal")
def optimal_attention(p: Probe, b, out):
    """Each target word's loss-minimising attention (appendix A.1): additive runs only."""
    from attnlearn.probing.optimal import optimal_rows

    if p.task.name != "translation":
        raise ValueError("probe measure 'optimal' is defined for translation only")
    return optimal_rows(p.model, out["enc"], out["dec"], b["tgt_out"], b["src"] != 0, p.chunk_elems,
                        **(p.optimal or {}))


@measure("norm")
def norm_based(p: Probe, b, out):
    """Norm-based attention (docs/methods.md 9): ||alpha_ts f(x_s)||. LSTM translation: f = W_p e_s
    (K heads: ||sum_k alpha^k_ts f^k(e_s)||);
    Transformer: the last cross-attention layer, ||sum_h alpha^h_ts f^h(x_s)||; classification:
    f(h_l) = beta_l, the scalar each position adds to the logit."""
    if p.task.name == "classification":
        return (out["alpha"].abs() * out["beta"].abs()).unsqueeze(1)
    site = attention_sites(p.model, b, out, ("cross",))[-1]
    return layer_norm_weights(site.alpha, site.values, p.chunk_elems)


@contextlib.contextmanager
def _rnn_backward_ready(model):
    """cuDNN computes an RNN's backward in training mode only: the model's RNNs run in training
    mode with dropout 0, which computes what eval mode does, so saliency keeps the cuDNN kernel
    (the native one is much slower). Restored afterwards."""
    rnns = [m for m in model.modules() if isinstance(m, torch.nn.RNNBase)]
    saved = [(m.training, m.dropout) for m in rnns]
    for m in rnns:
        m.dropout = 0.0
        m.train()
    try:
        yield
    finally:
        for m, (training, dropout) in zip(rnns, saved):
            m.dropout = dropout
            m.train(training)


def probe_checkpoints(task, model, table: pd.DataFrame, checkpoints, measures: list[str], batch_size: int,
                      device, out, chunk_elems: int = 1 << 24, progress: bool = True, bleu: dict | None = None,
                      work_dir=None, key: str = "", optimal: dict | None = None, at_best=AT_BEST):
    """Probe every (step, path) checkpoint into the probe table at ``out`` (Parquet, one row group
    per checkpoint; the caller makes it atomic). Returns the performance frame.

    The measures of ``at_best`` (probe.at_best: by default g and the norm-based weights, which
    the tables read at alpha*'s checkpoint alone) are computed only at the run's best checkpoint
    by each performance metric (probing/best.py), once every checkpoint's performance is known,
    and are null at the others; every other measure at every checkpoint.

    ``bleu`` (translation): {"beam", "max_len", "detok": ids -> text, and optionally "rank"
    (decode.RANKS; default "sum") and "texts" (the examples' target texts, row for row: the
    references; default: the target ids detokenised)} adds a BLEU row per checkpoint: corpus
    BLEU of beam-search translations of the same examples.

    Each checkpoint's rows and performance go to ``work_dir`` as soon as it is probed (one file,
    written atomically and durably), and so do the best checkpoints' ``at_best`` rows, so a job
    killed midway and rerun probes only the rest, ending with the table of an uninterrupted run
    (the best checkpoints follow from the kept performance records). Files there of another
    ``key`` (the job's settings and inputs: ``train.fingerprint``) are discarded. The caller
    removes ``work_dir`` once its outputs are in place; without one, a temporary folder beside
    ``out`` is used. ``optimal``: the settings of measure 'optimal' (probe.optimal).
    """
    unknown = sorted(set(measures) - set(MEASURES))
    if unknown:
        raise ValueError(f"unknown probe measure(s) {unknown}; known: {sorted(MEASURES)}")
    every, late = split_at_best(measures, at_best)
    if not every:
        raise ValueError(f"probe measures {list(measures)} are all in probe.at_best {list(at_best)}: the "
                         "checkpoints' rows come from a measure computed at every checkpoint (alpha)")
    if work_dir is None:
        with tempfile.TemporaryDirectory(dir=Path(out).parent, prefix=".probe-") as tmp:
            return probe_checkpoints(task, model, table, checkpoints, measures, batch_size, device, out, chunk_elems,
                                     progress, bleu, tmp, key, optimal, at_best)
    work = Path(work_dir)
    done = kept_checkpoints(work, key)
    todo = [(step, path) for step, path in checkpoints if (EVERY, step) not in done]
    if done:
        print(f"{len(checkpoints) - len(todo)} of {len(checkpoints)} checkpoints probed by an earlier attempt "
              f"({work}); probing the other {len(todo)}", file=sys.stderr, flush=True)
    probe = Probe(task, model, chunk_elems, optimal)
    order = by_length(task, table)  # batches of similar lengths: little padding
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    decode = bleu if bleu and task.name == "translation" else None
    refs = bleu_references(table, order, decode) if decode else None
    spent = {"probe": 0.0, "bleu": 0.0}  # seconds, for the log: what BLEU adds to a probe
    for step, path in tqdm(todo, disable=not progress, desc="checkpoints", mininterval=5):
        start = time.perf_counter()
        _load(model, path)
        rows, perf = _probe_one(probe, table, batches, every, step, device, decode, refs, spent)
        _keep(work, step, rows, perf, key)
        spent["probe"] += time.perf_counter() - start
        fault("probe", step)
    if decode and todo:
        print(f"{BLEU_TIME} {spent['bleu']:.1f} s of {spent['probe']:.1f} s probing {len(todo)} checkpoints",
              file=sys.stderr, flush=True)
    steps = [step for step, _ in checkpoints]
    perf = _kept_perf(work, steps)
    best = best_steps(perf) if late and len(perf) else []
    for step, path in checkpoints:
        if step in best and (BEST, step) not in done:
            _load(model, path)
            rows, _ = _probe_one(probe, table, batches, late, step, device, None, None)
            _keep(work, step, rows, [], key, BEST)
            fault("probe_best", step)
    _assemble(work, steps, measures, set(best), out)
    return perf


def bleu_settings(probe: dict, detok: Callable, texts=None) -> dict:
    """probe_checkpoints' ``bleu`` from a run's probe settings (probe.beam, probe.max_decode_len,
    probe.beam_rank) and, for probe.bleu_references: text, the examples' target ``texts``."""
    against_text = probe.get("bleu_references", "text") == "text"
    if against_text and texts is None:
        raise ValueError("probe.bleu_references: text needs the probed examples' target texts")
    return {"beam": probe["beam"], "max_len": probe["max_decode_len"], "rank": probe.get("beam_rank", "sum"),
            "detok": detok, "texts": texts if against_text else None}


def bleu_references(table: pd.DataFrame, order, decode: dict) -> list[str]:
    """What BLEU scores the translations against, in probing order: the examples' target text
    where ``decode`` has it (probe.bleu_references: text, as the authors' code scores), else
    their target ids detokenised (an out-of-vocabulary word is then <unk> on both sides)."""
    texts = decode.get("texts")
    if texts is None:
        return [decode["detok"](list(table["tgt_ids"].iloc[i][1:-1])) for i in order]
    if len(texts) != len(table):
        raise ValueError(f"BLEU references: {len(texts)} target texts for {len(table)} probed examples "
                         "(the prepared split and its tokenized table must hold the same rows)")
    return [texts[i] for i in order]


def _load(model, path) -> None:
    # read on the host: load_state_dict copies it into the model's parameters on their device
    # (no second copy of the weights on the GPU)
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))


# the probe log's line that says what beam search and BLEU took (benchmarks/stage_times.py reads it)
BLEU_TIME = "beam search and BLEU:"


def _probe_one(probe: Probe, table, batches, measures, step: int, device, decode, refs, spent=None):
    """(rows, performance records) of the loaded checkpoint ``step``; the seconds of beam search
    and BLEU are added to ``spent["bleu"]``."""
    spent = {"bleu": 0.0} if spent is None else spent
    task, model = probe.task, probe.model
    model.eval()
    acc, hits, total, hyps = RowAccumulator(), 0, 0, []
    for idx in batches:
        b = task.batch(table, idx, device)
        with torch.no_grad():  # grad turns autograd on for itself alone
            fwd = task.run(model, b)
            h, n = task.correct(fwd, b)
            hits, total = hits + h, total + n
            values = {m: MEASURES[m](probe, b, fwd) for m in measures}
        acc.add(step, idx, values, *row_mask(task, b))
        if decode:
            start = time.perf_counter()
            hyps += beam_search(model, b["src"], b["src_len"], decode["beam"], decode["max_len"],
                                decode.get("rank", "sum"))
            spent["bleu"] += time.perf_counter() - start
    perf = [{"step": step, "metric": task.perf_metric, "value": hits / total}]
    if decode:
        start = time.perf_counter()
        perf.append({"step": step, "metric": "bleu", "value": corpus_bleu([decode["detok"](h) for h in hyps], refs)})
        spent["bleu"] += time.perf_counter() - start
    return (acc.table() if acc.parts else probe_schema(measures).empty_table()), perf


# -- a probe job's work folder: one file per probed checkpoint, its rows with its performance
# records and the job's fingerprint in the Parquet metadata, and one per best checkpoint with
# its at_best measures' rows ------------------------------------------------------------------

_META = b"attnlearn.probe"
EVERY, BEST = "", ".best"  # a kept file's part: every checkpoint's measures, or the best ones' at_best measures
KEYS = ["step", "example", "t", "n"]


def _kept_path(work: Path, step: int, part: str = EVERY) -> Path:
    return work / f"step{step:08d}{part}.parquet"


def kept_checkpoints(work: Path, key: str) -> set[tuple[str, int]]:
    """(part, step) of the files an earlier attempt of the same job (same ``key``) kept in
    ``work``; everything else there (another key's files, unfinished writes) is removed."""
    work.mkdir(parents=True, exist_ok=True)
    done = set()
    for path in sorted(work.iterdir()):
        meta = _kept_meta(path) if path.name.startswith("step") and path.suffix == ".parquet" else None
        if (meta is not None and meta["key"] == key and meta.get("part") in (EVERY, BEST)
                and path == _kept_path(work, meta["step"], meta["part"])):
            done.add((meta["part"], meta["step"]))
        elif path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
    return done


def _kept_meta(path: Path) -> dict | None:
    try:
        return json.loads(pq.read_schema(path).metadata[_META])
    except (OSError, KeyError, TypeError, ValueError, pa.ArrowException):
        return None


def _keep(work: Path, step: int, rows: pa.Table, perf: list[dict], key: str, part: str = EVERY) -> None:
    """Write one checkpoint's rows and performance, on disk (fsync) before the name appears."""
    meta = {_META: json.dumps({"key": key, "step": step, "part": part, "perf": perf}).encode()}
    with atomic_path(_kept_path(work, step, part), ".parquet") as tmp:
        pq.write_table(rows.replace_schema_metadata(meta), tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())


def _kept_perf(work: Path, steps: list[int]) -> pd.DataFrame:
    """The kept checkpoints' performance records, in ``steps``' order."""
    return pd.DataFrame([r for step in steps for r in _kept_meta(_kept_path(work, step))["perf"]])


def _assemble(work: Path, steps: list[int], measures, best: set[int], out) -> None:
    """The probe table at ``out`` from the kept checkpoints, one row group each, in ``steps``'
    order: each column in ``measures``' order, the at_best measures' from the best checkpoints'
    files and null at the other checkpoints."""
    schema = probe_schema(measures)
    with pq.ParquetWriter(out, schema) as writer:
        for step in steps:
            rows = pq.read_table(_kept_path(work, step)).replace_schema_metadata(None)
            late = pq.read_table(_kept_path(work, step, BEST)) if step in best else None
            if late is not None and not late.select(KEYS).equals(rows.select(KEYS)):
                raise RuntimeError(f"{_kept_path(work, step, BEST)}: its rows are not those of "
                                   f"{_kept_path(work, step)}")
            columns = [rows[f.name] if f.name in rows.column_names else
                       late[f.name] if late is not None else pa.nulls(rows.num_rows, f.type) for f in schema]
            writer.write_table(pa.Table.from_arrays(columns, schema=schema))


def by_length(task, table: pd.DataFrame) -> np.ndarray:
    """Example indices sorted by length (source, then target; stable), so that a batch
    holds sentences of similar lengths. Rows go back to the table's order when written."""
    if task.name == "translation":
        keys = (table["tgt_ids"].map(len).to_numpy(), table["src_ids"].map(len).to_numpy())
    else:
        keys = (table["ids"].map(len).to_numpy(),)
    return np.lexsort(keys)
