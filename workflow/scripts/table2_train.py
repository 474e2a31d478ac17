"""Rule table2_train: the appendix's Table 2 on the training split, where alpha*'s step and the
performance columns come from training-example accuracy, as the appendix defines them."""

from attnlearn.agreement import replicates as R
from attnlearn.agreement import tables as T
from attnlearn.runtime.io import read_parquets, write_parquet
from attnlearn.runtime.jobs import run


def main(job):
    perf = read_parquets(job.input.perf)
    table = T.table2(read_parquets(job.input.agreement), perf, job.params.tasks, xi_b_runs=job.params.xi_b_runs)
    write_parquet(table, job.output.table2_train)
    # once per replicate, as table2_replicates (its own runs, alpha* at its A's best training accuracy)
    write_parquet(R.replicate_table(read_parquets(job.input.replicates), perf, job.params.tasks,
                                    job.params.designs), job.output.table2_train_replicates)


run(main, globals().get("snakemake"))
