# Probing every checkpoint of a run, then all comparisons of a dataset.


rule probe:
    input:
        checkpoints="results/runs/{dataset}/{run}/checkpoints",
        log="results/runs/{dataset}/{run}/train_log.parquet",
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=lib("probes.py", "analyses/norms.py", "analyses/sites.py"),
    output:
        probe="results/probes/{dataset}/{run}.parquet",
        perf="results/probes/{dataset}/{run}.perf.parquet",
    params:
        run=run_params,
        probe=lambda w: ds(w)["probe"],
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
    params:
        runs=lambda w: runs(w.dataset),
    log:
        "results/logs/agreement/{dataset}.log",
    benchmark:
        "results/benchmarks/agreement/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/agreement.py"
