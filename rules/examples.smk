# Per dataset: the examples page (each example's attention beside the probes, over training,
# with the word summary) and the count-table figure, from the tables the pipeline made.


rule examples:
    input:
        standard=lambda w: f"results/probes/{w.dataset}/{role_run(w.dataset, 'A')}.parquet",
        standard_perf=lambda w: f"results/probes/{w.dataset}/{role_run(w.dataset, 'A')}.perf.parquet",
        uniform=lambda w: f"results/probes/{w.dataset}/{role_run(w.dataset, 'U')}.parquet",
        uniform_perf=lambda w: f"results/probes/{w.dataset}/{role_run(w.dataset, 'U')}.perf.parquet",
        proxy=lambda w: f"results/probes/{w.dataset}/{proxy_names(w.dataset)[0]}.parquet",
        agreement="results/agreement/{dataset}.parquet",
        counts="results/counts/{dataset}/counts.parquet",
        valid="results/tokenized/{dataset}/valid.parquet",
        tokenizer="results/tokenized/{dataset}/tokenizer.json",
        code=script_code("examples.py"),
    output:
        page=report(
            "results/report/examples/{dataset}.html",
            category="Examples",
            subcategory="{dataset}",
            caption="../report/examples_page.rst",
        ),
        counts=report(
            "results/figures/{dataset}/count_table.png",
            category="Figures",
            subcategory="{dataset}",
            caption="../report/count_table.rst",
        ),
    params:
        task=lambda w: ds(w)["task"],
        sample=config["figures"]["examples"]["sample"],
        seed=config["figures"]["examples"]["seed"],
        steps=config["figures"]["examples"]["steps"],
        words=config["figures"]["examples"]["words"],
        count_steps=config["figures"]["count_table"]["steps"],
        pairs=config["figures"]["count_table"]["pairs"],
    log:
        "results/logs/examples/{dataset}.log",
    benchmark:
        "results/benchmarks/examples/{dataset}.tsv"
    conda:
        ENV
    script:
        "../workflow/scripts/examples.py"
