# Figures per dataset, shown in the Snakemake report.


rule figures:
    input:
        agreement=AGREEMENT,
        perf=AGREEMENT_PERF,
        replicates=AGREEMENT_REPLICATES,  # the right panel's band over Table 2's replicates
        standard=lambda w: probe_table(w.dataset, role_run(w.dataset, "A")),
        uniform=lambda w: probe_table(w.dataset, role_run(w.dataset, "U")),
        valid=tokenized("valid"),
        tokenizer=TOKENIZER,
        code=script_code("figures.py"),
    output:
        contextualized=report(
            "results/figures/{dataset}/contextualized.png",
            category="Figures",
            subcategory="{dataset}",
            caption="../report/contextualized.rst",
        ),
        curves=report(
            "results/figures/{dataset}/agreement_curves.png",
            category="Figures",
            subcategory="{dataset}",
            caption="../report/agreement_curves.rst",
        ),
        heatmap=report(
            "results/figures/{dataset}/heatmap.png",
            category="Figures",
            subcategory="{dataset}",
            caption="../report/heatmap.rst",
        ),
    params:
        task=lambda w: ds(w)["task"],
        n_examples=config["figures"]["heatmap_examples"],
        xi_b_run=lambda w: xi_b_run(w.dataset),  # as in Table 2
    log:
        "results/logs/figures/{dataset}.log",
    conda:
        ENV
    script:
        "../workflow/scripts/figures.py"


# Table 2 as distributions over the replicates, every dataset in one figure
rule replicates_figure:
    input:
        replicates="results/tables/table2_replicates.parquet",
        intervals="results/tables/table2_intervals.parquet",
        readings="results/tables/replicate_readings.parquet",
        code=script_code("replicates_figure.py"),
    output:
        figure=report(
            "results/figures/table2_replicates.png",
            category="Figures",
            subcategory="Table 2",
            caption="../report/table2_replicates.rst",
        ),
        readings=report(
            "results/figures/table2_readings.png",
            category="Figures",
            subcategory="Table 2",
            caption="../report/table2_readings.rst",
        ),
    log:
        "results/logs/figures/table2_replicates.log",
    conda:
        ENV
    script:
        "../workflow/scripts/replicates_figure.py"
