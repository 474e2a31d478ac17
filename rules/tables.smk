# The paper's tables from the per-dataset agreement rows.


rule tables:
    input:
        agreement=expand("results/agreement/{dataset}.parquet", dataset=DATASETS),
        perf=expand("results/agreement/{dataset}.perf.parquet", dataset=DATASETS),
        **({"train_agreement": expand("results/train_split/agreement/{dataset}.parquet", dataset=DATASETS)}
           if TRAIN_SPLIT else {}),
        code=script_code("tables.py"),
    output:
        agreement="results/tables/agreement.parquet",
        performance="results/tables/performance.parquet",
        table2="results/tables/table2.parquet",
        table2_tsv=report(
            "results/tables/table2.tsv",
            category="Tables",
            caption="../report/table2.rst",
        ),
        gold="results/tables/gold_agreement.parquet",
        table2_kendall="results/tables/table2_kendall.parquet",
        table2_bleu="results/tables/table2_bleu.parquet",
        table10="results/tables/table10.parquet",
        table11="results/tables/table11.parquet",
        seeds="results/tables/seeds.parquet",
        paper="results/tables/paper_comparison.parquet",
        **({"table2_train": "results/tables/table2_train.parquet"} if TRAIN_SPLIT else {}),
        ibm1="results/tables/ibm1.parquet",
        markdown="results/tables/tables.md",
    params:
        tasks={d: config["datasets"][d]["task"] for d in DATASETS},
    log:
        "results/logs/tables/tables.log",
    benchmark:
        "results/benchmarks/tables.tsv"
    script:
        "../workflow/scripts/tables.py"


rule table2:
    input:
        "results/tables/table2.parquet",
