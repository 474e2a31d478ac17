# The check to run first on a cluster (docs/slurm.md): one small job where the GPU jobs go,
# that fails within seconds where they would fail (no GPU, a torch build the driver cannot
# run), and estimates each GPU job's time beside its limit. Force it each time (-f):
#   snakemake --workflow-profile profiles/slurm --configfile config/paper.yaml --config device=cuda -f preflight
# Included last in the Snakefile: it reads the other rules' time limits.

RATES = Path(workflow.basedir) / "src" / "attnlearn" / "cost" / "gpu_rates.tsv"  # measured GPU rates (docs/benchmarks.md)
# what both rules size and count, read once when the workflow is read
SIZED, PLANNED = preflight_datasets(), gpu_jobs()


rule preflight:
    output:
        report="results/preflight/report.md",
        # what it measured, in the format of the GPU rates table (appended by hand from a GPU)
        rates="results/preflight/rates.tsv",
    params:
        device=config["device"],
        datasets=SIZED,
        jobs=PLANNED,
        limits={r: runtime_limit(r) for r in PREFLIGHT_ESTIMATES if r != "probe_train" or TRAIN_SPLIT},
        data_dir="results/tokenized",
        steps=5,  # training steps timed per dataset, after one warm-up step
        probe_examples=32,  # validation examples probed per dataset
        repo=workflow.basedir,  # its commit and the config files name the measured rates
        configfiles=CONFIG_FILES or [CONFIG_SOURCE],
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/preflight.log",
    conda:
        ENV
    script:
        "../workflow/scripts/preflight.py"


# The config's GPU-hours without a GPU: its training and probing jobs, counted as planned and
# priced from the measured rates of src/attnlearn/cost/gpu_rates.tsv on one card, with the jobs that
# share a GPU in this run (the `gpu` resource; 1 on a cluster). Seconds on this machine:
#   snakemake -f gpu_hours --configfile config/paper.yaml
rule gpu_hours:
    input:
        rates=RATES,
    output:
        report="results/preflight/gpu_hours.md",
    params:
        datasets=SIZED,
        jobs=PLANNED,
        data_dir="results/tokenized",
        card="H100",  # the GPU priced: rows measured on it first, others named where used
        sharing=gpu_sharing(),
    localrule: True
    log:
        "results/logs/gpu_hours.log",
    conda:
        ENV
    script:
        "../workflow/scripts/gpu_hours.py"
