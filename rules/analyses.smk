# The related analyses of attention (docs/analyses.md, docs/methods.md 9-12) on the same
# trained runs: per translation dataset and standard run (analyses.seeds), per dataset
# with TanhMax runs, then the collected tables, the summaries across seeds and figures.


rule norms:
    input:
        unpack(analysed_run_inputs),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("attention_analysis.py"),
    output:
        norms="results/analyses/{dataset}/{run}/norms.parquet",
        alignment="results/analyses/{dataset}/{run}/alignment_error.parquet",
    params:
        **analysis_rule_params("norms"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/norms/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/analyses/norms/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule effective_attention:
    input:
        unpack(analysed_run_inputs),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("attention_analysis.py"),
    output:
        effective="results/analyses/{dataset}/{run}/effective_attention.parquet",
    params:
        **analysis_rule_params("effective"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/effective/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/analyses/effective/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule head_roles:
    input:
        unpack(analysed_run_inputs),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("attention_analysis.py"),
    output:
        roles="results/analyses/{dataset}/{run}/head_roles.parquet",
    params:
        **analysis_rule_params("head_roles"),
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/analyses/head_roles/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/analyses/head_roles/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/attention_analysis.py"


rule tanhmax:
    input:
        probes=lambda w: run_probes(w.dataset, *ROLE_VARIANTS),
        perf=lambda w: run_probes(w.dataset, *ROLE_VARIANTS, perf=True),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("tanhmax.py"),
    output:
        table="results/analyses/{dataset}/tanhmax.parquet",
    params:
        runs=lambda w: variant_runs(w.dataset, *ROLE_VARIANTS),
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
        norms=analysis_outputs("norms"),
        alignment_error=analysis_outputs("alignment_error"),
        effective_attention=analysis_outputs("effective_attention"),
        head_roles=analysis_outputs("head_roles"),
        tanhmax=expand("results/analyses/{dataset}/tanhmax.parquet", dataset=WITH_TANHMAX),
        code=script_code("analysis_tables.py"),
    output:
        norms="results/tables/norms.parquet",
        alignment_error="results/tables/alignment_error.parquet",
        effective_attention="results/tables/effective_attention.parquet",
        tanhmax="results/tables/tanhmax.parquet",
        head_roles="results/tables/head_roles.parquet",
        alignment_error_seeds="results/tables/alignment_error_seeds.parquet",
        head_roles_seeds="results/tables/head_roles_seeds.parquet",
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
