# The transfer test (config `transfer`, src/attnlearn/agreement/transfer.py, docs/methods.md
# section 14): each value of a sweep over init starts its standard runs from a donor's weights;
# one job reads every value's runs A against their U runs' xi and the gold links, and the plan.
# Defined under every config with the same outputs (a rule's outputs may not depend on the
# config); without a transfer section its inputs say so when it is requested.


rule transfer_table:
    input:
        probes=transfer_files("a_probe", "u_probe"),
        perf=transfer_files("u_perf"),
        gold=transfer_golds,
        # when the first of its runs began training: the plan is confirmatory only if committed before
        checkpoints=transfer_checkpoints,
        plan=transfer_plan,
        code=script_code("transfer.py"),
    output:
        curves=TRANSFER_OUT["curves"],
        responses=TRANSFER_OUT["responses"],
        seeds=TRANSFER_OUT["seeds"],
        plan=TRANSFER_OUT["plan"],
        markdown=TRANSFER_OUT["markdown"],
        figure=report(
            TRANSFER_OUT["figure"],
            category="Figures",
            subcategory="Transfer",
            caption="../report/transfer_figure.rst",
        ),
    params:
        entries=lambda w: transfer_entries(),
        sweep=lambda w: TRANSFER["sweep"],
        window=lambda w: TRANSFER["window"],
        repo=workflow.basedir,
    log:
        "results/logs/transfer.log",
    conda:
        ENV
    script:
        "../workflow/scripts/transfer.py"


# the transfer test's outputs alone (`snakemake transfer`)
rule transfer:
    input:
        list(TRANSFER_OUT.values()),
