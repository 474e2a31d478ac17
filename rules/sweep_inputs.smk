# The sweeps' names, paths and input functions (rules/sweep.smk's rules use them; kept apart
# since Snakemake's lint wants functions out of the files that hold rules). A config without
# sweeps leaves these empty, and rules/sweep.smk's rules then match no file.

from attnlearn.sweeps import data_of, describe, runs_of

# the sweeps whose every value is selected (`only` may select part of one: those values run as
# datasets, and no pooled table reads a part of a sweep)
SWEEPS = {name: sweep for name, sweep in config.get("sweeps", {}).items()
          if all(d in config["datasets"] for d in sweep["datasets"])}
# dataset -> the sweep dataset whose prepared, tokenized and counted data it links to: a key
# outside source and tokenizer leaves the data as they are, so they are made once
SHARED_DATA = data_of(config)
# dataset -> the sweep dataset whose runs other than the standard ones it links to: a key under
# init changes where the standard runs start, and nothing else
SHARED_RUNS = runs_of(config)
# said at planning time, dry runs included: a line per value
for _line in describe(config):
    print(_line, file=sys.stderr)

SWEEP_DATA_FILES = {**{f"prepared_{s}": prepared(s) for s in SPLITS},
                    **{f"tokenized_{s}": tokenized(s) for s in SPLITS},
                    "tokenizer": TOKENIZER, "counts": COUNTS}


def one_of(names):
    """A wildcard constraint that matches exactly ``names``; none matches nothing, so that a
    rule of a config without sweeps is defined (its outputs as under every config) yet never runs."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


def sweep_table(name, kind=""):
    """A sweep's summary: results/tables/sweep_{sweep}{kind}.{parquet,md} (rule sweep_table)."""
    return f"results/tables/sweep_{name}{kind}"


def linked(path):
    """Input function: ``path`` of the dataset whose data this one shares."""
    return lambda wildcards: path.format(dataset=SHARED_DATA[wildcards.dataset])


def linked_run(path):
    """Input function: ``path`` of the same run of the dataset whose runs this one shares."""
    return lambda wildcards: path.format(dataset=SHARED_RUNS[wildcards.dataset], run=wildcards.run)


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
    return sweep_plan_path(SWEEPS[name]["plan"])


def sweep_plan_path(plan):
    """An analysis plan as a list of its path on this machine (relative: to the repository); none: []."""
    return [plan if os.path.isabs(plan) else os.path.join(workflow.basedir, plan)] if plan else []


def sweeps_all():
    """Every whole sweep's table and figure (rule all; `snakemake sweeps` makes these alone)."""
    return [out for s in SWEEPS for out in (sweep_table(s, ".parquet"), f"results/figures/sweep_{s}.png")]
