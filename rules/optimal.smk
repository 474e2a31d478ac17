# Appendix A.1: the optimal attention of the additive runs (runs.additive) against xi, alpha*
# and the uniform probe (attnlearn.agreement.optimal_attention; docs/experiments.md, "Optimal attention").


rule optimal_attention:
    input:
        additive=lambda w: run_probes(w.dataset, "additive"),
        additive_perf=lambda w: run_probes(w.dataset, "additive", perf=True),
        uniform=lambda w: run_probes(w.dataset, "uniform"),
        uniform_perf=lambda w: run_probes(w.dataset, "uniform", perf=True),
        standard_perf=lambda w: run_probes(w.dataset, "standard", perf=True),
        code=script_code("optimal_attention.py"),
    output:
        rows="results/analyses/{dataset}/optimal_attention.parquet",
        performance="results/analyses/{dataset}/optimal_performance.parquet",
    params:
        additive=lambda w: variant_runs(w.dataset, "additive"),
        uniform=lambda w: variant_runs(w.dataset, "uniform"),
        standard=lambda w: variant_runs(w.dataset, "standard"),
    log:
        "results/logs/optimal_attention/{dataset}.log",
    benchmark:
        "results/benchmarks/optimal_attention/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/optimal_attention.py"


rule optimal_attention_table:
    input:
        rows=expand("results/analyses/{dataset}/optimal_attention.parquet", dataset=WITH_ADDITIVE),
        performance=expand("results/analyses/{dataset}/optimal_performance.parquet", dataset=WITH_ADDITIVE),
        code=script_code("optimal_table.py"),
    output:
        table="results/tables/optimal_attention.parquet",
        markdown="results/tables/optimal_attention.md",
        figure=report(
            "results/figures/optimal_attention.png",
            category="Optimal attention",
            caption="../report/optimal_attention.rst",
        ),
    log:
        "results/logs/optimal_attention/table.log",
    conda:
        ENV
    script:
        "../workflow/scripts/optimal_table.py"
