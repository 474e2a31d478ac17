# Probing every checkpoint of a run, then all comparisons of a dataset.


rule probe:
    input:
        checkpoints=CHECKPOINTS,
        log=TRAIN_LOG,
        examples=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("probe.py"),
    output:
        probe=probe_table("{dataset}", "{run}"),
        perf=probe_table("{dataset}", "{run}", perf=True),
    params:
        run=run_params,
        probe=run_probe_params,
        # each probed checkpoint, kept until the outputs are in place: a killed job's rerun
        # probes only the others (not an output, so Snakemake keeps it when the job fails)
        work_dir="results/probes/{dataset}/{run}.partial",
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/probe/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/probe/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/probe.py"


rule agreement:
    input:
        unpack(agreement_inputs),
    output:
        agreement=AGREEMENT,
        perf=AGREEMENT_PERF,
        replicates=AGREEMENT_REPLICATES,
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
# best step): tables correlates them with the column over the replicates (issue 49)
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


# The appendix's training-split variant (config tables.train_split): the same
# checkpoints and proxy probed on training examples; alpha* and the performance
# curves stay those of the validation split. The rules are probe and agreement on
# other files (a `use rule` replaces the whole input, so that is restated).
use rule probe as probe_train with:
    input:
        checkpoints=CHECKPOINTS,
        log=TRAIN_LOG,
        examples=tokenized("train"),
        tokenizer=TOKENIZER,
        code=script_code("probe.py"),
    output:
        probe=probe_table("{dataset}", "{run}", split="train"),
        perf=probe_table("{dataset}", "{run}", perf=True, split="train"),
    params:
        probe=lambda w: {**run_probe_params(w), "bleu": False},
        work_dir="results/train_split/probes/{dataset}/{run}.partial",
    log:
        "results/logs/probe_train/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/probe_train/{dataset}/{run}.tsv"


use rule agreement as agreement_train with:
    input:
        unpack(lambda w: agreement_inputs(w, split="train")),
    output:
        agreement="results/train_split/agreement/{dataset}.parquet",
        perf="results/train_split/agreement/{dataset}.perf.parquet",
    log:
        "results/logs/agreement_train/{dataset}.log",
    benchmark:
        "results/benchmarks/agreement_train/{dataset}.tsv"


# Each trained proxy (xi^px, one per proxy seed) and the count table probed on training
# examples: no training.
rule proxy_probe_train:
    input:
        model="results/proxy/{dataset}/s{pseed}/model.pt",
        log="results/proxy/{dataset}/s{pseed}/log.parquet",
        examples=tokenized("train"),
        tokenizer=TOKENIZER,
        counts=COUNTS,
        code=script_code("proxy_probe.py"),
    output:
        probe=probe_table("{dataset}", "proxy-s{pseed}", split="train"),
    params:
        task=lambda w: ds(w)["task"],
        proxy=proxy_params,
        probe=proxy_probe_params,
        device=config["device"],
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/proxy_probe_train/{dataset}/s{pseed}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/proxy_probe.py"
