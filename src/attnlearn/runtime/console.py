"""What a run prints while it runs: one line per finished job, with the overall progress and an
estimate of the time left; every so often a line per running training (its step, from its job
log's progress bar); a failed job's own error message, and at the end, after Snakemake's last
words, each failed job's error again.

Snakemake's logger plugin (``snakemake_logger_plugin_attnlearn``, ``--logger attnlearn``, on in
the profiles) feeds this module Snakemake's log records as dicts; it does no I/O of its own
but reading job logs, so that tests drive it with records they make. What it reads in them is
runtime/log_events.py's; the time left is priced where every job's cost is, attnlearn.cost
(time_left.py).
"""

from __future__ import annotations

import time
from collections import defaultdict

from attnlearn.cost.time_left import NO_WORK, TimeLeft
from attnlearn.runtime.at_end import lines_at_end
from attnlearn.runtime.log_events import (AFTER_FAILURE, ERROR, EXIT, JOB_ERROR, JOB_FINISHED, JOB_INFO, JOB_STARTED,
                                          ONCE, OWN_ERRORS, PROGRESS, RESTORED, RESUMED, ROUNDS, RUN_INFO, SHELLCMD, STOPPED,
                                          head, label, log_lines, made, named_error, own_error, resume_command, tail,
                                          training_progress, whole, without_traceback)

LOG_LINES = 15  # of a failed job's log, printed under its error


def duration(seconds: float) -> str:
    """``seconds`` as a reader says it: 45 s, 5 min 31 s, 2 h 4 min."""
    s = int(round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


class Console(TimeLeft):
    """Turns Snakemake's log records into the lines a user reads; ``None`` from ``record``
    means "print it as Snakemake would"."""

    def __init__(self, dryrun: bool = False, show_failed_logs: bool = True):
        self.dryrun, self.show_failed_logs = dryrun, show_failed_logs
        self.running: dict[int, dict] = {}
        self.took: dict[str, list[tuple[tuple, float]]] = defaultdict(list)  # rule -> (job key, duration)s
        self.partial: dict[str, list[tuple[tuple, float]]] = defaultdict(list)  # the same, of jobs an earlier attempt began
        self.counts: dict[str, int] = {}  # rule -> jobs this run (Snakemake's job stats)
        self.started = None
        self.failed: list[tuple[str, str, list[str]]] = []  # (job, log, error lines)
        self.shown: dict[int, int] = {}  # job -> the step last printed for it
        self.last_done = None
        self.stopped: list[str] = []  # the jobs a signal stopped (each said once, as it stopped)
        self.resumed: set[int] = set()  # the running jobs whose resumed step has been said
        self.command = resume_command()
        self.said: set[str] = set()  # the messages said once a run (ONCE)
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
            if self.stopped and not self.failed and AFTER_FAILURE.match(msg.strip()):
                return []  # every job that ended early was stopped: the stop lines say it
            if ONCE.match(msg.strip()):  # said again every scheduling round while jobs end
                if msg.strip() in self.said:
                    return []
                self.said.add(msg.strip())
            return [] if ROUNDS.match(msg) or EXIT.match(msg) else None
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
            # a training that went on from a saved state, or only published what an earlier
            # attempt finished, took part of its cost: not a time to price its rule's jobs by
            (self.partial if self._partial(job) else self.took)[job["rule_name"]].append((self._key(job), took))
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
        shown = [line for text in texts for line in without_traceback(log_lines(text))[-LOG_LINES:]] \
            if self.show_failed_logs else []
        lines += [f"    | {line}" for line in shown]  # the log's end: the traceback that names the error
        return lines + [f"    {line}" for line in errors if line not in shown[-1:]]

    def stop(self, job: str, texts: list[str]) -> str | None:
        """The line for a job a signal stopped (None: it failed): the step a training reached
        and the command that resumes it, in place of an error, its log and a traceback."""
        lines = [line for text in texts for line in log_lines(text)]
        found = next((m for line in reversed(lines[-3:]) if (m := STOPPED.search(line))), None)
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
        m = RESUMED.search(head(job["log"][0])) if job.get("log") else None
        return (int(m["step"]), int(m["steps"])) if m else None

    @staticmethod
    def _partial(job: dict) -> bool:
        """Whether an earlier attempt began the job: its log starts by saying it resumed or restored."""
        start = head(job["log"][0]) if job.get("log") else ""
        return bool(RESUMED.search(start) or RESTORED.search(start))

    def progress(self, done: int, total: int, now: float) -> str:
        """The progress line: jobs done of the run's, and the time left (TimeLeft.left) or why none."""
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
