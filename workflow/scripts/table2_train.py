"""Rule table2_train: the appendix's Table 2 on the training split, where alpha*'s step and the
performance columns come from training-example accuracy, as the appendix defines them."""

from attnlearn.agreement import tables as T
from attnlearn.runtime.io import read_parquets, write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    table = T.table2(read_parquets(job.input.agreement), read_parquets(job.input.perf), job.params.tasks,
                     xi_b_runs=job.params.xi_b_runs)
    write_parquet(table, job.output.table2_train)


run(main, globals().get("snakemake"))
