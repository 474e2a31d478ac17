# Probing (src/attnlearn/probing/): every checkpoint of a run measured on validation examples,
# and the training-split variants of the runs' and the proxies' probes. The comparisons of
# these tables are rules/agreement.smk's.


rule probe:
    input:
        unpack(bleu_texts),
        checkpoints=CHECKPOINTS,
        log=TRAIN_LOG,
        examples=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("probe.py"),
    output:
        probe=probe_table("{dataset}", "{run}"),
        perf=probe_table("{dataset}", "{run}", perf=True),
    params:
        run=run_params,
        probe=run_probe_params,
        # each probed checkpoint, kept until the outputs are in place: a killed job's rerun
        # probes only the others (not an output, so Snakemake keeps it when the job fails)
        work_dir="results/probes/{dataset}/{run}.partial",
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/probe/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/probe/{dataset}/{run}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/probe.py"


# The appendix's training-split variant (config tables.train_split): the same
# checkpoints and proxy probed on training examples, whose accuracy then picks alpha*'s step and
# gives the performance columns (the appendix's definition; workflow/scripts/table2_train.py).
# The rule is probe on other files (a `use rule`
# replaces the whole input, so that is restated); agreement_train is in rules/agreement.smk.
use rule probe as probe_train with:
    input:
        checkpoints=CHECKPOINTS,
        log=TRAIN_LOG,
        examples=tokenized("train"),
        tokenizer=TOKENIZER,
        code=script_code("probe.py"),
    output:
        probe=probe_table("{dataset}", "{run}", split="train"),
        perf=probe_table("{dataset}", "{run}", perf=True, split="train"),
    params:
        probe=lambda w: {**run_probe_params(w), "bleu": False},
        work_dir="results/train_split/probes/{dataset}/{run}.partial",
    log:
        "results/logs/probe_train/{dataset}/{run}.log",
    benchmark:
        "results/benchmarks/probe_train/{dataset}/{run}.tsv"


# Each trained proxy (xi^px, one per proxy seed) and the count table probed on training
# examples: no training.
rule proxy_probe_train:
    input:
        model="results/proxy/{dataset}/s{pseed}/model.pt",
        log="results/proxy/{dataset}/s{pseed}/log.parquet",
        examples=tokenized("train"),
        tokenizer=TOKENIZER,
        counts=COUNTS,
        code=script_code("proxy_probe.py"),
    output:
        probe=probe_table("{dataset}", "proxy-s{pseed}", split="train"),
    params:
        task=lambda w: ds(w)["task"],
        proxy=proxy_params,
        probe=proxy_probe_params,
        device=config["device"],
    resources:
        gpu=uses_gpu,
    log:
        "results/logs/proxy_probe_train/{dataset}/s{pseed}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/proxy_probe.py"
