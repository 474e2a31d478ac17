# Agreement (src/attnlearn/agreement/): each dataset's comparisons of the probe tables
# (rules/probe.smk, rules/train.smk's proxy and ibm1), the replicates of Table 2 and what
# each replicate reads, and the training-split variant of the comparisons.


rule agreement:
    input:
        unpack(agreement_inputs),
    output:
        agreement=AGREEMENT,
        perf=AGREEMENT_PERF,
        replicates=AGREEMENT_REPLICATES,
        replicates_kendall=AGREEMENT_REPLICATES_KENDALL,
    params:
        runs=lambda w: variant_runs(w.dataset, *ROLE_VARIANTS),
        proxies=lambda w: proxy_names(w.dataset),
        design=lambda w: table2_design(w.dataset),
        bootstrap={k: config["tables"][k] for k in ("bootstrap", "bootstrap_seed")},
    log:
        "results/logs/agreement/{dataset}.log",
    benchmark:
        "results/benchmarks/agreement/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/agreement.py"


# Per replicate, what A(alpha*, xi^uf) reads (alpha*'s entropy and first words, xi^uf's, A's
# best step): tables correlates them with the column over the replicates
rule readings:
    input:
        alpha=lambda w: [probe_table(w.dataset, r["a_run"]) for r in table2_design(w.dataset)],
        perf=lambda w: [probe_table(w.dataset, r["a_run"], perf=True) for r in table2_design(w.dataset)],
        xi=lambda w: [probe_table(w.dataset, r["u_run"]) for r in table2_design(w.dataset)],
        replicates=AGREEMENT_REPLICATES,
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("readings.py"),
    output:
        readings=AGREEMENT_READINGS,
    params:
        design=lambda w: table2_design(w.dataset),
        task=lambda w: config["datasets"][w.dataset]["task"],
    log:
        "results/logs/readings/{dataset}.log",
    benchmark:
        "results/benchmarks/readings/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/readings.py"


# The appendix's training-split variant (config tables.train_split): the comparisons of the
# probe tables of training examples (rules/probe.smk's probe_train and proxy_probe_train).
use rule agreement as agreement_train with:
    input:
        unpack(lambda w: agreement_inputs(w, split="train")),
    output:
        agreement="results/train_split/agreement/{dataset}.parquet",
        perf="results/train_split/agreement/{dataset}.perf.parquet",
        replicates_train=AGREEMENT_REPLICATES_TRAIN,
    log:
        "results/logs/agreement_train/{dataset}.log",
    benchmark:
        "results/benchmarks/agreement_train/{dataset}.tsv"
