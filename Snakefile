# Approximating How Single Head Attention Learns: the reproduction pipeline.
# See README.md for use and docs/ for the layout and data contracts.

import os

# This checkout's code, not the one pip installed (workflow/own_code.py): a run from a worktree
# or a second clone whose installed package is another checkout's would import that one's src/
# here and in every job, while the rules track this tree's files. Snakemake puts the
# Snakefile's folder first on sys.path before it reads the Snakefile, so this is this tree's
# workflow/ package
from workflow.own_code import use_own_code

use_own_code(os.path.join(workflow.basedir, "src"), workflow.main_snakefile)

from snakemake.utils import min_version

from attnlearn.config import read_config_file
from attnlearn.reporting.guard import refuse_stale_reports
from attnlearn.reporting.made_for import config_stamp
from attnlearn.reporting.made_for import register as register_made_for
from attnlearn.cost.time_left import DEFAULT_TIMES, remember_benchmarks, remember_pending
from attnlearn.runtime.interrupt import defer_sigterm, forward_sigint_to_jobs
from attnlearn.runtime.profiles import refuse_profile_mix
from attnlearn.runtime.reruns import explain as explain_reruns
from attnlearn.runtime.targets import remember_rules

min_version("9.0")
# a cluster profile given with --profile would be mixed with profiles/default: refused, naming
# the command with --workflow-profile (src/attnlearn/runtime/profiles.py)
refuse_profile_mix(workflow)


# The built-in default runs unless the user names a config with --configfile,
# which then replaces it (Snakemake would otherwise merge the two).
if not workflow.overwrite_configfiles:
    # a YAML error or an empty file, named with line and column (Snakemake's message names neither)
    read_config_file(os.path.join(workflow.basedir, "config", "config.yaml"))

    configfile: os.path.join(workflow.basedir, "config", "config.yaml")


report: "report/workflow.rst"


include: "rules/common.smk"


# a report of this config only: refused while its DAG has jobs to run (another config's or
# stale outputs would stand in their place; src/attnlearn/reporting/guard.py)
refuse_stale_reports(CONFIG_SOURCE)
# SIGINT to Snakemake alone stops the running jobs at their next step, as a terminal's Ctrl-C
# does (src/attnlearn/runtime/interrupt.py); a cluster's jobs are its executor's to cancel
if not workflow.non_local_exec and not workflow.remote_exec:
    forward_sigint_to_jobs()
# a SIGTERM that lands while the scheduler holds its lock cannot hang Snakemake (interrupt.py)
defer_sigterm()
# when a run ends, every summary names the config it was made for, and one of another config
# says NOT CURRENT at its top (src/attnlearn/reporting/made_for.py)
made_for_started = register_made_for(workflow, config_stamp(config, CONFIG_FILES or [CONFIG_SOURCE]))


# The workflow's one onstart: (Snakemake keeps one per workflow): when a run starts, the DAG
# built and no job run yet; never in a dry run
onstart:
    # the jobs to run, which the console's time left prices (src/attnlearn/cost/time_left.py)
    remember_pending(workflow)
    # why its jobs rerun, one line per rule (src/attnlearn/runtime/reruns.py)
    explain_reruns(workflow, [LIB, SCRIPTS])
    # the run started: its end stamps the summaries
    made_for_started()


wildcard_constraints:
    dataset="|".join(re.escape(d) for d in DATASETS),
    run="(" + "|".join(VARIANTS) + r")-s\d+",  # {variant}-s{seed}, VARIANTS: attnlearn.training.variants
    pseed=r"\d+",
    filename=r"[^/]+",


include: "rules/data.smk"
include: "rules/train.smk"
include: "rules/probe.smk"
include: "rules/agreement.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"
include: "rules/examples.smk"
include: "rules/experiments.smk"
include: "rules/analyses.smk"
include: "rules/optimal.smk"
include: "rules/sweep_inputs.smk"
include: "rules/sweep.smk"  # config `sweeps`: none, rules that match no file
include: "rules/transfer_inputs.smk"
include: "rules/transfer.smk"  # config `transfer`: none, a rule that says so when requested
include: "rules/preflight.smk"  # last: it reads the other rules' time limits


rule all:
    default_target: True
    input:
        rules.tables.output,
        [TABLE2_TRAIN] if TRAIN_SPLIT else [],
        rules.datacard.output,
        figures_all(),
        examples_all(),
        experiments_all(),
        rules.analysis_tables.output,
        rules.optimal_attention_table.output,
        rules.optimal_attention_page.output,
        report_pages(),
        sweeps_all(),


# a target that no rule makes is said with the tables there are (src/attnlearn/runtime/targets.py)
remember_rules(workflow)
# the console prices a rule not yet timed in this run from earlier runs' benchmark records, and
# under the built-in default config from a reference run's times (cost/default_times.tsv)
DEFAULT_CONFIG = Path(workflow.basedir) / "config" / "config.yaml"
remember_benchmarks(workflow.rules, reference=DEFAULT_TIMES if DEFAULT_TIMES.exists() and all(
    Path(f).resolve() == DEFAULT_CONFIG.resolve() for f in CONFIG_FILES) else None)
