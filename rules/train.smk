# Training (src/attnlearn/training/): the runs, the proxy xi^px and IBM Model 1.
#
# The runs: one job per run (variant x seed). Checkpoints are written to a
# work folder that Snakemake does not delete, so a killed job resumes when
# rerun; they are published into the output folder (hard links) when training
# ends, and the work folder stays (docs/faults.md).


rule train:
    input:
        unpack(glove_inputs("vectors")),
        unpack(init_source),
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


# train.stack: K > 1: each group of K runs of one variant is one job, which trains them together
# (a classification stack on a GPU as one batched model, src/attnlearn/models/stacked.py; else
# each member in turn with its own generators, training/train.py _Members) and writes every
# member's outputs as its own train job would. A rule per group names its members' outputs; a rule
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


# One job per proxy seed (proxy.seeds): independent proxies, one per Table 2 replicate.
# Its params hold its own seed, not the list, so adding a seed trains only the new one.
# Table 11's L2 logistic regression (classification) does not depend on the proxy seed:
# only the first seed's job fits it (logreg); the others write an empty C sweep and a
# probe without xi_lr, so the fit is not repeated per seed.
rule proxy:
    input:
        train=tokenized("train"),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        counts=COUNTS,
        code=script_code("proxy.py"),
    output:
        model="results/proxy/{dataset}/s{pseed}/model.pt",
        log="results/proxy/{dataset}/s{pseed}/log.parquet",
        logreg="results/proxy/{dataset}/s{pseed}/logreg.parquet",
        probe=probe_table("{dataset}", "proxy-s{pseed}"),
    params:
        task=lambda w: ds(w)["task"],
        proxy=proxy_params,
        logreg=fits_logreg,
        probe=proxy_probe_params,
        device=config["device"],
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/proxy/{dataset}/s{pseed}.log",
    benchmark:
        "results/benchmarks/proxy/{dataset}/s{pseed}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/proxy.py"


# IBM Model 1 (experiments.ibm1, translation datasets): the lexical baseline, trained on the
# training split and probed as a probe table beside the proxy's.
rule ibm1:
    input:
        train=tokenized("train"),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("ibm1.py"),
    output:
        ttable="results/ibm1/{dataset}/ttable.parquet",
        log="results/ibm1/{dataset}/log.parquet",
        probe=probe_table("{dataset}", "ibm1"),
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
