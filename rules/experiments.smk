# The paper's controlled experiments (docs/experiments.md): permutation copying and its
# controls, the multi-head rescue, the keyword toy, copy count tables, the check of eq. 15
# (the proxy's derivative at initialisation), and IBM Model 1 on every translation dataset.
# Each subsection of `experiments:` in the config that is present adds its jobs; a config
# without the section runs none.

rule copying:
    input:
        code=script_code("copying.py"),
    output:
        curves="results/experiments/copying/{task}.parquet",
    wildcard_constraints:
        task="|".join(re.escape(t) for t in COPY_TASKS) or "(?!)",
    params:
        spec=lambda w: EXP["copying"]["tasks"][w.task],
        seeds=lambda w: EXP["copying"]["seeds"],
        model=EXP.get("model"),
        train=EXP.get("train"),
        threshold=EXP.get("converge_acc"),
        device=config["device"],
    threads: EXP_THREADS
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/experiments/copying/{task}.log",
    benchmark:
        "results/benchmarks/experiments/copying/{task}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/copying.py"


rule copying_table:
    input:
        curves=expand("results/experiments/copying/{task}.parquet", task=COPY_TASKS),
        code=script_code("copying_table.py"),
    output:
        table="results/tables/copying.parquet",
        summary="results/tables/copying_summary.parquet",
        counts="results/tables/copy_counts.parquet",
        contrast="results/tables/copy_counts_contrast.parquet",
    params:
        tasks=EXP.get("copying", {}).get("tasks"),
        count_samples=EXP.get("copying", {}).get("count_samples"),
    log:
        "results/logs/experiments/copying_table.log",
    benchmark:
        "results/benchmarks/experiments/copying_table.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/copying_table.py"


rule multihead:
    input:
        code=script_code("multihead.py"),
    output:
        table="results/tables/multihead.parquet",
        heads="results/tables/multihead_heads.parquet",
    params:
        multihead=EXP.get("multihead"),
        model=EXP.get("model"),
        train=EXP.get("train"),
        threshold=EXP.get("converge_acc"),
        device=config["device"],
    threads: EXP_THREADS
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/experiments/multihead.log",
    benchmark:
        "results/benchmarks/experiments/multihead.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/multihead.py"


rule keyword:
    input:
        code=script_code("keyword_toy.py"),
    output:
        table="results/tables/keyword.parquet",
    params:
        keyword=EXP.get("keyword"),
        device=config["device"],
    threads: EXP_THREADS
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/experiments/keyword.log",
    benchmark:
        "results/benchmarks/experiments/keyword.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/keyword_toy.py"


rule derivative:
    input:
        code=script_code("derivative.py"),
    output:
        table="results/tables/derivative.parquet",
    params:
        derivative=EXP.get("derivative"),
        device=config["device"],
    threads: EXP_THREADS
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/experiments/derivative.log",
    benchmark:
        "results/benchmarks/experiments/derivative.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/derivative.py"


# Each figure is its own rule and the summary another, so that no rule's outputs depend on
# which experiments the config names (see rule table2_train in rules/tables.smk for why).
rule experiment_figure:
    input:
        table="results/tables/keyword.parquet",
        code=script_code("experiment_figures.py"),
    output:
        figure=report("results/figures/experiments/keyword.png", category="Controlled experiments",
                      caption="../report/experiments_keyword.rst"),
    log:
        "results/logs/experiments/figure_keyword.log",
    conda:
        ENV
    script:
        "../workflow/scripts/experiment_figures.py"


use rule experiment_figure as multihead_figure with:
    input:
        table="results/tables/multihead.parquet",
        code=script_code("experiment_figures.py"),
    output:
        figure=report("results/figures/experiments/multihead.png", category="Controlled experiments",
                      caption="../report/experiments_multihead.rst"),
    log:
        "results/logs/experiments/figure_multihead.log",


use rule experiment_figure as copying_figure with:
    input:
        table="results/tables/copying.parquet",
        code=script_code("experiment_figures.py"),
    output:
        figure=report("results/figures/experiments/copying.png", category="Controlled experiments",
                      caption="../report/experiments_copying.rst"),
    log:
        "results/logs/experiments/figure_copying.log",


use rule experiment_figure as copy_counts_figure with:
    input:
        table="results/tables/copy_counts.parquet",
        code=script_code("experiment_figures.py"),
    output:
        figure=report("results/figures/experiments/copy_counts.png", category="Controlled experiments",
                      caption="../report/experiments_copy_counts.rst"),
    log:
        "results/logs/experiments/figure_copy_counts.log",


use rule experiment_figure as derivative_figure with:
    input:
        table="results/tables/derivative.parquet",
        code=script_code("experiment_figures.py"),
    output:
        figure=report("results/figures/experiments/derivative.png", category="Controlled experiments",
                      caption="../report/experiments_derivative.rst"),
    log:
        "results/logs/experiments/figure_derivative.log",


rule experiments_summary:
    input:
        tables=experiment_tables(),
        code=script_code("experiments_summary.py"),
    output:
        markdown="results/tables/experiments.md",
        intervals="results/tables/experiment_intervals.parquet",
    log:
        "results/logs/experiments/summary.log",
    conda:
        ENV
    script:
        "../workflow/scripts/experiments_summary.py"


rule ibm1:
    input:
        train="results/tokenized/{dataset}/train.parquet",
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("ibm1.py"),
    output:
        ttable="results/ibm1/{dataset}/ttable.parquet",
        log="results/ibm1/{dataset}/log.parquet",
        probe="results/probes/{dataset}/ibm1.parquet",
    params:
        iterations=EXP.get("ibm1", {}).get("iterations"),
        max_examples=lambda w: ds(w)["probe"]["max_examples"],
    log:
        "results/logs/ibm1/{dataset}.log",
    benchmark:
        "results/benchmarks/ibm1/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/ibm1.py"
