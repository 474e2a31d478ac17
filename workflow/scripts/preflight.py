"""Rule preflight: the check to run first on a cluster (docs/slurm.md).

One small job on a compute node, sent where the GPU jobs go. It checks that the job sees a
GPU and that this torch build computes on it (runtime/gpu_check.py: fails within seconds,
naming the fix), then times a few training steps and a probe batch of every dataset at the
config's sizes and writes the time each GPU job will need beside its time limit in the profile
and the config's jobs added up (reporting/config_cost.py, priced by attnlearn.cost), and what it
measured in the format of the GPU rates table (src/attnlearn/cost/gpu_rates.tsv), for a person
to append where it ran on a GPU.
"""

import datetime
from pathlib import Path

from attnlearn.cost.rates import rate_rows, write_rates
from attnlearn.reporting.config_cost import measure, preflight_report
from attnlearn.runtime.commit import checkout_commit
from attnlearn.runtime.device import resolve_device
from attnlearn.runtime.gpu_check import PreflightError, check_gpu, device_name


def preflight(p, out: Path, rates: Path) -> str:
    found = check_gpu(p["device"])
    print(found, flush=True)
    device = resolve_device(p["device"])
    measured = []
    for dataset, d in p["datasets"].items():
        measured.append(measure(dataset, d, Path(p["data_dir"]), device, p["steps"], p["probe_examples"]))
        print(f"{dataset}: {measured[-1]['s_per_step']:.4f} s/step", flush=True)
    text = preflight_report(found, measured, p["limits"], device, p["jobs"])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    source = f"snakemake -f preflight --configfile {' '.join(p['configfiles'])} --config device={p['device']}"
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    # the checkout's short commit; ATTNLEARN_COMMIT where set (a copy of the tree whose git
    # metadata is absent or stale, as on a lent GPU machine)
    write_rates(rate_rows(measured, device_name(device), checkout_commit(p["repo"]), today, source), rates)
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
