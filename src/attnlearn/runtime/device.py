"""Which device a job computes on, and the switches that make GPU training exact.

``resolve_device`` turns the config's ``device`` into one torch device in the
job's own process (never on the machine that runs Snakemake): ``auto`` is the
GPU when this process sees one. On a node with several GPUs each job takes its
own, or the least used one where several jobs share each
GPU (see ``pick_gpu``). ``exact`` sets what makes GPU numbers reproducible
and ``float32_precision`` TF32 on or off (docs/slurm.md, "What is exact on a GPU").
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import sys
import tempfile
from pathlib import Path

import torch

log = logging.getLogger(__name__)

_HELD: dict[str, object] = {}  # the GPU lock this process holds, kept open until it exits


def resolve_device(name: str) -> torch.device:
    """cpu, cuda or auto (cuda where this process sees a GPU, else cpu) -> a torch device;
    cuda is one GPU (``pick_gpu``), made the current one so that torch.cuda calls act on it."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise RuntimeError("device 'cuda' requested in config but CUDA is not available")
        index = pick_gpu([str(torch.cuda.get_device_properties(i).uuid) for i in range(torch.cuda.device_count())])
        torch.cuda.set_device(index)
        return torch.device("cuda", index)
    return torch.device(name)


def sync(device) -> None:
    """Wait for the GPU's queued work (a clock read after it then counts it)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def pick_gpu(uuids: list[str], env=os.environ, lock_dir: Path | None = None) -> int:
    """Index of the GPU this process uses among the visible ones (``uuids``, in index order).

    LOCAL_RANK (set by launchers such as torchrun) wins. One visible GPU: that one (SLURM
    sets CUDA_VISIBLE_DEVICES to a job's own GPUs, which torch then numbers from 0). Several
    (a local run on a machine with several GPUs): the one that the fewest other jobs of this
    user are using, so that GPU jobs spread evenly when the `gpu` resource lets several share
    each GPU (docs/gpu.md). A job holds a slot lock file on its GPU until it exits; a process
    keeps its choice.
    """
    if "LOCAL_RANK" in env:
        rank = int(env["LOCAL_RANK"])
        if not 0 <= rank < len(uuids):
            raise RuntimeError(f"LOCAL_RANK={rank} but this process sees {len(uuids)} GPU(s) "
                               f"(CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES')!r})")
        return rank
    if len(uuids) == 1:
        return 0
    for i, uuid in enumerate(uuids):
        if uuid in _HELD:
            return i
    lock_dir = Path(lock_dir or Path(tempfile.gettempdir()) / f"attnlearn-gpus-{os.getuid()}")
    lock_dir.mkdir(parents=True, exist_ok=True)
    load = [_held_slots(lock_dir, uuid) for uuid in uuids]
    index = min(range(len(uuids)), key=lambda i: (load[i], i))
    _HELD[uuids[index]] = _take_slot(lock_dir, uuids[index])
    if load[index]:
        log.info("GPU %d is shared with %d other job(s) (jobs per GPU: the `gpu` resource)", index, load[index])
    return index


def _try_lock(path: Path):
    """The open, exclusively locked file, or None where another process holds it."""
    f = open(path, "a")
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        f.close()
        return None
    return f


def _held_slots(lock_dir: Path, uuid: str) -> int:
    """How many jobs hold a slot lock on GPU ``uuid`` now (a free lock is taken and let go)."""
    held = 0
    for path in lock_dir.glob(f"{uuid}.*lock"):
        f = _try_lock(path)
        if f is None:
            held += 1
        else:
            f.close()
    return held


def _take_slot(lock_dir: Path, uuid: str):
    """Lock the first free slot file of GPU ``uuid`` (``uuid.lock``, ``uuid.1.lock``, ...)."""
    k = 0
    while (f := _try_lock(lock_dir / (f"{uuid}.lock" if k == 0 else f"{uuid}.{k}.lock"))) is None:
        k += 1
    return f


def _tf32_switches() -> list[tuple[object, str, object, object]]:
    """(namespace, attribute, TF32 value, full-float32 value) of each TF32 switch of this torch:
    matrix products, cuDNN convolutions and cuDNN RNNs. torch 2.9 and later set each by
    ``fp32_precision``; older ones (the floor, 2.2) by ``allow_tf32`` (cuDNN's covers both)."""
    b = torch.backends
    try:
        new = [b.cuda.matmul, b.cudnn.conv, b.cudnn.rnn]
        for k in new:
            k.fp32_precision  # noqa: B018 (raises AttributeError before 2.9)
    except AttributeError:
        return [(b.cuda.matmul, "allow_tf32", True, False), (b.cudnn, "allow_tf32", True, False)]
    return [(k, "fp32_precision", "tf32", "ieee") for k in new]


@contextlib.contextmanager
def float32_precision(tf32: bool):
    """While active: float32 matrix products, convolutions and LSTMs on a GPU in TF32 (``tf32``:
    about 3 significant digits per product, faster on Ampere and later) or in full float32.
    torch's own default mixes them (cuDNN in TF32, cuBLAS not); the config states one
    (``train.tf32``, docs/slurm.md). Restored on exit; no effect on a CPU."""
    switches = _tf32_switches()
    saved = [getattr(ns, attr) for ns, attr, _, _ in switches]
    for ns, attr, on, off in switches:
        setattr(ns, attr, on if tf32 else off)
    try:
        yield
    finally:
        for (ns, attr, _, _), value in zip(switches, saved):
            setattr(ns, attr, value)


def precision_in_effect() -> str:
    """Which float32 precision GPU kernels use now, in words (for job logs)."""
    tf32 = {attr_ns: getattr(ns, attr) == on for attr_ns, (ns, attr, on, _) in
            zip(("matrix products", "cuDNN convolutions", "cuDNN LSTMs"), _tf32_switches())}
    if len(_tf32_switches()) == 2:  # older torch: one cuDNN flag for both
        tf32["cuDNN LSTMs"] = tf32["cuDNN convolutions"]
    if all(tf32.values()):
        return "TF32 (train.tf32: true): matrix products, cuDNN convolutions and LSTMs"
    if not any(tf32.values()):
        return "full float32 (IEEE): matrix products, cuDNN convolutions and LSTMs"
    return "mixed: TF32 in " + ", ".join(k for k, v in tf32.items() if v) + "; full float32 elsewhere"


@contextlib.contextmanager
def run_precision(train: dict, device, training: bool = True):
    """A run's GPU numerics from its ``train`` settings, logged where the device is not the CPU.
    ``deterministic`` (training): ``exact``; else TF32 only with ``tf32: true`` (absent = full
    float32). Probing (``training`` False) follows the precision only: full float32 under
    ``deterministic``, without its deterministic kernels or cuDNN off."""
    deterministic, tf32 = bool(train.get("deterministic", False)), bool(train.get("tf32", False))
    with exact() if deterministic and training else float32_precision(tf32 and not deterministic):
        if torch.device(device).type != "cpu":  # the job log (stderr) says what the numbers are
            print(f"float32 precision on {device}: {precision_in_effect()}"
                  + ("; deterministic kernels, cuDNN off" if deterministic and training else ""),
                  file=sys.stderr, flush=True)
        yield


@contextlib.contextmanager
def exact(enabled: bool = True):
    """While active (and ``enabled``): deterministic kernels (an op that has none raises,
    naming itself), cuDNN off (its LSTM draws inter-layer dropout from cuDNN's own RNG
    state, which cannot be saved: the native kernel draws from torch's, which resume.pt
    keeps), and full float32 instead of TF32 in matrix products. Everything is restored
    on exit. No effect on CPU numbers, which are exact either way."""
    if not enabled:
        yield
        return
    cudnn = torch.backends.cudnn
    saved = (torch.are_deterministic_algorithms_enabled(), cudnn.enabled, cudnn.deterministic, cudnn.benchmark,
             os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS is deterministic only with this
    torch.use_deterministic_algorithms(True)
    cudnn.enabled, cudnn.deterministic, cudnn.benchmark = False, True, False
    try:
        with float32_precision(False):
            yield
    finally:
        torch.use_deterministic_algorithms(saved[0])
        cudnn.enabled, cudnn.deterministic, cudnn.benchmark = saved[1:4]
        if saved[4] is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
