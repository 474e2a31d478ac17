# Sweeps (config `sweeps`, src/attnlearn/sweeps.py, docs/sweeps.md): each value of a sweep is a
# dataset of its own, <sweep>_<i>, which the other rules files run as any dataset; here, the data
# the values share, and the pooled table, trend and figure of each sweep. The rules are defined
# under every config, so that no rule's outputs depend on the config (a config without sweeps
# gives them a wildcard constraint that matches nothing); their inputs: rules/sweep_inputs.smk.

# The same files as prepare_data, tokenize and counts make, for the values that share
# their data: symbolic links to the first value's (workflow/scripts/sweep_data.py says why not hard ones).
# A dataset matches this rule only if it shares (its wildcard constraint), and the
# ruleorder below picks it over the rules that would make the data again.
rule sweep_data:
    input:
        **{k: linked(path) for k, path in SWEEP_DATA_FILES.items()},
        code=script_code("sweep_data.py"),
    output:
        **SWEEP_DATA_FILES,
    wildcard_constraints:
        dataset=one_of(SHARED_DATA),
    log:
        "results/logs/sweep_data/{dataset}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/sweep_data.py"

ruleorder: sweep_data > prepare_data
ruleorder: sweep_data > tokenize
ruleorder: sweep_data > counts


# The runs other than the standard ones of the values whose key changes the standard runs only
# (under init): links to the first value's runs, which it trains once. The ruleorder picks this
# rule over train for them.
rule sweep_run:
    input:
        checkpoints=linked_run(CHECKPOINTS),
        log=linked_run(TRAIN_LOG),
        code=script_code("sweep_run.py"),
    output:
        checkpoints=directory(CHECKPOINTS),
        log=TRAIN_LOG,
    wildcard_constraints:
        dataset=one_of(SHARED_RUNS),
        run="(" + "|".join(v for v in VARIANTS if v != "standard") + r")-s\d+",
    log:
        "results/logs/sweep_run/{dataset}/{run}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/sweep_run.py"

ruleorder: sweep_run > train


rule sweep_table:
    input:
        replicates="results/tables/table2_replicates.parquet",
        alpha=lambda w: sweep_runs(w.sweep, "alpha"),
        perf=lambda w: sweep_runs(w.sweep, "perf"),
        gold=lambda w: sweep_runs(w.sweep, "gold"),
        # when each value's first training began: the plan is confirmatory only if committed before
        checkpoints=lambda w: [CHECKPOINTS.format(dataset=d, run=r) for d in SWEEPS[w.sweep]["datasets"]
                               for r in variant_runs(d, *ROLE_VARIANTS)],
        plan=lambda w: sweep_plan(w.sweep),
        code=script_code("sweep_table.py"),
    output:
        replicates=sweep_table("{sweep}", "_replicates.parquet"),
        table=sweep_table("{sweep}", ".parquet"),
        trend=sweep_table("{sweep}", "_trend.parquet"),
        plan=sweep_table("{sweep}", "_plan.parquet"),
        tsv=report(sweep_table("{sweep}", ".tsv"), category="Tables", caption="../report/sweep_table.rst"),
        markdown=sweep_table("{sweep}", ".md"),
    params:
        sweep=lambda w: {**SWEEPS[w.sweep], "name": w.sweep, "designs": sweep_design(w.sweep)},
        repo=workflow.basedir,
    wildcard_constraints:
        sweep=one_of(SWEEPS),
    log:
        "results/logs/sweep_table/{sweep}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/sweep_table.py"

# Each Table 2 column against the swept value, beside Table 2's figures in the report
rule sweep_figure:
    input:
        replicates=sweep_table("{sweep}", "_replicates.parquet"),
        table=sweep_table("{sweep}", ".parquet"),
        trend=sweep_table("{sweep}", "_trend.parquet"),
        code=script_code("sweep_figure.py"),
    output:
        figure=report(
            "results/figures/sweep_{sweep}.png",
            category="Figures",
            subcategory="Table 2",
            caption="../report/sweep_figure.rst",
        ),
    params:
        key=lambda w: SWEEPS[w.sweep]["key"],
    wildcard_constraints:
        sweep=one_of(SWEEPS),
    log:
        "results/logs/sweep_figure/{sweep}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/sweep_figure.py"


# The sweeps' outputs and what they need, not the per-dataset figures, examples and analyses
# that `all` adds for every value
rule sweeps:
    input:
        sweeps_all(),
