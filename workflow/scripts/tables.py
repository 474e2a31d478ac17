"""Rule tables: the long agreement and performance tables, Table 2, its replicates with
intervals and the paper's claims tested over them, its appendix variants (Kendall's tau,
BLEU, training split), Tables 10 (also per replicate with a frozen run) and 11 (also per
replicate), the spread over seeds and the gold table."""

import sys

import pandas as pd

from attnlearn.agreement import replicates as R
from attnlearn.agreement import tables as T
from attnlearn.agreement import readable
from attnlearn.agreement import readings as W
from attnlearn.agreement.claims import claims_table
from attnlearn.runtime.io import atomic_path, read_parquets, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.agreement.learned import learning_table, not_learned_lines, not_learned_summary, resting_on, trivial_accuracy
from attnlearn.runtime.at_end import say_at_end
from attnlearn.agreement.paper import paper_comparison


# why a table of tables.md can be empty, by its key
EMPTY = {
    "table2_variance": "the replicates are not a crossed grid (`tables: {design: factorial}`, with at least two "
                       "standard and two uniform runs and two proxy seeds, fills it; `crossed` without the proxy's "
                       "share; docs/methods.md 5.1)",
    "table2_bleu": "no translation dataset of this config computes BLEU (`probe.bleu`)",
    "table10": "no dataset of this config has a frozen run (`runs.frozen`)",
    "table10_replicates": "no replicate has a frozen run of its own (`runs.frozen`: the r-th frozen seed is "
                          "replicate r's; `paper_row.py --parts FIRST-LAST --variants frozen` gives each replicate of "
                          "a block one)",
    "table11": "no classification dataset in this config",
    "table11_replicates": "no classification dataset in this config",
    "gold": "no dataset of this config has gold alignments (the generated ones do)",
    "ibm1": "IBM Model 1 is not run (`experiments.ibm1`, on a translation dataset)",
    "paper": "the paper reports none of this config's datasets",
    "readings_tests": "no dataset has three or more independent replicates",
    "readings_modes": "no dataset has four or more independent replicates",
}


def probed_examples(job) -> dict[str, pd.DataFrame]:
    """Each dataset's probed validation examples: the probes read the first max_examples."""
    return {d: pd.read_parquet(path).iloc[:job.params.max_examples[d]]
            for d, path in zip(job.params.tasks, job.input.examples)}


def readings_tables(readings: pd.DataFrame, reps: pd.DataFrame) -> dict:
    """What each replicate's A(alpha*, xi^uf) reads, whether the column follows a reading, and
    whether its values are one mode or two (attnlearn.agreement.readings)."""
    return {
        "readings": ("What each replicate's A(alpha*, xi^uf) reads: A's best step and performance, alpha*'s "
                     "entropy and first words, xi^uf's first words", readings),
        "readings_tests": ("Does A(alpha*, xi^uf) follow a reading? Pearson's r over the replicates with its 95% "
                           "interval, p and Holm's p over the dataset's readings", W.readings_tests(readings)),
        "readings_modes": ("A(alpha*, xi^uf): one mode or two? A two-normal mixture's likelihood ratio against one "
                           "normal, p from a parametric bootstrap", W.modes_table(reps)),
    }


def learning(perf: pd.DataFrame, trivial: dict[str, float]) -> pd.DataFrame:
    """Each run's best performance beside an input-blind predictor's; a warning per run that
    does not beat it, in the job's log, and one per dataset that the console says again as the
    run ends."""
    table = learning_table(perf, trivial)
    for line in not_learned_lines(table):
        print(f"WARNING: {line}", file=sys.stderr)
    for line in not_learned_summary(table):
        say_at_end(f"WARNING: {line}")
    return table


def main(job):
    agr, perf, tasks = read_parquets(job.input.agreement), read_parquets(job.input.perf), job.params.tasks
    rep_agr = read_parquets(job.input.replicates)  # each replicate's comparisons, with its own roles
    rep_kendall = read_parquets(job.input.replicates_kendall)
    xi_b = {"xi_b_runs": job.params.xi_b_runs}  # the B run of A(alpha*, xi^B); None: their mean
    tables = {  # output key -> (title, table)
        "table2": ("Table 2", T.table2(agr, perf, tasks, **xi_b)),
        "table2_kendall": ("Table 2 with Kendall's tau (appendix)",
                           T.table2(agr, perf, tasks, "kendall_tau", **xi_b)),
        "table2_kendall_replicates": ("Table 2 with Kendall's tau, one row per replicate (appendix)",
                                      R.kendall_replicate_table(rep_kendall, perf, tasks, job.params.designs)),
        "table2_bleu": ("Table 2 with BLEU as the performance (appendix; translation)",
                        T.table2(agr, perf, tasks, perf_metric="bleu", **xi_b)),
        "table10": ("Table 10: frozen attention vs the uniform probe", T.table10(agr, perf)),
        "table10_replicates": ("Table 10, one row per replicate with a frozen run of its own",
                               T.table10_replicates(rep_agr, perf, job.params.designs)),
        "table11": ("Table 11: the uniform probe vs logistic regression (classification)", T.table11(agr)),
        "table11_replicates": ("Table 11, one row per replicate (classification)",
                               T.table11_replicates(rep_agr, job.params.designs)),
        "seeds": ("Mean and spread over seeds", T.seed_spread(agr, perf)),
        "gold": ("Agreement with gold alignments (synthetic data)", T.gold_table(agr, perf)),
        "ibm1": ("IBM Model 1 (EM) alignments vs alpha* and xi^uf", T.ibm1_table(agr, perf)),
    }
    reps = R.replicate_table(rep_agr, perf, tasks, job.params.designs)
    examples = probed_examples(job)
    trivial = {d: trivial_accuracy(tasks[d], ex) for d, ex in examples.items()}
    intervals = R.interval_table(reps, {d: len(ex) for d, ex in examples.items()})
    seeded = {  # shown first: the table to read
        "table2_intervals": ("Table 2 over replicates: mean [95% prediction interval], the paper's value",
                             intervals),
        "claims": ("The paper's claims tested over the replicates", claims_table(reps, job.params.comparable, trivial)),
        "table2_replicates": ("Table 2, one row per replicate", reps),
        "table2_variance": ("Crossed or factorial design: share of variance from the A seed, the U seed, the proxy "
                            "seed and the rest, with 95% intervals, and each role's F test (p_a, p_u, p_p), over "
                            "the roles each column reads",
                            R.variance_table(reps)),
        **readings_tables(read_parquets(job.input.readings), reps),
    }
    learned = learning(perf, trivial)
    if not learned["learned"].all():  # shown before everything else: these rows are noise
        seeded = {"not_learned": ("Runs that did not learn (best performance at or below an input-blind "
                                  "predictor's; their agreements are noise)", learned[~learned["learned"]]),
                  **seeded}
    tables = {**seeded, **tables, "learning": ("Did each run learn? Best performance vs an input-blind "
                                               "predictor (majority class; most frequent target token)", learned)}
    tables["paper"] = ("Our values beside the paper's (Tables 2 and 11)",
                       paper_comparison(tables["table2"][1], tables["table11"][1], tables["table2_bleu"][1]))
    write_parquet(agr, job.output.agreement)
    write_parquet(perf, job.output.performance)
    for key, (_, table) in tables.items():
        if key != "not_learned":  # a view of `learning`, shown in tables.md only
            write_parquet(table, job.output[key])
    if "table2_train" in job.input.keys():  # made by rule table2_train (the appendix's variant)
        tables["table2_train"] = ("Table 2 on the training split (appendix)", pd.read_parquet(job.input.table2_train))
    with atomic_path(job.output.table2_tsv) as tmp:
        tables["table2"][1].to_csv(tmp, sep="\t", index=False, float_format="%.4f")
    shown = dict(tables.values())
    shown[tables["table2_intervals"][0]] = readable.intervals_frame(intervals)
    shown[tables["claims"][0]] = readable.claims_frame(tables["claims"][1])
    shown[tables["readings_tests"][0]] = readable.readings_tests_frame(tables["readings_tests"][1])
    shown[tables["readings_modes"][0]] = readable.modes_frame(tables["readings_modes"][1])
    empty = {tables[key][0]: why for key, why in EMPTY.items() if key in tables}
    with atomic_path(job.output.markdown) as tmp:
        tmp.write_text(readable.document(shown, tables["claims"][1], list(tasks), empty, intervals,
                                         not_learned=resting_on(learned, reps)))


run(main, globals().get("snakemake"))
