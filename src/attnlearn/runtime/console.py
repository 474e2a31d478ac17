"""What a run prints while it runs: one line per finished job, with the overall progress and an
estimate of the time left; every so often a line per running training (its step, from its job
log's progress bar); a failed job's own error message, and at the end, after Snakemake's last
words, each failed job's error again.

Snakemake's logger plugin (``snakemake_logger_plugin_attnlearn``, ``--logger attnlearn``, on in
the profiles) feeds this module Snakemake's log records as dicts; it does no I/O of its own
but reading job logs, so that tests drive it with records they make.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict
from pathlib import Path

from attnlearn.runtime.at_end import lines_at_end

LOG_LINES = 15  # of a failed job's log, printed under its error

# Snakemake's LogEvent values (snakemake_interface_logger_plugins.common.LogEvent)
JOB_INFO, JOB_STARTED, JOB_FINISHED, JOB_ERROR, PROGRESS, RUN_INFO, SHELLCMD, ERROR = (
    "job_info", "job_started", "job_finished", "job_error", "progress", "run_info", "shellcmd", "error")

# tqdm's line: "sms_spam/standard-s1:  19%|█▉   | 759/4000 [01:01<04:10, 12.91it/s]"
_TQDM = re.compile(r"(?P<desc>[^\r\n]*?):\s+(?P<pct>\d+)%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)\s+"
                   r"\[(?P<elapsed>[\d:]+)<(?P<left>[\d:?]+)")
_ROUNDS = re.compile(r"^Select jobs to execute\.\.\.$")
# a script's exit status, which the job's error below says better
_EXIT = re.compile(r"^RuleException:\nCalledProcessError in file .*returned non-zero exit status \d+\.$", re.S)
# the last line of a Python traceback: "attnlearn.data.parsers.DataError: r.csv: line 3 ..."
_ERROR = re.compile(r"^([\w.]*(Error|Exception|Interrupt|Exit)|KeyboardInterrupt)\b.*")
# a job stopped by a signal, not failed: a training's own words (training/train.py), or a job
# that a Ctrl-C interrupted (KeyboardInterrupt)
_STOPPED = re.compile(r"training stopped at step (?P<step>\d+) \((?P<why>[^)]*)\)"
                      r"|training stopped by a second (?P<second>\w+)|^KeyboardInterrupt\b")
# a training's first words when it goes on from a saved state (training/train.py)
_RESUMED = re.compile(r"resumed from step (?P<step>\d+) of (?P<steps>\d+)")
# Snakemake's words after a SIGTERM, which it repeats every round until the running jobs end
_ONCE = re.compile(r"^Will exit after finishing currently running jobs")
# Python 3.11's markers under a traceback's code line ("    ^^^^^^^^"): no words of their own
_CARETS = re.compile(r"^\s*[\^~]+\s*$")
# what Snakemake says after failed jobs, which reads as a fault where every job was stopped
_AFTER_FAILURE = re.compile(r"^(Shutting down, this might take some time\.|Exiting because a job execution "
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


# rule -> a glob of its jobs' benchmark records (results/benchmarks/...): the times of earlier
# runs, which price a job of this run by its own key (its wildcards) before it has run here
BENCHMARKS: dict[str, str] = {}
# the rules whose jobs make no file (all, table2, sweeps: targets that name others' outputs): no
# work, no time to know
NO_WORK: set[str] = {"all"}
# every job's time as the console saw it finish, kept across runs in this directory (rule,
# wildcards, s): the rules without a benchmark record (figures, datacard, the sweep's) are
# priced from their earlier runs too
TIMES_FILE = Path(".snakemake") / "attnlearn" / "job_times.tsv"
# the times of a reference run of the built-in default config (default_times.tsv): rule -> mean
# seconds a job, and rule -> job key -> seconds; they price a job that neither this run nor an
# earlier one in this directory has timed, scaled by how fast this run's finished jobs went
# against the same jobs there. Empty under other configs (their jobs' sizes differ: a rule with
# no time is then said so in words)
REFERENCE: dict[str, float] = {}
REFERENCE_JOBS: dict[str, dict[tuple[str, ...], float]] = {}
DEFAULT_TIMES = Path(__file__).with_name("default_times.tsv")


def job_key(values) -> tuple[str, ...]:
    """The key a job's times are kept under: its wildcards' values, sorted, so that a benchmark
    record's path (the values in its pattern's order) and a job (its rule's order) agree."""
    return tuple(sorted(str(v) for v in values))


def remember_benchmarks(rules, reference: Path | None = None) -> None:
    """Keep each rule's benchmark path as a glob (its wildcards as *), the rules that make no
    file (NO_WORK), and the reference run's times where ``reference`` is given (the run is of
    the config they were measured on); the Snakefile calls it once every rule is read."""
    NO_WORK.clear()
    NO_WORK.add("all")
    for rule in rules:
        if getattr(rule, "benchmark", None):
            BENCHMARKS[rule.name] = re.sub(r"\{[^}]*\}", "*", str(rule.benchmark))
        if hasattr(rule, "output") and not list(rule.output):
            NO_WORK.add(rule.name)
    REFERENCE.clear()
    REFERENCE_JOBS.clear()
    if reference is not None:
        REFERENCE.update(read_reference(reference))
        REFERENCE_JOBS.update(read_reference_jobs(reference))


def _table(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = [line.split("\t") for line in Path(path).read_text().splitlines() if line and not line.startswith("#")]
    return rows[0], rows[1:]


def read_reference(path: Path) -> dict[str, float]:
    """rule -> mean seconds a job, from a tab-separated table (# comments): one row a job (rule,
    wildcards, s), or one a rule (rule, jobs, mean_s)."""
    header, rows = _table(path)
    if "mean_s" in header:
        rule, mean = header.index("rule"), header.index("mean_s")
        return {row[rule]: float(row[mean]) for row in rows}
    return {r: sum(jobs.values()) / len(jobs) for r, jobs in read_reference_jobs(path).items()}


def read_reference_jobs(path: Path) -> dict[str, dict[tuple[str, ...], float]]:
    """rule -> job key -> seconds, from a table of one row a job (rule, wildcards: the values as
    the console names the job, ", " between them; s); {} for a table of one row a rule."""
    header, rows = _table(path)
    if "wildcards" not in header:
        return {}
    rule, values, s = header.index("rule"), header.index("wildcards"), header.index("s")
    out: dict[str, dict[tuple[str, ...], float]] = defaultdict(dict)
    for row in rows:
        out[row[rule]][job_key(row[values].split(", ") if row[values] else [])] = float(row[s])
    return dict(out)


def kept_times(path: str | Path | None = None) -> dict[str, dict[tuple[str, ...], float]]:
    """rule -> job key -> seconds, of the jobs earlier runs here saw finish (``path``: TIMES_FILE;
    {} where none)."""
    try:
        return read_reference_jobs(Path(path or TIMES_FILE))
    except (OSError, ValueError, IndexError):
        return {}


def keep_times(took: dict[str, list[tuple[tuple, float]]], path: str | Path | None = None) -> None:
    """Add this run's finished jobs' times to ``path`` (TIMES_FILE; a job's latest time replaces
    its earlier one), written whole to a temporary file and moved into place."""
    if not any(took.values()):
        return
    path = Path(path or TIMES_FILE)
    times = kept_times(path)
    for rule, jobs in took.items():
        for key, seconds in jobs:
            times.setdefault(rule, {})[tuple(key)] = seconds
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["rule\twildcards\ts"] + [f"{rule}\t{', '.join(key)}\t{s:.3f}" for rule, jobs in sorted(times.items())
                                     for key, s in sorted(jobs.items())]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("\n".join(rows) + "\n")
    os.replace(tmp, path)


def recorded_seconds(pattern: str, root: str | Path = ".") -> float | None:
    """The mean wall time (column s) of the benchmark records matching ``pattern`` under
    ``root`` (None: none there)."""
    times = [t for ts in _records(pattern, root).values() for t in ts]
    return sum(times) / len(times) if times else None


def recorded_jobs(pattern: str, root: str | Path = ".") -> dict[tuple[str, ...], float]:
    """Job key -> the mean wall time (column s) of its benchmark record, for the records matching
    ``pattern`` (a glob whose each * is a wildcard's value) under ``root``."""
    return {key: sum(ts) / len(ts) for key, ts in _records(pattern, root).items() if ts}


def _records(pattern: str, root: str | Path) -> dict[tuple[str, ...], list[float]]:
    """Job key (the values the glob's * stand for in a record's path) -> the times in its record."""
    values = re.compile("^" + "([^/]*)".join(map(re.escape, pattern.split("*"))) + "$")
    out = {}
    for path in sorted(Path(root).glob(pattern)):
        m = values.match(path.relative_to(root).as_posix())
        try:
            header, *rows = path.read_text().splitlines()
            col = header.split("\t").index("s")
            times = [float(row.split("\t")[col]) for row in rows if row.strip()]
        except (OSError, ValueError, IndexError):
            continue
        out[job_key(m.groups() if m else [path.stem])] = times
    return out


def duration(seconds: float) -> str:
    """``seconds`` as a reader says it: 45 s, 5 min 31 s, 2 h 4 min."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


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


def _lines(text: str) -> list[str]:
    """A log's non-empty lines, a progress bar's redraws (\\r) each its own; a traceback's
    caret lines left out (a failed job's log tail started on a stray `|  ^^^^` line)."""
    return [line.rstrip() for line in re.split(r"[\r\n]+", text) if line.strip() and not _CARETS.match(line)]


def named_error(log_text: str) -> list[str]:
    """The error a failed job's log ends with: its traceback's last line (the exception, named
    by the code that raised it; one of JOB_ERRORS by its message alone), else the log's last
    three lines."""
    lines = _lines(log_text)
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


class Console:
    """Turns Snakemake's log records into the lines a user reads; ``None`` from ``record``
    means "print it as Snakemake would"."""

    def __init__(self, dryrun: bool = False, show_failed_logs: bool = True):
        self.dryrun, self.show_failed_logs = dryrun, show_failed_logs
        self.running: dict[int, dict] = {}
        self.took: dict[str, list[tuple[tuple, float]]] = defaultdict(list)  # rule -> (job key, duration)s
        self.counts: dict[str, int] = {}  # rule -> jobs this run (Snakemake's job stats)
        self.started = None
        self.failed: list[tuple[str, str, list[str]]] = []  # (job, log, error lines)
        self.shown: dict[int, int] = {}  # job -> the step last printed for it
        self.last_done = None
        self.stopped: list[str] = []  # the jobs a signal stopped (each said once, as it stopped)
        self.resumed: set[int] = set()  # the running jobs whose resumed step has been said
        self.command = resume_command()
        self.said: set[str] = set()  # the messages said once a run (_ONCE)
        self.records: dict[str, dict[tuple, float]] = {}  # rule -> job key -> its earlier runs' time
        self.at_end: list[str] = []  # what finished jobs left for the run's end (runtime/at_end.py)
        self.kept: dict[str, dict[tuple, float]] | None = None  # earlier runs' times as this console saw them

    def record(self, rec: dict) -> list[str] | None:
        event = str(rec.get("event") or "")
        if event == ERROR and rec.get("exception") in OWN_ERRORS:  # dry runs included
            return own_error(str(rec.get("msg") or ""))
        if event == ERROR and rec.get("exception") == "MissingRuleException":  # a misspelled target
            from attnlearn.runtime.targets import missing_rule_lines

            return missing_rule_lines(str(rec.get("msg") or ""))
        if self.dryrun:
            return None
        if event in ("", ERROR):  # the scheduler's every-round words, a script's exit status: said better
            msg = str(rec.get("msg") or "")
            if self.stopped and not self.failed and _AFTER_FAILURE.match(msg.strip()):
                return []  # every job that ended early was stopped: the stop lines say it
            if _ONCE.match(msg.strip()):  # said again every scheduling round while jobs end
                if msg.strip() in self.said:
                    return []
                self.said.add(msg.strip())
            return [] if _ROUNDS.match(msg) or _EXIT.match(msg) else None
        if event == JOB_STARTED:  # "Execute 2 jobs...": the jobs' lines say it when they finish
            return []
        now = rec.get("created", time.time())
        if self.started is None:
            self.started = now
        if event == RUN_INFO and isinstance(rec.get("stats"), dict):
            self.counts = {k: v for k, v in rec["stats"].items() if k != "total"}
            return None
        if event == JOB_INFO:
            self.running[rec["jobid"]] = {**rec, "start": now}
            return []
        if event == JOB_FINISHED:
            job = self.running.pop(rec.get("job_id"), None)
            self.shown.pop(rec.get("job_id"), None)
            if job is None:
                return []
            took = now - job["start"]
            self.took[job["rule_name"]].append((self._key(job), took))
            for log in job.get("log") or []:
                self.at_end += [line for line in lines_at_end(whole(log)) if line not in self.at_end]
            what = made(job.get("output") or [])
            resumed = self._resumed(job) if rec.get("job_id") not in self.resumed else None
            self.resumed.discard(rec.get("job_id"))
            self.last_done = f"{time.strftime('%H:%M:%S', time.localtime(now))}  done {label(job)}" + (
                f" -> {what}" if what else "") + f"  ({duration(took)}" + (
                f"; resumed from step {resumed[0]:,} of {resumed[1]:,})" if resumed else ")")
            return []
        if event == PROGRESS:
            line = self.progress(rec["done"], rec["total"], now)
            done, self.last_done = self.last_done, None
            return [f"{done}  | {line}" if done else line]
        if event == JOB_ERROR:
            return self.error(rec)
        if event == SHELLCMD:
            return [f"    $ {rec['cmd']}"] if rec.get("cmd") else []
        return None

    def error(self, rec: dict) -> list[str]:
        """A failed job: Snakemake's words for it ("Error in rule ..."), its log, and the error
        its log ends with; kept for the summary."""
        job = {"rule_name": rec.get("rule_name", "?"), "wildcards": self.running.get(rec.get("jobid"), {}).get(
            "wildcards")}
        self.running.pop(rec.get("jobid"), None)
        logs = list(rec.get("log") or [])
        texts = [tail(log, 16384) for log in logs]
        stop = self.stop(label(job), texts)
        if stop:
            self.stopped.append(stop)
            return [stop]
        errors = [line for text in texts for line in named_error(text)]
        self.failed.append((label(job), ", ".join(logs), errors))
        lines = [f"Error in rule {label(job)}" + (f"; its log: {', '.join(logs)}" if logs else "")]
        shown = [line for text in texts for line in without_traceback(_lines(text))[-LOG_LINES:]] \
            if self.show_failed_logs else []
        lines += [f"    | {line}" for line in shown]  # the log's end: the traceback that names the error
        return lines + [f"    {line}" for line in errors if line not in shown[-1:]]

    def stop(self, job: str, texts: list[str]) -> str | None:
        """The line for a job a signal stopped (None: it failed): the step a training reached
        and the command that resumes it, in place of an error, its log and a traceback."""
        lines = [line for text in texts for line in _lines(text)]
        found = next((m for line in reversed(lines[-3:]) if (m := _STOPPED.search(line))), None)
        if found is None:
            return None
        again = f"`{self.command}` resumes it"
        if found["step"]:
            bar = training_progress("\n".join(texts))
            of = f" of {bar['steps']:,}" if bar else ""
            return f"stopped {job} at step {int(found['step']):,}{of} ({found['why']}); {again} from there"
        if found["second"]:
            return f"stopped {job} at once by a second {found['second']}; {again} from its last saved state"
        return f"stopped {job} (interrupted); `{self.command}` runs it again"

    def _resumed(self, job: dict) -> tuple[int, int] | None:
        """(step, steps) where a training job went on from a saved state, from its log's start."""
        m = _RESUMED.search(head(job["log"][0])) if job.get("log") else None
        return (int(m["step"]), int(m["steps"])) if m else None

    def left(self, done: int, total: int, now: float) -> tuple[float | None, list[str]]:
        """Seconds left, and the rules left out of it: the work left (job-seconds) over the
        parallelism so far (job-seconds of work, the running jobs' included, per second of wall
        time). A job yet to start costs its own earlier time (``_priors``: earlier runs' records,
        else the reference run's) at this run's speed: a rule's jobs differ (a synthetic_mt
        training takes six times a synthetic_cls one), so its mean over the jobs finished so far
        misprices the ones left. Its wildcards are not known before it starts, so it costs the
        mean of its rule's earlier times not yet matched by a job of this run; with none, its
        rule's mean in this run, else its running jobs' own estimates from their progress bars,
        else its rule's earlier mean; a rule with none of these is left out and named (an early
        estimate from small jobs would say seconds where trainings remain). A running job counts
        what its bar says is left, else its own price less what it has run. The time left is at
        least the longest job's left (in a run's tail one job runs alone: the work left over the
        parallelism so far said half of it)."""
        finished = [t for jobs in self.took.values() for _, t in jobs]
        if not finished or done >= total or self.started is None:
            return None, []
        guesses, bars = defaultdict(list), {}
        for jobid, job in self.running.items():
            p = self._bar(job)
            if p and p["left"] is not None:
                guesses[job["rule_name"]].append(now - job["start"] + p["left"])
                bars[jobid] = p["left"]
        longest = 0.0  # the longest job left: the run lasts at least that long, however many run at once
        if not self.counts:  # no job stats: every job left costs the mean
            todo, unknown = (total - done) * sum(finished) / len(finished), []
        else:
            todo, unknown, speed = 0.0, [], self._speed()
            for rule, n in self.counts.items():
                if rule in NO_WORK:
                    continue
                running = {jobid: job for jobid, job in self.running.items() if job["rule_name"] == rule}
                waiting = max(0, n - len(self.took.get(rule, [])) - len(running))
                if not waiting and not running:
                    continue
                priors = self._priors(rule)
                ts, prior = [t for _, t in self.took.get(rule, [])] or guesses.get(rule), self._rule_prior(rule)
                mean = sum(ts) / len(ts) if ts else None if prior is None else prior * speed
                seen = {key for key, _ in self.took.get(rule, [])} | {self._key(job) for job in running.values()}
                unseen = [t for key, t in priors.items() if key not in seen]
                each = sum(unseen) / len(unseen) * speed if unseen else mean
                lefts = []
                for jobid, job in running.items():
                    own = priors[self._key(job)] * speed if self._key(job) in priors else mean
                    lefts.append(bars[jobid] if jobid in bars else None if own is None else
                                 max(0.0, own - (now - job["start"])))
                if (waiting and each is None) or None in lefts:
                    unknown.append(rule)
                    continue
                todo += (waiting * each if waiting else 0.0) + sum(lefts)
                longest = max([longest, *lefts] + ([each] if waiting else []))
            unknown.sort()
        work = sum(finished) + sum(now - job["start"] for job in self.running.values())
        return (max(todo * (now - self.started) / work, longest) if work > 0 else None), unknown

    @staticmethod
    def _key(job: dict) -> tuple[str, ...]:
        return job_key((job.get("wildcards") or {}).values())

    def _priors(self, rule: str) -> dict[tuple[str, ...], float]:
        """Job key -> seconds, of a rule's jobs in earlier runs' benchmark records here (read once
        a run), else as an earlier run's console saw them finish here (TIMES_FILE: the rules
        without a benchmark record), else in the reference run (REFERENCE_JOBS)."""
        if self.kept is None:
            self.kept = kept_times()
        if rule not in self.records:
            self.records[rule] = recorded_jobs(BENCHMARKS[rule]) if rule in BENCHMARKS else {}
        return {**REFERENCE_JOBS.get(rule, {}), **self.kept.get(rule, {}), **self.records[rule]}

    def _rule_prior(self, rule: str) -> float | None:
        """A rule's mean time a job in earlier runs (``_priors``), else in a reference that has
        a time a rule only (REFERENCE)."""
        priors = self._priors(rule)
        return sum(priors.values()) / len(priors) if priors else REFERENCE.get(rule)

    def _speed(self) -> float:
        """How long this run's jobs take against the same jobs' earlier times: the sum of this
        run's finished jobs' times over the sum of their earlier ones (a job's own, matched by its
        key, or its rule's where the rule has no job's own), 1 before any. A sum, not a median of
        ratios: the long jobs, which make the time left, weigh most, and a 1-second job's
        rounding does not swing it."""
        mine = earlier = 0.0
        for rule, jobs in self.took.items():
            priors = self._priors(rule)
            for key, took in jobs:
                prior = priors.get(key) if priors else REFERENCE.get(rule)
                if prior is not None:
                    mine, earlier = mine + took, earlier + prior
        return mine / earlier if earlier > 0 else 1.0

    def progress(self, done: int, total: int, now: float) -> str:
        line = f"{done} of {total} jobs ({100 * done // max(total, 1)}%)"
        left, unknown = self.left(done, total, now)
        if left is None:
            return line
        unknown = [r for r in unknown if r not in NO_WORK]  # target rules: no work
        names = f" ({', '.join(unknown)})" if len(unknown) <= 3 else ""
        untimed = f"{len(unknown)} rule{'s' if len(unknown) > 1 else ''}{names} not timed yet, in this run or earlier ones"
        if unknown and left < 1:  # nothing known left but rules without a time: no number to give
            return line + f", time left not known: {untimed}"
        line += f", about {duration(left)} left"
        return line + f" besides {untimed}" if unknown else line

    @staticmethod
    def _bar(job: dict) -> dict | None:
        """A running job's last progress bar, from its log (None: no log, or no bar yet)."""
        return training_progress(tail(job["log"][0])) if job.get("log") else None

    def follow(self) -> list[str]:
        """A line per running job whose progress bar moved since it was last printed."""
        lines = []
        for jobid, job in list(self.running.items()):
            if jobid not in self.resumed and (resumed := self._resumed(job)):
                self.resumed.add(jobid)
                lines.append(f"    {label(job)}: resumed from step {resumed[0]:,} of {resumed[1]:,}")
            p = self._bar(job)
            if p is None or self.shown.get(jobid) == p["step"]:
                continue
            self.shown[jobid] = p["step"]
            left = f", {duration(p['left'])} left" if p["left"] is not None else ""
            lines.append(f"    {label(job)}: step {p['step']:,} of {p['steps']:,} "
                         f"({100 * p['step'] // max(p['steps'], 1)}%){left}")
        return lines

    def summary(self) -> list[str]:
        """What finished jobs left for the run's end (a model no better than chance), then the
        failed jobs' errors, as the run's last lines; where every job that ended early was
        stopped by a signal, one line that says so and how to go on."""
        out = list(self.at_end)
        if self.stopped and not self.failed:
            n = len(self.stopped)
            return out + [f"Stopped: {n} job{'s' if n > 1 else ''} (above); `{self.command}` goes on from where "
                          f"{'they' if n > 1 else 'it'} stopped."]
        if not self.failed:
            return out
        out.append(f"{len(self.failed)} job{'s' if len(self.failed) > 1 else ''} failed:")
        for job, logs, errors in self.failed:
            out.append(f"  {job}" + (f" (log: {logs})" if logs else ""))
            out.extend(f"    {line}" for line in errors)
        return out
