"""Rule gpu_hours: what the config's GPU jobs cost on a GPU, priced without one (docs/benchmarks.md,
"What the paper costs on a GPU"). Each dataset's training and probing jobs, counted as the
workflow plans them, priced from the measured rates of benchmarks/gpu_rates.tsv: each job at
the row nearest it, scaled by its work (attnlearn.probing.rates.pick), with as many jobs sharing
the GPU as the run lets share one. Per dataset, naming the rows that priced it, and in total.
"""

from pathlib import Path

from attnlearn.probing.rates import RatesError, read_rates
from attnlearn.reporting.config_cost import priced, sizes, totals

NOT_PRICED = ("Not priced: the proxies (proxy, proxy_probe_train), the attention analyses and the controlled "
              "experiments; where a row says so, BLEU decoding (no GPU rate with it yet). Sizes: the tokenized "
              "data where they exist, else the paper's appendix Table 9 sizes with every example at the median "
              "length (a batch runs to its longest example: more)")


def dataset_line(c: dict, size: dict) -> str:
    if c["hours"] is None:
        return f"| {c['dataset']} | {size['lengths']} | | ? | {c['jobs']['train']} | ? | ? | ? | ? | |"
    probing = c["hours"]["probe"] + c["hours"]["probe_train"]
    return (f"| {c['dataset']} | {size['lengths']} | {size['positions']:g} | {size['steps']:,} | "
            f"{c['jobs']['train']} | {c['hours']['train']:,.2f} | {probing:,.2f} | {c['hours']['train'] + probing:,.2f} "
            f"| {c['chain']:,.2f} | {'; '.join(c['rates'])} |")


def report(p: dict, rates_path: Path) -> str:
    rates = read_rates(rates_path)
    lines = [f"# GPU-hours on one {p['card']}, priced from measured rates", "",
             f"Rates: {rates_path}, the rows measured on the {p['card']} first. {p['sharing']} GPU jobs share a GPU "
             "(the run's `gpu` resource; 1 on a cluster, where each job gets a GPU of its own).", "",
             "| dataset | lengths | positions | steps | train jobs | GPU-h training | GPU-h probing | GPU-h "
             "| longest chain (h) | rates used |", "|---|---|---|---|---|---|---|---|---|---|"]
    costs = []
    for name, d in p["datasets"].items():
        size = sizes(Path(p["data_dir"]), name, d)
        costs.append(priced(name, d, size, p["jobs"][name], rates, p["card"], p["sharing"]))
        lines.append(dataset_line(costs[-1], size))
    unit = (f"GPU-hours on one {p['card']} with {p['sharing']} jobs sharing it" if p["sharing"] > 1
            else f"GPU-hours on {p['card']}s, one job a GPU")
    lines += ["", totals(costs, unit, at_once=(1, 2, 4), devices=p["card"]), "", NOT_PRICED + "."]
    return "\n".join(lines) + "\n"


def main(job):
    p = job.params
    params = {k: getattr(p, k) for k in ("datasets", "jobs", "data_dir", "card", "sharing")}
    try:
        text = report(params, Path(job.input.rates))
    except RatesError as e:
        raise SystemExit(f"GPU RATES: {e}") from None
    Path(job.output.report).parent.mkdir(parents=True, exist_ok=True)
    Path(job.output.report).write_text(text)
    print(text)


if __name__ == "__main__":
    from attnlearn.runtime.jobs import run

    run(main, globals().get("snakemake"))
