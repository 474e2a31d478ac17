"""Rule preflight: the check to run first on a cluster (docs/slurm.md).

One small job on a compute node, sent where the GPU jobs go. It checks that the job sees a
GPU and that this torch build computes on it (fails within seconds, naming the fix), then
times a few training steps and a probe batch of every dataset at the config's sizes and
writes the time each GPU job will need beside its time limit in the profile.
"""

import ctypes
import json
import math
import os
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnlearn.agreement.paper import TABLE9
from attnlearn.config import run_names
from attnlearn.probing import cost
from attnlearn.probing.cost import fake_examples  # noqa: F401  (the examples it times: tests/test_preflight.py)
from attnlearn.runtime.device import resolve_device
from attnlearn.training.train import total_steps

WHEELS = "https://download.pytorch.org/whl"
WHEEL_CUDAS = [(11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0)]  # torch's wheel indexes, oldest first
# Token counts (<s> and </s> included) assumed where a dataset is not tokenized yet: about
# a Multi30k / news sentence in 8,000 SentencePiece pieces, a short review in words.
ASSUMED_LENGTHS = {"translation": (30, 32), "classification": (120,)}
TIGHT = 0.7  # an estimate above this share of its limit is flagged: real lengths vary


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


# -- how long will each job take? ----------------------------------------------------------------

def cut(lens: np.ndarray, d: dict) -> np.ndarray:
    """Token counts as the dataset's tokenizer cuts them (``tokenizer.max_tokens``)."""
    return np.minimum(lens, d["tokenizer"]["max_tokens"]) if d["tokenizer"].get("max_tokens") else lens


def split_sizes(data_dir: Path, dataset: str, d: dict):
    """(training examples, validation examples, token counts [n, 1 or 2], where they come from):
    the tokenized splits where they exist; else a generated source's sizes and longest
    sentence; else the paper's Table 9 sizes at its median lengths; else assumed lengths, the
    config's training size if it sets one, else unknown (None)."""
    folder = Path(data_dir) / dataset
    columns = ["src_ids", "tgt_ids"] if d["task"] == "translation" else ["ids"]
    if (folder / "train.parquet").exists():
        train = pd.read_parquet(folder / "train.parquet", columns=columns)
        lens = cut(np.stack([train[c].map(len).to_numpy() for c in columns], 1), d)
        valid = folder / "valid.parquet"
        n_valid = len(pd.read_parquet(valid, columns=columns[:1])) if valid.exists() else None
        return len(train), n_valid, lens, "tokenized"
    source = d.get("source", {})
    splits, longest = source.get("splits"), source.get("options", {}).get("max_len")
    if splits and longest:  # a generator's words are its tokens
        return splits["train"], splits.get("valid"), np.array([[longest + 2] * len(columns)]), "config"
    paper = TABLE9.get(dataset) or TABLE9.get(source.get("kind"))
    if paper:  # the paper's sizes, each example at the median length (with <s> and </s>)
        return paper["train"], paper["valid"], cut(np.array([[m + 2 for m in paper["median"]]]), d), "paper (Table 9)"
    n_train = source.get("options", {}).get("n_train")  # a split the config sets (SMS spam: 3,500)
    return n_train, None, np.array([ASSUMED_LENGTHS[d["task"]]]), "assumed"


def vocab_size(data_dir: Path, dataset: str, d: dict) -> int:
    tokenizer = Path(data_dir) / dataset / "tokenizer.json"
    if tokenizer.exists():
        return json.loads(tokenizer.read_text())["vocab_size"]
    return d["tokenizer"]["vocab_size"]


def measure(dataset: str, d: dict, data_dir: Path, device, steps: int, probe_examples: int) -> dict:
    """Per-step and per-example times of one dataset (probing/cost.py), and the job sizes they multiply."""
    n_train, n_valid, lens, lengths = split_sizes(data_dir, dataset, d)
    per_step, per_example = cost.time_dataset(d, lens, vocab_size(data_dir, dataset, d), device, steps, probe_examples)
    steps_total = None
    if d["train"].get("steps") or n_train:
        steps_total = total_steps(d["train"], n_train or 0)
    return {"dataset": dataset, "lengths": lengths, "s_per_step": per_step, "s_per_example": per_example,
            "steps": steps_total, "n_valid": n_valid, "probe": d["probe"], "train": d["train"], "entry": d}


def job_minutes(m: dict) -> dict[str, float | None]:
    """Minutes of one train job and one probe / probe_train job of the dataset (None: the
    training set's size is unknown until the data are tokenized)."""
    if m["steps"] is None:
        return {"train": None, "probe": None, "probe_train": None}
    seconds = cost.job_seconds(m["train"], m["probe"], m["s_per_step"], m["s_per_example"], m["steps"], m["n_valid"])
    return {rule: seconds[rule] / 60 for rule in ("train", "probe", "probe_train")}


def verdict(minutes: float | None, limit: float | None, rule: str) -> str:
    if minutes is None:
        return "unknown until the data are tokenized (rerun the preflight after `--until tokenize`)"
    if limit is None:
        return "no limit set"
    if minutes > limit:
        return f"OVER the limit: raise {rule}'s runtime to at least {math.ceil(minutes * 1.5)} in the profile"
    if minutes > TIGHT * limit:
        return f"tight: consider {rule}'s runtime {math.ceil(minutes * 1.5)} in the profile"
    return "ok"


def report(found: str, measured: list[dict], limits: dict[str, float | None], device) -> str:
    lines = [f"# Preflight on {device}", "", found, "",
             "| dataset | lengths | s/step | steps | s/example/checkpoint | rule | estimate (min) | limit (min) "
             "| verdict |", "|---|---|---|---|---|---|---|---|---|"]
    for m in measured:
        for rule, minutes in job_minutes(m).items():
            if rule not in limits:
                continue
            est = "?" if minutes is None else f"{minutes:,.1f}"
            lim = "-" if limits[rule] is None else f"{limits[rule]:g}"
            lines.append(f"| {m['dataset']} | {m['lengths']} | {m['s_per_step']:.4f} | {m['steps'] or '?'} | "
                         f"{m['s_per_example']:.4f} | {rule} | {est} | {lim} | {verdict(minutes, limits[rule], rule)} |")
    lines += ["", totals(measured, limits, device), "",
              "Estimates: one job each, at the config's model and batch sizes with random tokens. "
              "Probes decode to the length limit (an untrained model): an upper bound."]
    return "\n".join(lines) + "\n"


def totals(measured: list[dict], limits: dict, device, at_once=(1, 8, 32)) -> str:
    """The config's trainings and probes added up: one job of each rule per run (run_names),
    in device-hours, and the least wall time with ``at_once`` jobs running side by side (GPUs,
    or GPU slots: docs/slurm.md). Proxies, agreement and tables are left out (minutes)."""
    hours, jobs, unknown = 0.0, 0, []
    for m in measured:
        runs = len(run_names(m["entry"]))
        for rule, minutes in job_minutes(m).items():
            if rule not in limits:
                continue
            if minutes is None:
                unknown.append(m["dataset"])
                continue
            hours += runs * minutes / 60
            jobs += runs
    kind = "GPU" if device.type == "cuda" else "CPU"
    walls = ", ".join(f"{n} at once {hours / n:,.1f} h" for n in at_once)
    line = (f"Total: {jobs} training and probing jobs, {hours:,.1f} {kind}-hours on this machine's {kind}; "
            f"wall time at best {walls}.")
    if unknown:
        line += f" Not counted (sizes unknown until tokenized): {', '.join(sorted(set(unknown)))}."
    return line


def preflight(p, out: Path) -> str:
    found = check_gpu(p["device"])
    print(found, flush=True)
    device = resolve_device(p["device"])
    measured = []
    for dataset, d in p["datasets"].items():
        measured.append(measure(dataset, d, Path(p["data_dir"]), device, p["steps"], p["probe_examples"]))
        print(f"{dataset}: {measured[-1]['s_per_step']:.4f} s/step", flush=True)
    text = report(found, measured, p["limits"], device)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


def main(job):
    p = job.params
    params = {k: getattr(p, k) for k in ("device", "datasets", "limits", "data_dir", "steps", "probe_examples")}
    try:
        print(preflight(params, Path(job.output.report)))
    except PreflightError as e:
        raise SystemExit(f"PREFLIGHT FAILED: {e}") from None


if __name__ == "__main__":
    from attnlearn.runtime.jobs import run

    run(main, globals().get("snakemake"))
