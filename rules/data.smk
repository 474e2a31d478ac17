# Data: download, generate or prepare the splits, tokenize, count co-occurrences, the gold
# links' table (synthetic data), the data card, GloVe's vectors.


rule download:
    output:
        "data/downloads/{dataset}/{filename}",
    params:
        spec=download_spec,
        allow_unverified=config["allow_unverified_downloads"],
    log:
        "results/logs/download/{dataset}/{filename}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/download.py"


rule prepare_data:
    input:
        unpack(source_files),
        code=script_code("prepare_data.py"),
    output:
        **{s: prepared(s) for s in SPLITS},
    params:
        source=source_params,
    log:
        "results/logs/prepare_data/{dataset}.log",
    benchmark:
        "results/benchmarks/prepare_data/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/prepare_data.py"


rule tokenize:
    input:
        unpack(glove_inputs("words")),
        **{s: prepared(s) for s in SPLITS},
        code=script_code("tokenize_splits.py"),
    output:
        tokenizer=TOKENIZER,
        **{s: tokenized(s) for s in SPLITS},
    params:
        task=lambda w: ds(w)["task"],
        tokenizer=lambda w: ds(w)["tokenizer"],
        seed=lambda w: ds(w)["source"]["seed"],
    log:
        "results/logs/tokenize/{dataset}.log",
    benchmark:
        "results/benchmarks/tokenize/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/tokenize_splits.py"


rule counts:
    input:
        train=tokenized("train"),
        tokenizer=TOKENIZER,
        code=script_code("counts.py"),
    output:
        counts=COUNTS,
    params:
        task=lambda w: ds(w)["task"],
    log:
        "results/logs/counts/{dataset}.log",
    benchmark:
        "results/benchmarks/counts/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/counts.py"


rule gold:
    input:
        valid=tokenized("valid"),
        code=script_code("gold.py"),
    output:
        gold=probe_table("{dataset}", "gold"),
    params:
        task=lambda w: ds(w)["task"],
        max_examples=lambda w: ds(w)["probe"]["max_examples"],
    log:
        "results/logs/gold/{dataset}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/gold.py"


rule datacard:
    input:
        data=expand(prepared("{split}"), dataset=DATASETS, split=SPLITS),
        tokens=expand(tokenized("{split}"), dataset=DATASETS, split=SPLITS),
        code=script_code("datacard.py"),
    output:
        card="results/tables/datasets.parquet",
    params:
        datasets=DATASETS,
        tasks={d: config["datasets"][d]["task"] for d in DATASETS},
    log:
        "results/logs/datacard/datacard.log",
    conda:
        ENV
    script:
        "../workflow/scripts/datacard.py"


rule glove_download:
    output:
        GLOVE_ZIP,
    params:
        spec=FileSpec({k: config["glove"][k] for k in ("url", "sha256")}),
        allow_unverified=config["allow_unverified_downloads"],
    log:
        "results/logs/download/glove.log",
    conda:
        ENV
    script:
        "../workflow/scripts/download.py"


rule glove_words:
    input:
        zip=GLOVE_ZIP,
        code=script_code("glove.py"),
    output:
        words="results/glove/words.txt",
    params:
        member=config["glove"]["member"],
    log:
        "results/logs/glove/words.log",
    conda:
        ENV
    script:
        "../workflow/scripts/glove.py"


rule glove_vectors:
    input:
        zip=GLOVE_ZIP,
        tokenizer=TOKENIZER,
        code=script_code("glove.py"),
    output:
        vectors="results/tokenized/{dataset}/glove.npy",
    params:
        member=config["glove"]["member"],
        dim=config["glove"]["dim"],
    log:
        "results/logs/glove/{dataset}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/glove.py"
