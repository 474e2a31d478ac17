"""Rule examples: a dataset's examples page (attnlearn.reporting.examples, rendered by examples_html) and
its count-table figure (attnlearn.reporting.count_figures), from the probe tables the pipeline made."""

import json

import numpy as np
import pandas as pd

from attnlearn.agreement.compare import best_step
from attnlearn.agreement.metric import read_probe
from attnlearn.reporting.count_figures import count_figure
from attnlearn.reporting.examples import Probes, chosen_steps, page_data, sample_examples, uniform_peak, views
from attnlearn.reporting.examples_html import page_html
from attnlearn.runtime.io import atomic_path
from attnlearn.runtime.jobs import run
from attnlearn.agreement.words import token_names


def steps_of(perf_path):
    return sorted(set(pd.read_parquet(perf_path, columns=["step"])["step"].astype(int)))


def main(job):
    p, d = job.params, job.wildcards.dataset
    names = token_names(json.loads(open(job.input.tokenizer).read()))
    valid = pd.read_parquet(job.input.valid)
    star = best_step(pd.read_parquet(job.input.standard_perf))
    shown = views(steps_of(job.input.standard_perf), steps_of(job.input.uniform_perf), star,
                  uniform_peak(pd.read_parquet(job.input.agreement), star), p.steps)
    count_steps = chosen_steps(steps_of(job.input.uniform_perf), p.count_steps)
    probes = Probes({"A": read_probe(job.input.standard, ["alpha", "grad"], {v["a_step"] for v in shown}),
                     "U": read_probe(job.input.uniform, ["xi"], {v["u_step"] for v in shown} | set(count_steps)),
                     "P": read_probe(job.input.proxy, ["xi_px"])})
    sample = sample_examples(np.unique(probes.tables["U"]["example"].to_numpy()), p.sample, p.seed)
    data = page_data(d, p.task, names, valid, probes, shown, sample, p.words)
    with atomic_path(job.output.page) as tmp:
        tmp.write_text(page_html(data))
    with atomic_path(job.output.counts, suffix=".png") as tmp:
        count_figure(d, p.task, pd.read_parquet(job.input.counts), names, valid,
                     lambda s: probes.measure("xi", "U", s), probes.measure("xi_px", "P", None), count_steps,
                     p.pairs, tmp)


run(main, globals().get("snakemake"))
