# The transfer test's names and input functions (rules/transfer.smk's rule uses them). A config
# without a transfer section leaves TRANSFER None: the rule is there, and says so when requested.

from snakemake.exceptions import WorkflowError

TRANSFER = config.get("transfer")
TRANSFER_OUT = {"curves": "results/tables/transfer_curves.parquet",
                "responses": "results/tables/transfer_responses.parquet",
                "seeds": "results/tables/transfer_seeds.parquet",
                "plan": "results/tables/transfer_plan.parquet",
                "markdown": "results/tables/transfer.md",
                "figure": "results/figures/transfer.png"}


def transfer_datasets():
    if not TRANSFER:
        raise WorkflowError("the transfer test needs a `transfer:` section in the config (its sweep, window "
                            "and plan): config/transfer_synthetic.yaml has one (docs/transfer.md)")
    return [d for d in config["sweeps"][TRANSFER["sweep"]]["datasets"] if d in config["datasets"]]


def transfer_entries():
    """Per value of the sweep: its init and its independent replicates, each with the probe and
    performance tables it reads. A U run is read from the value that trains it (SHARED_RUNS: the
    values' runs other than the standard ones are one run), the gold links from the value that
    prepares the data."""
    entries = []
    for d in transfer_datasets():
        trained = SHARED_RUNS.get(d, d)
        reps = [{**r, "a_probe": probe_table(d, r["a_run"]), "u_probe": probe_table(trained, r["u_run"]),
                 "u_perf": probe_table(trained, r["u_run"], perf=True)}
                for r in table2_design(d) if r["independent"]]
        entries.append({"dataset": d, "init": config["datasets"][d]["init"], "replicates": reps,
                        "gold": probe_table(SHARED_DATA.get(d, d), "gold") if has_gold(d) else None})
    return entries


def transfer_files(*keys):
    """Input function: the replicates' tables under ``keys`` (a_probe, u_probe, u_perf)."""
    return lambda wildcards: sorted({r[k] for e in transfer_entries() for r in e["replicates"] for k in keys})


def transfer_golds(wildcards):
    return sorted({e["gold"] for e in transfer_entries() if e["gold"]})


def transfer_plan(wildcards):
    transfer_datasets()  # no transfer section: said here too
    return sweep_plan_path(TRANSFER["plan"])


def transfer_checkpoints(wildcards):
    """Every run the test rests on (standard runs, and the runs they start from or are read against)."""
    out = set()
    for d in transfer_datasets():
        trained = SHARED_RUNS.get(d, d)
        out |= {CHECKPOINTS.format(dataset=d, run=r) for r in variant_runs(d, "standard")}
        out |= {CHECKPOINTS.format(dataset=trained, run=r) for r in runs(trained) if not r.startswith("standard-")}
    return sorted(out)
