# Per dataset: the examples page (each example's attention beside the probes, over training,
# with the word summary) and the count-table figure, from the tables the pipeline made.


rule examples:
    input:
        standard=lambda w: probe_table(w.dataset, role_run(w.dataset, "A")),
        standard_perf=lambda w: probe_table(w.dataset, role_run(w.dataset, "A"), perf=True),
        uniform=lambda w: probe_table(w.dataset, role_run(w.dataset, "U")),
        uniform_perf=lambda w: probe_table(w.dataset, role_run(w.dataset, "U"), perf=True),
        proxy=lambda w: probe_table(w.dataset, proxy_names(w.dataset)[0]),
        agreement=AGREEMENT,
        counts=COUNTS,
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
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
