# The paper's controlled experiments (docs/experiments.md): permutation copying and its
# controls, the multi-head rescue, the keyword toy, copy count tables, the check of eq. 15
# (the proxy's derivative at initialisation). IBM Model 1 (experiments.ibm1) is trained in
# rules/train.smk.
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
        table=experiment_table("copying"),
        summary="results/tables/copying_summary.parquet",
        counts=experiment_table("copy_counts"),
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
        table=experiment_table("multihead"),
        heads="results/tables/multihead_heads.parquet",
        trials="results/tables/multihead_trials.parquet",  # one row per trial: the numbers' source
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
        table=experiment_table("keyword"),
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
        table=experiment_table("derivative"),
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
# which experiments the config names (see rule table2_train in rules/tables.smk for why):
# rule {kind}_figure draws results/figures/experiments/{kind}.png from the table of the same
# name, with its own caption (report/experiments_{kind}.rst; hence a rule per figure rather
# than one with a wildcard, see the report pages in rules/tables.smk).
for kind in ["keyword", "multihead", "copying", "copy_counts", "derivative"]:

    rule:
        name:
            f"{kind}_figure"
        input:
            table=experiment_table(kind),
            code=script_code("experiment_figures.py"),
        output:
            figure=report(f"results/figures/experiments/{kind}.png", category="Controlled experiments",
                          caption=f"../report/experiments_{kind}.rst"),
        log:
            f"results/logs/experiments/figure_{kind}.log",
        conda:
            ENV
        script:
            "../workflow/scripts/experiment_figures.py"


rule experiments_summary:
    input:
        tables=experiment_tables(),
        code=script_code("experiments_summary.py"),
    output:
        markdown="results/tables/experiments.md",
        intervals="results/tables/experiment_intervals.parquet",
        tests="results/tables/experiment_tests.parquet",  # the multi-head contrasts with their p values
    log:
        "results/logs/experiments/summary.log",
    conda:
        ENV
    script:
        "../workflow/scripts/experiments_summary.py"
