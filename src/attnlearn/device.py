"""Which device a job computes on, and the switches that make GPU training exact.

``resolve_device`` turns the config's ``device`` into one torch device in the
job's own process (never on the machine that runs Snakemake): ``auto`` is the
GPU when this process sees one. On a node with several GPUs each job takes its
own (see ``pick_gpu``). ``exact`` sets what makes GPU numbers reproducible
(docs/slurm.md, "What is exact on a GPU").
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
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


def pick_gpu(uuids: list[str], env=os.environ, lock_dir: Path | None = None) -> int:
    """Index of the GPU this process uses among the visible ones (``uuids``, in index order).

    LOCAL_RANK (set by launchers such as torchrun) wins. One visible GPU: that one (SLURM
    sets CUDA_VISIBLE_DEVICES to a job's own GPUs, which torch then numbers from 0). Several
    (a local run with --resources gpu=N on an N-GPU machine): the first one no other process
    of this user holds, by a lock file per GPU that the process keeps until it exits; where
    all are held (more GPU jobs than GPUs), the first, shared. A process keeps its choice.
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
    for i, uuid in enumerate(uuids):
        f = open(lock_dir / f"{uuid}.lock", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            continue
        _HELD[uuid] = f
        return i
    log.warning("all %d GPUs are held by other jobs: sharing GPU 0", len(uuids))
    return 0


_TF32_KNOBS = (torch.backends.cuda.matmul, torch.backends.cudnn.conv, torch.backends.cudnn.rnn)


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
             [k.fp32_precision for k in _TF32_KNOBS], os.environ.get("CUBLAS_WORKSPACE_CONFIG"))
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # cuBLAS is deterministic only with this
    torch.use_deterministic_algorithms(True)
    cudnn.enabled, cudnn.deterministic, cudnn.benchmark = False, True, False
    for k in _TF32_KNOBS:
        k.fp32_precision = "ieee"
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(saved[0])
        cudnn.enabled, cudnn.deterministic, cudnn.benchmark = saved[1:4]
        for k, v in zip(_TF32_KNOBS, saved[4]):
            k.fp32_precision = v
        if saved[5] is None:
            os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
