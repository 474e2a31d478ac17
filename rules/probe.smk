# Probing every checkpoint of a run, then all comparisons of a dataset.


rule probe:
    input:
        checkpoints="results/runs/{dataset}/{run}/checkpoints",
        log="results/runs/{dataset}/{run}/train_log.parquet",
        examples="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("probe.py"),
    output:
        probe="results/probes/{dataset}/{run}.parquet",
        perf="results/probes/{dataset}/{run}.perf.parquet",
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
        agreement="results/agreement/{dataset}.parquet",
        perf="results/agreement/{dataset}.perf.parquet",
        replicates="results/agreement/{dataset}.replicates.parquet",
    params:
        runs=lambda w: role_runs(w.dataset),
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


# The appendix's training-split variant (config tables.train_split): the same
# checkpoints and proxy probed on training examples; alpha* and the performance
# curves stay those of the validation split. The rules are probe and agreement on
# other files (a `use rule` replaces the whole input, so that is restated).
use rule probe as probe_train with:
    input:
        checkpoints="results/runs/{dataset}/{run}/checkpoints",
        log="results/runs/{dataset}/{run}/train_log.parquet",
        examples="results/tokenized/{dataset}/train.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("probe.py"),
    output:
        probe="results/train_split/probes/{dataset}/{run}.parquet",
        perf="results/train_split/probes/{dataset}/{run}.perf.parquet",
    params:
        probe=lambda w: {**run_probe_params(w), "bleu": False},
        work_dir="results/train_split/probes/{dataset}/{run}.partial",
    log:
        "results/logs/probe_train/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/probe_train/{dataset}/{run}.tsv"


use rule agreement as agreement_train with:
    input:
        unpack(lambda w: agreement_inputs(w, "results/train_split/probes")),
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
        examples="results/tokenized/{dataset}/train.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        counts="results/counts/{dataset}/counts.parquet",
        code=script_code("proxy_probe.py"),
    output:
        probe="results/train_split/probes/{dataset}/proxy-s{pseed}.parquet",
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
