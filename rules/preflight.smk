# The check to run first on a cluster (docs/slurm.md): one small job where the GPU jobs go,
# that fails within seconds where they would fail (no GPU, a torch build the driver cannot
# run), and estimates each GPU job's time beside its limit. Force it each time (-f):
#   snakemake --workflow-profile profiles/slurm --configfile config/paper.yaml --config device=cuda -f preflight
# Included last in the Snakefile: it reads the other rules' time limits.

rule preflight:
    output:
        report="results/preflight/report.md",
    params:
        device=config["device"],
        datasets=preflight_datasets(),
        limits={r: runtime_limit(r) for r in PREFLIGHT_ESTIMATES if r != "probe_train" or TRAIN_SPLIT},
        data_dir="results/tokenized",
        steps=5,  # training steps timed per dataset, after one warm-up step
        probe_examples=32,  # validation examples probed per dataset
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/preflight.log",
    conda:
        ENV
    script:
        "../workflow/scripts/preflight.py"
