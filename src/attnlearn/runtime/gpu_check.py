"""Is there a GPU, and can this torch build compute on it? The preflight's first check (rule
preflight, docs/slurm.md): it fails within seconds where the GPU jobs would, naming the fix (the
partition or profile setting that gives a job a GPU, the torch wheel the node's driver runs).
"""

from __future__ import annotations

import ctypes
import os
import warnings

import torch

WHEELS = "https://download.pytorch.org/whl"
WHEEL_CUDAS = [(11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0)]  # torch's wheel indexes, oldest first


class PreflightError(RuntimeError):
    """A failed check; its message names the fix."""


# -- is there a GPU, and can this torch use it? ---------------------------------------------------

def driver_cuda_version() -> tuple[int, int] | None:
    """The newest CUDA version the node's NVIDIA driver supports (libcuda's cuDriverGetVersion),
    or None where no driver is installed."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    version = ctypes.c_int()
    if libcuda.cuDriverGetVersion(ctypes.byref(version)) != 0:
        return None
    return version.value // 1000, version.value % 1000 // 10


def slurm_gpus(env=os.environ) -> str | None:
    """The GPUs SLURM gave this job (None: none, or not a SLURM job)."""
    ids = env.get("SLURM_JOB_GPUS") or env.get("SLURM_STEP_GPUS")  # GPU indexes, "0" the first
    count = env.get("SLURM_GPUS_ON_NODE")
    return ids or (count if count and count != "0" else None)


def where_job_ran(env=os.environ) -> str:
    """The SLURM partition and node, and the GPUs SLURM gave the job, for the messages."""
    if "SLURM_JOB_ID" not in env:
        return "this machine (not a SLURM job)"
    gpus = slurm_gpus(env) or "none"
    return (f"partition {env.get('SLURM_JOB_PARTITION', '?')} on node {env.get('SLURMD_NODENAME', '?')}, "
            f"GPUs given by SLURM: {gpus}, CUDA_VISIBLE_DEVICES={env.get('CUDA_VISIBLE_DEVICES')!r}")


def cuda_wheel(driver: tuple[int, int]) -> str | None:
    """The index of torch's newest wheels that the driver runs (CUDA no newer than it)."""
    fitting = [v for v in WHEEL_CUDAS if v <= driver]
    return f"{WHEELS}/cu{fitting[-1][0]}{fitting[-1][1]}" if fitting else None


def install_hint() -> str:
    """How to install a torch that this node's driver runs."""
    driver = driver_cuda_version()
    wheel = cuda_wheel(driver) if driver else None
    if wheel is None:
        return f"pip install torch --index-url {WHEELS}/cuXYZ, XYZ a CUDA version the node's driver supports"
    return f"pip install torch --index-url {wheel} (the driver supports CUDA {driver[0]}.{driver[1]})"


def torch_cuda() -> tuple[int, int]:
    major, minor = torch.version.cuda.split(".")[:2]
    return int(major), int(minor)


def why_no_cuda(env=os.environ) -> str:
    """The reason torch sees no usable GPU, with the fix."""
    driver = driver_cuda_version()
    built = torch_cuda()
    given_none = "SLURM_JOB_ID" in env and slurm_gpus(env) is None
    if driver is None or given_none or env.get("CUDA_VISIBLE_DEVICES") in ("", "-1", "NoDevFiles"):
        return (f"no GPU visible to the job ({where_job_ran(env)}). Send the GPU jobs to a partition with "
                "GPUs (slurm_partition in &gpu_job, profiles/slurm/config.yaml) and run with --config "
                "device=cuda, so that they ask for one (sbatch --gpus=1; or gres: \"gpu:1\", docs/slurm.md)")
    if driver < built:
        wheel = cuda_wheel(driver)
        install = (f"install a torch build for it (pip install torch --index-url {wheel}, a version listed "
                   f"there)" if wheel else "no current torch wheel supports it")
        return (f"torch {torch.__version__} was built for CUDA {built[0]}.{built[1]}, the node's driver "
                f"supports CUDA {driver[0]}.{driver[1]} at most: {install}, or ask the cluster's admins for a "
                f"newer NVIDIA driver")
    return (f"CUDA is not usable although the driver (CUDA {driver[0]}.{driver[1]}) and torch's build "
            f"(CUDA {built[0]}.{built[1]}) match, on {where_job_ran(env)}; see torch's warning above")


def check_gpu(device: str, env=os.environ) -> str:
    """Checks that a job of this config can compute where it runs; returns what it found.
    Raises PreflightError naming the fix."""
    if device == "cpu":
        return f"device cpu: no GPU needed (torch {torch.__version__}, {torch.get_num_threads()} threads)"
    if torch.version.cuda is None:
        return _fail_or_cpu(device, f"torch {torch.__version__} is a CPU-only build: install a CUDA build: "
                                    f"{install_hint()}")
    with warnings.catch_warnings(record=True) as caught:  # torch warns why (old driver, ...)
        warnings.simplefilter("always")
        usable = torch.cuda.is_available() and torch.cuda.device_count() > 0
    if not usable:
        said = "".join(f"\n  torch: {w.message}" for w in caught)
        return _fail_or_cpu(device, why_no_cuda(env) + said)
    return _check_kernels()


def _fail_or_cpu(device: str, why: str) -> str:
    if device == "auto":  # the jobs will fall back to the CPU too: say so, do not fail
        return f"device auto: the jobs will run on the CPU here, because {why}"
    raise PreflightError(why)


def _check_kernels() -> str:
    """The GPU's architecture is in the build, and a matrix product and cuDNN's LSTM run."""
    name = torch.cuda.get_device_name(0)
    major, minor = torch.cuda.get_device_capability(0)
    arches = torch.cuda.get_arch_list()
    if arches and f"sm_{major}{minor}" not in arches and not any(
            a.startswith("compute_") and int(a[8:]) <= major * 10 + minor for a in arches):
        raise PreflightError(f"torch {torch.__version__} has no kernels for {name} (sm_{major}{minor}; the build "
                             f"has {' '.join(arches)}): install a torch build for CUDA "
                             f"{torch.version.cuda} or newer that lists sm_{major}{minor}")
    try:
        x = torch.randn(64, 64, device="cuda")
        lstm = torch.nn.LSTM(64, 64, batch_first=True).cuda()
        (x @ x).sum().item()
        lstm(x[None])[0].sum().item()
    except Exception as e:  # RuntimeError from CUDA, AssertionError from a build without it
        raise PreflightError(f"a CUDA kernel failed on {name} ({where_job_ran()}): {e}. Reinstall torch for "
                             f"the node's driver: {install_hint()}") from e
    driver = driver_cuda_version()
    return (f"GPU {name} (sm_{major}{minor}), torch {torch.__version__} for CUDA {torch.version.cuda}, driver "
            f"up to CUDA {'.'.join(map(str, driver)) if driver else '?'}; {where_job_ran()}")


def device_name(device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"
