"""Rule gpu_hours: what the config's GPU jobs cost on a GPU, priced without one (docs/benchmarks.md,
"What the paper costs on a GPU"). Each dataset's training and probing jobs, counted as the
workflow plans them, priced from the measured rates of src/attnlearn/cost/gpu_rates.tsv: each
job at the row nearest it, scaled by its work (attnlearn.cost.rates.pick), with as many jobs
sharing the GPU as the run lets share one. Per dataset, naming the rows that priced it, and in
total (reporting/config_cost.py).
"""

from pathlib import Path

from attnlearn.cost.rates import RatesError, read_rates
from attnlearn.reporting.config_cost import gpu_hours_report


def main(job):
    p = job.params
    params = {k: getattr(p, k) for k in ("datasets", "jobs", "data_dir", "card", "sharing")}
    try:
        text = gpu_hours_report(params, read_rates(job.input.rates), Path(job.input.rates))
    except RatesError as e:
        raise SystemExit(f"GPU RATES: {e}") from None
    Path(job.output.report).parent.mkdir(parents=True, exist_ok=True)
    Path(job.output.report).write_text(text)
    print(text)


if __name__ == "__main__":
    from attnlearn.runtime.jobs import run

    run(main, globals().get("snakemake"))
