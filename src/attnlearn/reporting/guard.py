"""`snakemake --report` refuses a report that would mix configs or show stale results.

Snakemake builds a report from the outputs that exist: after another config ran in the same
directory, the report of the first would hold the other's tables beside its own figures,
and say "Report created." The report is built from the named config's DAG; where that DAG
has any job to run, this guard stops the report before it is written, naming the outputs
that are not the named config's and the command that brings them up to date.
"""

from __future__ import annotations

import functools

SHOWN = 8  # outputs named in the message; the rest are counted


def pending_message(jobs, config_source: str) -> str:
    """The refusal for ``jobs`` (the DAG's jobs still to run) under the config ``config_source``."""
    # the tables first: what a reader takes for the config's findings
    outputs = sorted({str(f) for job in jobs for f in job.output}, key=lambda f: (not f.startswith("results/tables"), f))
    rules = sorted({job.rule.name for job in jobs})
    named = ", ".join(outputs[:SHOWN]) + (f" and {len(outputs) - SHOWN} more" if len(outputs) > SHOWN else "")
    return (f"no report: {len(jobs)} jobs of {config_source} are not up to date (rules {', '.join(rules)}), so "
            f"the report would show another config's or stale results in their place: {named}. Bring them up to "
            f"date with the same targets and config, e.g. `snakemake --cores 2 --configfile {config_source}`, then "
            "build the report again.")


def refuse_stale_reports(config_source: str) -> None:
    """Wrap Snakemake's report builder (snakemake.report.auto_report, which receives the built
    DAG) so that it raises a WorkflowError (ReportRefused) while the DAG has jobs to run."""
    import snakemake.report as report
    from snakemake.exceptions import WorkflowError

    class ReportRefused(WorkflowError):
        """The refusal, named so that the console prints its words alone (runtime/console.py:
        OWN_ERRORS), without the frames of asyncio's runner that Snakemake prints under it."""

    build = report.auto_report
    if getattr(build, "_attnlearn_guard", False):
        return

    @functools.wraps(build)
    async def auto_report(dag, *args, **kwargs):
        pending = list(dag.needrun_jobs())
        if pending:
            raise ReportRefused(pending_message(pending, config_source))
        return await build(dag, *args, **kwargs)

    auto_report._attnlearn_guard = True
    report.auto_report = auto_report
