# Sweeps (config `sweeps`, src/attnlearn/sweeps.py, docs/sweeps.md): each value of a sweep is a
# dataset of its own, <sweep>_<i>, which the other rules files run as any dataset; here, the data
# the values share, and the pooled table, trend and figure of each sweep. A config without
# sweeps defines none of these rules.

from attnlearn.sweeps import data_of, describe

# the sweeps whose every value is selected (`only` may select part of one: those values run as
# datasets, and no pooled table reads a part of a sweep)
SWEEPS = {name: sweep for name, sweep in config.get("sweeps", {}).items()
          if all(d in config["datasets"] for d in sweep["datasets"])}
# dataset -> the sweep dataset whose prepared, tokenized and counted data it links to: a key
# outside source and tokenizer leaves the data as they are, so they are made once
SHARED_DATA = data_of(config)
# said at planning time, dry runs included: a line per value
for _line in describe(config):
    print(_line, file=sys.stderr)

SWEEP_DATA_FILES = {**{f"prepared_{s}": prepared(s) for s in SPLITS},
                    **{f"tokenized_{s}": tokenized(s) for s in SPLITS},
                    "tokenizer": TOKENIZER, "counts": COUNTS}


def sweep_table(name, kind=""):
    """A sweep's summary: results/tables/sweep_{sweep}{kind}.{parquet,md} (rule sweep_table)."""
    return f"results/tables/sweep_{name}{kind}"


def linked(path):
    """Input function: ``path`` of the dataset whose data this one shares."""
    return lambda wildcards: path.format(dataset=SHARED_DATA[wildcards.dataset])


if SHARED_DATA:

    # The same files as prepare_data, tokenize and counts make, for the values that share
    # their data: hard links to the first value's (a copy where the file system has none).
    # A dataset matches this rule only if it shares (its wildcard constraint), and the
    # ruleorder below picks it over the rules that would make the data again.
    rule sweep_data:
        input:
            **{k: linked(path) for k, path in SWEEP_DATA_FILES.items()},
            code=script_code("sweep_data.py"),
        output:
            **SWEEP_DATA_FILES,
        wildcard_constraints:
            dataset="|".join(re.escape(d) for d in SHARED_DATA),
        log:
            "results/logs/sweep_data/{dataset}.log",
        conda:
            ENV
        script:
            "../workflow/scripts/sweep_data.py"

    ruleorder: sweep_data > prepare_data
    ruleorder: sweep_data > tokenize
    ruleorder: sweep_data > counts


def sweep_design(name):
    """Each value's Table 2 replicates: {dataset: design} (compare.replicate_design)."""
    return {d: table2_design(d) for d in SWEEPS[name]["datasets"]}


def sweep_runs(name, what):
    """Input function: per value and replicate, run A's probe table ("alpha") or its performance
    ("perf"), or each value's gold links ("gold"; synthetic data only): alpha*'s agreement with
    the gold alignment is read per replicate, where the agreement rule reads it for run A only."""
    if what == "gold":
        return [probe_table(d, "gold") for d in SWEEPS[name]["datasets"] if has_gold(d)]
    return [probe_table(d, r["a_run"], perf=what == "perf") for d, design in sweep_design(name).items()
            for r in design if r["independent"]]


def sweep_plan(name):
    """The sweep's analysis plan as a path on this machine (relative: to the repository)."""
    plan = SWEEPS[name]["plan"]
    return [plan if os.path.isabs(plan) else os.path.join(workflow.basedir, plan)] if plan else []


if SWEEPS:

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
            sweep="|".join(re.escape(s) for s in SWEEPS),
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
            sweep="|".join(re.escape(s) for s in SWEEPS),
        log:
            "results/logs/sweep_figure/{sweep}.log",
        conda:
            ENV
        script:
            "../workflow/scripts/sweep_figure.py"


def sweeps_all():
    """Every whole sweep's table and figure (rule all; `snakemake sweeps` makes these alone)."""
    return [out for s in SWEEPS for out in (sweep_table(s, ".parquet"), f"results/figures/sweep_{s}.png")]


# The sweeps' outputs and what they need, not the per-dataset figures, examples and analyses
# that `all` adds for every value
rule sweeps:
    input:
        sweeps_all(),
