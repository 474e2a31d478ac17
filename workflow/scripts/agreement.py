"""Rule agreement: all comparisons of one dataset -> long-form agreement rows, and Table 2's
comparisons once per replicate (with their example bootstrap) where the rule asks for them."""

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.agreement.metric import Resample
from attnlearn.agreement.compare import Comparator, performance_frame, replicate_frame, without_shared_b
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    runs = job.params.runs
    probes = {r: pq.read_table(path) for r, path in zip(runs, job.input.probes)}
    perf = {r: pd.read_parquet(path) for r, path in zip(runs, job.input.perf)}
    proxies = {p: pq.read_table(path) for p, path in zip(job.params.proxies, job.input.proxies)}
    gold = pq.read_table(job.input.gold) if "gold" in job.input.keys() else None
    ibm1 = pq.read_table(job.input.ibm1) if "ibm1" in job.input.keys() else None
    first_proxy = proxies[job.params.proxies[0]]
    comparator = Comparator(job.wildcards.dataset, probes, perf, first_proxy, gold, ibm1=ibm1)
    write_parquet(comparator.build(), job.output.agreement)
    write_parquet(performance_frame(job.wildcards.dataset, perf), job.output.perf)
    if "replicates" in job.output.keys():
        write_parquet(replicates(job, {**probes, **proxies}, perf), job.output.replicates)
    if "replicates_train" in job.output.keys():  # the training split's, per replicate: no example bootstrap
        write_parquet(replicate_frame(job.wildcards.dataset, {**probes, **proxies}, perf, job.params.design),
                      job.output.replicates_train)
    if "replicates_kendall" in job.output.keys():  # the appendix's Kendall's tau, every replicate
        write_parquet(replicate_frame(job.wildcards.dataset, {**probes, **proxies}, perf,
                                      without_shared_b(job.params.design), metrics=("kendall_tau",)),
                      job.output.replicates_kendall)


def replicates(job, probes, perf) -> pd.DataFrame:
    """Table 2's comparisons per replicate; every run is resampled over the same examples."""
    boot = job.params.bootstrap
    resample = None
    if boot["bootstrap"]:
        examples = probes[job.params.design[0]["a_run"]]["example"].to_numpy()
        resample = Resample.draw(examples, boot["bootstrap"], boot["bootstrap_seed"])
    return replicate_frame(job.wildcards.dataset, probes, perf, job.params.design, resample)


run(main, globals().get("snakemake"))
