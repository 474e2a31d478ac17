"""Rule readings: per replicate of one dataset, what its A(alpha*, xi^uf) reads
(attnlearn.agreement.readings): alpha* at run A's best step, xi^uf at the uniform checkpoint
the column reads, the words each puts first, alpha*'s entropy."""

import json
from functools import lru_cache

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement.compare import best_step, primary
from attnlearn.agreement.metric import probe_measure
from attnlearn.agreement.readings import READING_COLUMNS, central_row, replicate_reading
from attnlearn.agreement.words import id_matrix, source_column, token_names
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


# read once per (probe, measure, step): a crossed or factorial design's replicates share their A and U runs
measure = lru_cache(maxsize=None)(probe_measure)


def main(job):
    names = token_names(json.loads(open(job.input.tokenizer).read()))
    sources = id_matrix(pd.read_parquet(job.input.valid)[source_column(job.params.task)])
    columns = [c for c in pq.read_schema(job.input.replicates).names if c != "boot"]  # not the resamples
    agr = pd.read_parquet(job.input.replicates, columns=columns)
    rows = []
    for rep, alpha, perf, xi in zip(job.params.design, job.input.alpha, job.input.perf, job.input.xi):
        central = central_row(agr[agr["replicate"] == rep["replicate"]])
        a_perf = pd.read_parquet(perf)
        assert int(central["a_step"]) == best_step(a_perf), "alpha*'s step differs from the agreement rule's"
        reading = replicate_reading(names, sources, measure(str(alpha), "alpha", int(central["a_step"])),
                                    measure(str(xi), "xi", int(central["b_step"])), float(primary(a_perf)["value"].max()),
                                    central)
        rows.append({"dataset": job.wildcards.dataset, "replicate": rep["replicate"], "a_run": rep["a_run"],
                     "u_run": rep["u_run"], "independent": rep["independent"], **reading})
    write_parquet(pd.DataFrame(rows, columns=READING_COLUMNS), job.output.readings)


run(main, globals().get("snakemake"))
