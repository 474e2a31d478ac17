# Training: one job per run (variant x seed). Checkpoints are written to a
# work folder that Snakemake does not delete, so a killed job resumes when
# rerun; they are published into the output folder (hard links) when training
# ends, and the work folder stays (docs/faults.md).


rule train:
    input:
        unpack(glove_inputs("vectors")),
        train=tokenized("train"),
        tokenizer=TOKENIZER,
        code=script_code("train.py"),
    output:
        checkpoints=directory(CHECKPOINTS),
        log=TRAIN_LOG,
    params:
        run=run_params,
        work_dir="results/runs/{dataset}/{run}/work",
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/train/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/train/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/train.py"
