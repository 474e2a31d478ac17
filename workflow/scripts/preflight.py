"""Rule preflight: the check to run first on a cluster (docs/slurm.md).

One small job on a compute node, sent where the GPU jobs go. It checks that the job sees a
GPU and that this torch build computes on it (fails within seconds, naming the fix), then
times a few training steps and a probe batch of every dataset at the config's sizes and
writes the time each GPU job will need beside its time limit in the profile, the config's
jobs added up (reporting/config_cost.py), and what it measured in the format of the GPU rates
table (benchmarks/gpu_rates.tsv), for a person to append where it ran on a GPU.
"""

import ctypes
import datetime
import math
import os
import warnings
from pathlib import Path

import torch

from attnlearn.probing import cost
from attnlearn.probing.cost import fake_examples  # noqa: F401  (the examples it times: tests/test_preflight.py)
from attnlearn.probing.rates import write_rates
from attnlearn.reporting.config_cost import PROBES, dataset_cost, sizes, totals, vocab_size
from attnlearn.reporting.config_cost import split_sizes  # noqa: F401  (tests/test_preflight.py)
from attnlearn.runtime.commit import checkout_commit
from attnlearn.runtime.device import resolve_device

WHEELS = "https://download.pytorch.org/whl"
WHEEL_CUDAS = [(11, 8), (12, 1), (12, 4), (12, 6), (12, 8), (12, 9), (13, 0)]  # torch's wheel indexes, oldest first
TIGHT = 0.7  # an estimate above this share of its limit is flagged: real lengths vary
SECTION = "What the paper costs on a GPU"  # docs/benchmarks.md's section that records the rows it writes


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

def measure(dataset: str, d: dict, data_dir: Path, device, steps: int, probe_examples: int) -> dict:
    """Per-step and per-example times of one dataset (probing/cost.py), and the job sizes they multiply."""
    size, vocab = sizes(data_dir, dataset, d), vocab_size(data_dir, dataset, d)
    per_step, per_example, share = cost.time_dataset(d, size["lens"], vocab, device, steps, probe_examples)
    return {"dataset": dataset, **size, "vocab": vocab, "s_per_step": per_step, "s_per_example": per_example,
            "best_share": share, "probe": d["probe"], "train": d["train"], "entry": d}


def job_minutes(m: dict) -> dict[str, float | None]:
    """Minutes of one run's train job and one probe / probe_train job of the dataset (None: the
    training set's size is unknown until the data are tokenized)."""
    if m["steps"] is None:
        return {"train": None, "probe": None, "probe_train": None}
    seconds = cost.job_seconds(m["train"], m["probe"], m["s_per_step"], m["s_per_example"], m["steps"], m["n_valid"],
                               m["best_share"])
    return {rule: seconds[rule] / 60 for rule in ("train", "probe", "probe_train")}


def measured_cost(m: dict, jobs: dict) -> dict:
    """The dataset's planned jobs at the measured times, each job alone on this device: a stack
    of K runs takes K runs' time (its members in turn on a CPU; on a GPU its batched model is
    faster, so an upper bound there)."""
    minutes = job_minutes(m)
    if minutes["train"] is None:
        return dataset_cost(m["dataset"], jobs)
    train = [(k * minutes["train"] / 60,) * 2 for k in jobs["train"]]
    return dataset_cost(m["dataset"], jobs, train, {rule: (minutes[rule] / 60,) * 2 for rule in PROBES})


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


def report(found: str, measured: list[dict], limits: dict[str, float | None], device, jobs: dict) -> str:
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
    kind = "GPU" if device.type == "cuda" else "CPU"
    costs = [measured_cost(m, jobs[m["dataset"]]) for m in measured]
    lines += ["", totals(costs, f"{kind}-hours on this machine's {kind}"), "",
              "Estimates: one job each, at the config's model and batch sizes with random tokens; a stack of K runs "
              "(train.stack) K runs' time. Probes decode to the length limit (an untrained model): an upper bound."]
    return "\n".join(lines) + "\n"


# -- what it measured, as rows of the GPU rates table ---------------------------------------------

def commit(repo, env=os.environ) -> str:
    """The checkout's short commit; ATTNLEARN_COMMIT where set (a copy of the tree whose git
    metadata is absent or stale, as on a lent GPU machine)."""
    return checkout_commit(repo, env)


def rate_rows(measured: list[dict], device: str, commit: str, date: str, source: str) -> list[dict]:
    """One row per dataset and stage in the format of benchmarks/gpu_rates.tsv (probing/rates.py):
    a job alone on ``device``, a training's seconds per step and a probe's seconds per example
    and checkpoint, at the dataset's sizes."""
    rows = []
    for m in measured:
        d, model = m["entry"], m["entry"]["model"]
        dims = " ".join(f"{k[0].upper()}={model[k]}" for k in ("embed", "hidden", "layers") if k in model)
        note = f"the preflight's timing: random tokens at the lengths of {m['lengths']}"
        at_best = (f"; every measure at the checkpoint, of which probe.at_best's took {m['best_share']:.0%}"
                   if m["best_share"] else "")
        common = {"task": d["task"], "arch": model.get("arch", "lstm"), "device": device, "jobs_sharing": 1,
                  "stack": 1, "model": f"V={m['vocab']} {dims}", "positions": f"{m['positions']:g}", "count": "",
                  "dataset": m["dataset"], "commit": commit, "date": date, "section": SECTION, "source": source}
        rows.append({**common, "id": f"preflight-{m['dataset']}-train-{date}", "stage": "train", "bleu": "-",
                     "batch": d["train"]["batch_size"], "value": f"{m['s_per_step']:.6g}", "unit": "s/step",
                     "note": note})
        bleu = bool(d["probe"].get("bleu"))
        rows.append({**common, "id": f"preflight-{m['dataset']}-probe-{date}", "stage": "probe",
                     "bleu": "yes" if bleu else "no", "batch": d["probe"]["batch_size"],
                     "value": f"{m['s_per_example']:.6g}", "unit": "s/example",
                     "note": note + at_best
                     + ("; an untrained model decodes to the length limit: an upper bound" if bleu else "")})
    return rows


def device_name(device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def preflight(p, out: Path, rates: Path) -> str:
    found = check_gpu(p["device"])
    print(found, flush=True)
    device = resolve_device(p["device"])
    measured = []
    for dataset, d in p["datasets"].items():
        measured.append(measure(dataset, d, Path(p["data_dir"]), device, p["steps"], p["probe_examples"]))
        print(f"{dataset}: {measured[-1]['s_per_step']:.4f} s/step", flush=True)
    text = report(found, measured, p["limits"], device, p["jobs"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    source = f"snakemake -f preflight --configfile {' '.join(p['configfiles'])} --config device={p['device']}"
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    write_rates(rate_rows(measured, device_name(device), commit(p["repo"]), today, source), rates)
    return text


def main(job):
    p = job.params
    keys = ("device", "datasets", "jobs", "limits", "data_dir", "steps", "probe_examples", "repo", "configfiles")
    try:
        print(preflight({k: getattr(p, k) for k in keys}, Path(job.output.report), Path(job.output.rates)))
    except PreflightError as e:
        raise SystemExit(f"PREFLIGHT FAILED: {e}") from None


if __name__ == "__main__":
    from attnlearn.runtime.jobs import run

    run(main, globals().get("snakemake"))
