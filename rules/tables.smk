# The paper's tables from the per-dataset agreement rows.


rule tables:
    input:
        agreement=expand(AGREEMENT, dataset=DATASETS),
        perf=expand(AGREEMENT_PERF, dataset=DATASETS),
        replicates=expand(AGREEMENT_REPLICATES, dataset=DATASETS),
        replicates_kendall=expand(AGREEMENT_REPLICATES_KENDALL, dataset=DATASETS),
        readings=expand(AGREEMENT_READINGS, dataset=DATASETS),
        # tables.md shows the training-split Table 2 when the config asks for it
        **({"table2_train": TABLE2_TRAIN} if TRAIN_SPLIT else {}),
        # the probed validation examples: what an input-blind predictor scores on them
        examples=expand(tokenized("valid"), dataset=DATASETS),
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
        table2_replicates="results/tables/table2_replicates.parquet",
        table2_intervals="results/tables/table2_intervals.parquet",
        table2_variance="results/tables/table2_variance.parquet",
        readings="results/tables/replicate_readings.parquet",
        readings_tests="results/tables/readings_tests.parquet",
        readings_modes="results/tables/readings_modes.parquet",
        claims="results/tables/claims.parquet",
        learning="results/tables/learning.parquet",
        table2_kendall="results/tables/table2_kendall.parquet",
        table2_kendall_replicates="results/tables/table2_kendall_replicates.parquet",
        table2_bleu="results/tables/table2_bleu.parquet",
        table10="results/tables/table10.parquet",
        table10_replicates="results/tables/table10_replicates.parquet",
        table11="results/tables/table11.parquet",
        table11_replicates="results/tables/table11_replicates.parquet",
        seeds="results/tables/seeds.parquet",
        paper="results/tables/paper_comparison.parquet",
        ibm1="results/tables/ibm1.parquet",
        markdown="results/tables/tables.md",
    params:
        **TABLE2_PARAMS,
        designs={d: table2_design(d) for d in DATASETS},
        comparable=config["tables"]["comparable"],
        max_examples={d: config["datasets"][d]["probe"]["max_examples"] for d in DATASETS},
    log:
        "results/logs/tables/tables.log",
    benchmark:
        "results/benchmarks/tables.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/tables.py"


# Every rule here has the same outputs under every config. Snakemake checks a requested
# target's sibling outputs only for their metadata: one that a config adds and an earlier
# config never made leaves the job without metadata, so the changed set of inputs and params
# goes unseen and the stale table is kept. The training-split table is its own rule for that.
rule table2_train:
    input:
        agreement=expand("results/train_split/agreement/{dataset}.parquet", dataset=DATASETS),
        perf=expand("results/train_split/agreement/{dataset}.perf.parquet", dataset=DATASETS),
        replicates=expand(AGREEMENT_REPLICATES_TRAIN, dataset=DATASETS),
        code=script_code("table2_train.py"),
    output:
        table2_train=TABLE2_TRAIN,
        table2_train_replicates="results/tables/table2_train_replicates.parquet",
    params:
        **TABLE2_PARAMS,
        designs={d: table2_design(d) for d in DATASETS},
    log:
        "results/logs/tables/table2_train.log",
    conda:
        ENV
    script:
        "../workflow/scripts/table2_train.py"


rule table2:
    input:
        "results/tables/table2.parquet",


# The Markdown summaries as HTML pages of the report, which shows HTML in place but offers
# Markdown only as a download: rule {page}_page makes results/report/{page}.html from
# results/tables/{page}.md. One rule per page, not one rule with a {page} wildcard: each page
# has its own caption file, and Snakemake fills wildcards into a report category but not
# into a caption's path.
REPORT_PAGES = {  # page -> its report category and caption (report/{caption}.rst)
    "tables": ("Tables", "tables_page"),
    "analyses": ("Attention analyses", "analyses"),
    "experiments": ("Controlled experiments", "experiments_page"),
    "optimal_attention": ("Optimal attention", "optimal_attention_page"),
}

for page, (category, caption) in REPORT_PAGES.items():

    rule:
        name:
            f"{page}_page"
        input:
            markdown=f"results/tables/{page}.md",
            code=script_code("report_page.py"),
        output:
            page=report(f"results/report/{page}.html", category=category, caption=f"../report/{caption}.rst"),
        log:
            f"results/logs/report_page/{page}.log",
        conda:
            ENV
        script:
            "../workflow/scripts/report_page.py"
