"""Rule tables: the long agreement and performance tables, Table 2 and the gold table."""

import pandas as pd

from attnlearn import tables as T
from attnlearn.io import atomic_path, write_parquet
from attnlearn.jobs import run


def main(job):
    agr = pd.concat([pd.read_parquet(p) for p in job.input.agreement], ignore_index=True)
    perf = pd.concat([pd.read_parquet(p) for p in job.input.perf], ignore_index=True)
    tables = {"Table 2": T.table2(agr, perf, job.params.tasks),
              "Table 2 with Kendall's tau (appendix)": T.table2(agr, perf, job.params.tasks, "kendall_tau"),
              "Table 10: frozen attention vs the uniform probe": T.table10(agr, perf),
              "Agreement with gold alignments (synthetic data)": T.gold_table(agr, perf),
              "IBM Model 1 (EM) alignments vs alpha* and xi^uf": T.ibm1_table(agr, perf)}
    write_parquet(agr, job.output.agreement)
    write_parquet(perf, job.output.performance)
    for key, (title, table) in zip(("table2", "table2_kendall", "table10", "gold", "ibm1"), tables.items()):
        write_parquet(table, job.output[key])
    with atomic_path(job.output.table2_tsv) as tmp:
        tables["Table 2"].to_csv(tmp, sep="\t", index=False, float_format="%.4f")
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text("# Tables (values in percent)\n\n" + T.markdown_report(tables))


run(main, globals().get("snakemake"))
