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


# train.stack: K > 1 (classification): each group of K runs of one variant is one job, which
# trains them as one batched model and writes every member's outputs as its own train job
# would (src/attnlearn/models/stacked.py). A rule per group names its members' outputs; a rule
# without wildcards in its outputs would lose its {dataset} inputs, so each is constrained to
# its dataset and put before `train` (which would make the same files).
for _dataset in DATASETS:
    for _members in stack_groups(config["datasets"][_dataset]):
        _stack = stack_name(_members)
        _rule = re.sub(r"\W", "_", f"train_stack_{_dataset}_{_stack}")

        rule:
            name:
                _rule
            input:
                unpack(glove_inputs("vectors")),
                train=tokenized("train"),
                tokenizer=TOKENIZER,
                code=script_code("train.py"),
            output:
                checkpoints=[directory(CHECKPOINTS.replace("{run}", m)) for m in _members],
                log=[TRAIN_LOG.replace("{run}", m) for m in _members],
            params:
                run=stack_params(_members),
                work_dir=f"results/runs/{{dataset}}/stacks/{_stack}/work",
            wildcard_constraints:
                dataset=re.escape(_dataset),
            resources:
                gpu=uses_gpu,
                **stack_resources(_members),
            log:
                f"results/logs/train/{{dataset}}/{_stack}.log",
            benchmark:
                f"results/benchmarks/train/{{dataset}}/{_stack}.tsv"
            conda:
                ENV
            script:
                "../workflow/scripts/train.py"

        workflow.ruleorder(_rule, "train")
