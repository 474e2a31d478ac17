# The related analyses of attention (docs/analyses.md, docs/methods.md 9-12) on the same
# trained runs: per translation dataset (run A), per dataset with TanhMax runs, then
# the collected tables and figures.


rule norms:
    input:
        unpack(run_a_inputs),
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("attention_analysis.py"),
    output:
        norms="results/analyses/{dataset}/norms.parquet",
        alignment="results/analyses/{dataset}/alignment_error.parquet",
    params:
        **analysis_rule_params("norms"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/norms/{dataset}.log",
    benchmark:
        "results/benchmarks/analyses/norms/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule effective_attention:
    input:
        unpack(run_a_inputs),
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("attention_analysis.py"),
    output:
        effective="results/analyses/{dataset}/effective_attention.parquet",
    params:
        **analysis_rule_params("effective"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/effective/{dataset}.log",
    benchmark:
        "results/benchmarks/analyses/effective/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule head_roles:
    input:
        unpack(run_a_inputs),
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("attention_analysis.py"),
    output:
        roles="results/analyses/{dataset}/head_roles.parquet",
    params:
        **analysis_rule_params("head_roles"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/head_roles/{dataset}.log",
    benchmark:
        "results/benchmarks/analyses/head_roles/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule tanhmax:
    input:
        probes=lambda w: [f"results/probes/{w.dataset}/{r}.parquet" for r in runs(w.dataset)],
        perf=lambda w: [f"results/probes/{w.dataset}/{r}.perf.parquet" for r in runs(w.dataset)],
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("tanhmax.py"),
    output:
        table="results/analyses/{dataset}/tanhmax.parquet",
    params:
        runs=lambda w: runs(w.dataset),
        source=lambda w: ds(w)["source"],
    log:
        "results/logs/analyses/tanhmax/{dataset}.log",
    benchmark:
        "results/benchmarks/analyses/tanhmax/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/tanhmax.py"


rule analysis_tables:
    input:
        norms=expand("results/analyses/{dataset}/norms.parquet", dataset=TRANSLATION),
        alignment_error=expand("results/analyses/{dataset}/alignment_error.parquet", dataset=TRANSLATION),
        effective_attention=expand("results/analyses/{dataset}/effective_attention.parquet", dataset=TRANSLATION),
        head_roles=expand("results/analyses/{dataset}/head_roles.parquet", dataset=TRANSLATION),
        tanhmax=expand("results/analyses/{dataset}/tanhmax.parquet", dataset=WITH_TANHMAX),
        code=script_code("analysis_tables.py"),
    output:
        norms="results/tables/norms.parquet",
        alignment_error="results/tables/alignment_error.parquet",
        effective_attention="results/tables/effective_attention.parquet",
        tanhmax="results/tables/tanhmax.parquet",
        head_roles="results/tables/head_roles.parquet",
        markdown="results/tables/analyses.md",
        alignment_figure=report(
            "results/figures/analyses/alignment_error.png",
            category="Attention analyses",
            caption="../report/alignment_error.rst",
        ),
        roles_figure=report(
            "results/figures/analyses/head_roles.png",
            category="Attention analyses",
            caption="../report/head_roles.rst",
        ),
    params:
        aer=config["analyses"]["aer"],
    log:
        "results/logs/analyses/tables.log",
    benchmark:
        "results/benchmarks/analyses/tables.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/analysis_tables.py"
