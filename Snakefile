# Approximating How Single Head Attention Learns: the reproduction pipeline.
# See README.md for use and docs/ for the layout and data contracts.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "report/workflow.rst"


include: "rules/common.smk"
include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/probe.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"


rule all:
    default_target: True
    input:
        rules.tables.output,
        figures_all(),
