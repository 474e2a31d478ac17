# Appendix A.1: the optimal attention of the additive runs (runs.additive) against xi, alpha*
# and the uniform probe (attnlearn.probing.optimal_agreement; docs/experiments.md, "Optimal attention").


rule optimal_attention:
    input:
        additive=lambda w: probe_files(w.dataset, "additive", ".parquet"),
        additive_perf=lambda w: probe_files(w.dataset, "additive", ".perf.parquet"),
        uniform=lambda w: probe_files(w.dataset, "uniform", ".parquet"),
        uniform_perf=lambda w: probe_files(w.dataset, "uniform", ".perf.parquet"),
        standard_perf=lambda w: probe_files(w.dataset, "standard", ".perf.parquet"),
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


use rule tables_page as optimal_attention_page with:
    input:
        markdown="results/tables/optimal_attention.md",
        code=script_code("report_page.py"),
    output:
        page=report("results/report/optimal_attention.html", category="Optimal attention",
                    caption="../report/optimal_attention_page.rst"),
    log:
        "results/logs/report_page/optimal_attention.log",
