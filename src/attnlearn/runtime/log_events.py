"""What the console reads: Snakemake's log events (their names, the words it prints that the
console says better or once) and a job's log (its progress bar, the error it ended with, the
words of a training stopped by a signal or resumed from a saved state), as data, no printing.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

# Snakemake's LogEvent values (snakemake_interface_logger_plugins.common.LogEvent)
JOB_INFO, JOB_STARTED, JOB_FINISHED, JOB_ERROR, PROGRESS, RUN_INFO, SHELLCMD, ERROR = (
    "job_info", "job_started", "job_finished", "job_error", "progress", "run_info", "shellcmd", "error")

# tqdm's line: "sms_spam/standard-s1:  19%|█▉   | 759/4000 [01:01<04:10, 12.91it/s]"
_TQDM = re.compile(r"(?P<desc>[^\r\n]*?):\s+(?P<pct>\d+)%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s+"
                   r"\[(?P<elapsed>[\d:]+)<(?P<left>[\d:?]+)")
ROUNDS = re.compile(r"^Select jobs to execute\.\.\.$")
# a script's exit status, which the job's error below says better
EXIT = re.compile(r"^RuleException:\nCalledProcessError in file .*returned non-zero exit status \d+\.$", re.S)
# the last line of a Python traceback: "attnlearn.data.parsers.DataError: r.csv: line 3 ..."
_ERROR = re.compile(r"^([\w.]*(Error|Exception|Interrupt|Exit)|KeyboardInterrupt)\b.*")
# a job stopped by a signal, not failed: a training's own words (training/train.py), or a job
# that a Ctrl-C interrupted (KeyboardInterrupt)
STOPPED = re.compile(r"training stopped at step (?P<step>\d+) \((?P<why>[^)]*)\)"
                     r"|training stopped by a second (?P<second>\w+)|^KeyboardInterrupt\b")
# a training's first words when it goes on from a saved state (training/train.py)
RESUMED = re.compile(r"resumed from step (?P<step>\d+) of (?P<steps>\d+)")
# a training's first words when an earlier attempt had finished it: it publishes, in seconds
RESTORED = re.compile(r"training finished in an earlier attempt")
# Snakemake's words after a SIGTERM, which it repeats every round until the running jobs end
ONCE = re.compile(r"^Will exit after finishing currently running jobs")
# Python 3.11's markers under a traceback's code line ("    ^^^^^^^^"): no words of their own
_CARETS = re.compile(r"^\s*[\^~]+\s*$")
# what Snakemake says after failed jobs, which reads as a fault where every job was stopped
AFTER_FAILURE = re.compile(r"^(Shutting down, this might take some time\.|Exiting because a job execution "
                           r"failed\..*|WorkflowError:\nAt least one job did not complete successfully\.)$", re.S)


# errors the workflow raises while it is read or a report is built, whose message says all (a
# config error: every key with its file and line; a cluster profile given with --profile: the
# command to use; a report refused: the outputs not up to date and the command that makes them);
# Snakemake's header ("ConfigError in file rules/common.smk, line 20:") and traceback name the
# workflow's code (or asyncio's), not the user's mistake
OWN_ERRORS = {"ConfigError", "ProfileError", "ReportRefused"}
# errors a job raises whose message names the file, line or key and what to do (a bad data file,
# a checksum, a download, a plan, the measured rates): the console shows them without the
# traceback around them, which stays in the job's log
JOB_ERRORS = {"DataError", "ChecksumError", "DownloadError", "PlanError", "RatesError", "DiskFullError"}
# a traceback line of Python's: its start, a frame ("  File ..."), the frame's code line, a chained
# exception's words
_FRAME = re.compile(r'^(Traceback \(most recent call last\):|\s+File ".*", line \d+.*|During handling of the '
                    r"above exception, another exception occurred:|The above exception was the direct cause of "
                    r"the following exception:)$")


def own_error(msg: str) -> list[str]:
    """An own error's message without Snakemake's header line and traceback."""
    lines = msg.splitlines()
    if lines and re.match(r"^\w+( in file .*, line \d+)?:$", lines[0]):
        lines = lines[1:]
    cut = next((i for i, line in enumerate(lines) if line.startswith('  File "')), len(lines))
    return lines[:cut]




def clock(text: str) -> float | None:
    """tqdm's [H:]MM:SS as seconds (None for its "?")."""
    if "?" in text:
        return None
    secs = 0.0
    for part in text.split(":"):
        secs = 60 * secs + float(part)
    return secs


def head(path: str | Path, size: int = 4096) -> str:
    """The first ``size`` bytes of ``path`` as text ('' if it is not there yet)."""
    try:
        with open(path, "rb") as f:
            return f.read(size).decode("utf-8", errors="replace")
    except OSError:
        return ""


def resume_command(argv: list[str] | None = None) -> str:
    """The command this Snakemake was started with, as a user types it again."""
    import shlex
    import sys

    argv = list(sys.argv if argv is None else argv)
    if not argv:
        return "snakemake"
    first = "snakemake" if os.path.basename(argv[0]) in ("snakemake", "__main__.py") else argv[0]
    return " ".join([first, *map(shlex.quote, argv[1:])])


def tail(path: str | Path, size: int = 4096) -> str:
    """The last ``size`` bytes of ``path`` as text ('' if it is not there yet)."""
    try:
        with open(path, "rb") as f:
            f.seek(max(0, os.fstat(f.fileno()).st_size - size))
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def whole(path: str | Path) -> str:
    """A log's text ('' where it is not there): the words a job leaves for the run's end may
    come before its last lines."""
    try:
        return Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return ""


def training_progress(log_text: str) -> dict | None:
    """The last progress bar in a job log's text: step, steps, seconds left (None if none)."""
    found = list(_TQDM.finditer(log_text))
    if not found:
        return None
    m = found[-1]
    return {"desc": m["desc"].strip(), "step": int(m["n"]), "steps": int(m["total"]),
            "elapsed": clock(m["elapsed"]), "left": clock(m["left"])}


def log_lines(text: str) -> list[str]:
    """A log's non-empty lines, a progress bar's redraws (\\r) each its own; a traceback's
    caret lines left out (a failed job's log tail started on a stray `|  ^^^^` line)."""
    return [line.rstrip() for line in re.split(r"[\r\n]+", text) if line.strip() and not _CARETS.match(line)]


def named_error(log_text: str) -> list[str]:
    """The error a failed job's log ends with: its traceback's last line (the exception, named
    by the code that raised it; one of JOB_ERRORS by its message alone), else the log's last
    three lines."""
    lines = log_lines(log_text)
    errors = [line for line in lines if _ERROR.match(line)]
    return [_job_error(errors[-1]) or errors[-1]] if errors else lines[-3:]


def _job_error(line: str) -> str | None:
    """The message of an exception line of JOB_ERRORS ("attnlearn.data.parsers.DataError: r.csv:
    line 3 ..." -> "r.csv: line 3 ..."); None for any other."""
    name, _, message = line.partition(": ")
    return message if message and name.rsplit(".", 1)[-1] in JOB_ERRORS else None


def without_traceback(lines: list[str]) -> list[str]:
    """A failed job's log lines without the traceback of an error of JOB_ERRORS: its frames and
    its exception line, which the console says as the message alone (an exception it was
    chained to stays, by its line). Another error's traceback is kept: it is what a bug report
    needs."""
    errors = [i for i, line in enumerate(lines) if _ERROR.match(line)]
    if not errors or _job_error(lines[errors[-1]]) is None:
        return lines
    return [line for i, line in enumerate(lines) if not _FRAME.match(line) and i != errors[-1]
            and not (i and _FRAME.match(lines[i - 1]) and lines[i - 1].lstrip().startswith("File "))]


def made(outputs: list[str]) -> str:
    """What a job made, in a few words: its outputs' common folder, or its first output and a
    count of the rest."""
    if not outputs:
        return ""
    if len(outputs) == 1:
        return outputs[0]
    common = os.path.commonpath(outputs)
    if common.count(os.sep) < 2:  # no folder of its own below results/<stage>
        return f"{outputs[0]} and {len(outputs) - 1} more"
    names = [os.path.relpath(o, common) for o in outputs]
    return f"{common}/{{{', '.join(names)}}}" if len(names) <= 3 else f"{common}/ ({len(names)} files)"


def label(job: dict) -> str:
    """A job as "rule (wildcard values)"."""
    values = ", ".join(str(v) for v in (job.get("wildcards") or {}).values())
    return f"{job['rule_name']} ({values})" if values else job["rule_name"]
