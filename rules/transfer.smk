# The transfer test (config `transfer`, src/attnlearn/agreement/transfer.py, docs/methods.md
# "Transfer"): each value of a sweep over init starts its standard runs from a donor's weights;
# one job reads every value's runs A against their U runs' xi and the gold links, and the plan.
# Defined only under a config with a transfer section.

if TRANSFER:

    rule transfer_table:
        input:
            probes=transfer_files("a_probe") + transfer_files("u_probe"),
            perf=transfer_files("u_perf"),
            gold=transfer_golds(),
            # when the first of its runs began training: the plan is confirmatory only if committed before
            checkpoints=transfer_checkpoints(),
            plan=sweep_plan_path(TRANSFER["plan"]),
            code=script_code("transfer.py"),
        output:
            curves=TRANSFER_OUT["curves"],
            responses=TRANSFER_OUT["responses"],
            seeds=TRANSFER_OUT["seeds"],
            plan=TRANSFER_OUT["plan"],
            markdown=TRANSFER_OUT["markdown"],
            figure=report(TRANSFER_OUT["figure"], category="Figures", subcategory="Transfer",
                          caption="../report/transfer_figure.rst"),
        params:
            entries=transfer_entries(),
            sweep=TRANSFER["sweep"],
            window=TRANSFER["window"],
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
