"""The time a running workflow has left, priced job by job from the jobs' earlier times: each
rule's benchmark records (results/benchmarks/...), the times an earlier run's console saw here
(TIMES_FILE), or a reference run of the built-in default config (default_times.tsv), at the
speed this run goes against them. The console (runtime/console.py) says it on each progress
line; benchmarks/time_left.py measures how close it comes.

It reads tables and files alone, no log of Snakemake's: a running job's progress bar comes from
the console that holds it (``TimeLeft._bar``, which the console overrides).
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from pathlib import Path

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
# the jobs (rule, wildcards) whose last time here was partial (a training resumed, or published
# from an earlier attempt's work): their benchmark records hold that part, not their cost, and
# price nothing until a whole run of the job replaces them; beside TIMES_FILE
PARTIAL_NAME = "partial_jobs.tsv"
# the times of a reference run of the built-in default config (default_times.tsv): rule -> mean
# seconds a job, and rule -> job key -> seconds; they price a job that neither this run nor an
# earlier one in this directory has timed, scaled by how fast this run's finished jobs went
# against the same jobs there. Empty under other configs (their jobs' sizes differ: a rule with
# no time is then said so in words)
REFERENCE: dict[str, float] = {}
REFERENCE_JOBS: dict[str, dict[tuple[str, ...], float]] = {}
DEFAULT_TIMES = Path(__file__).with_name("default_times.tsv")
# rule -> the keys of the jobs this run is to run (the DAG's, as the run starts): a job yet to
# start is priced by the earlier times of these alone, since a resumed run's earlier records
# include the jobs its killed attempt finished, which will not run again
PENDING: dict[str, list[tuple[str, ...]]] = {}


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


def remember_pending(workflow) -> None:
    """Keep the keys of the jobs the run's DAG is to run, rule by rule (the Snakefile's onstart:
    calls it, the DAG built and no job run). Where the DAG cannot be read, none are kept and a
    waiting job is priced as before there was a list: words about the run must not stop it."""
    PENDING.clear()
    try:
        for job in workflow.dag.needrun_jobs():
            key = job_key((getattr(job, "wildcards_dict", None) or {}).values())
            PENDING.setdefault(job.rule.name, []).append(key)
    except Exception:  # noqa: BLE001
        PENDING.clear()


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


def partial_jobs(path: str | Path | None = None) -> set[tuple[str, tuple[str, ...]]]:
    """(rule, job key) of the jobs whose last time here was partial (PARTIAL_NAME beside
    ``path``, TIMES_FILE; empty where none)."""
    try:
        return {(rule, key) for rule, jobs in read_reference_jobs(_partial_path(path)).items() for key in jobs}
    except (OSError, ValueError, IndexError):
        return set()


def _partial_path(path: str | Path | None) -> Path:
    return Path(path or TIMES_FILE).with_name(PARTIAL_NAME)


def keep_times(took: dict[str, list[tuple[tuple, float]]], path: str | Path | None = None,
               partial: dict[str, list[tuple[tuple, float]]] | None = None) -> None:
    """Add this run's finished jobs' times to ``path`` (TIMES_FILE; a job's latest time replaces
    its earlier one), and note the jobs whose time was ``partial`` beside it (PARTIAL_NAME; a
    whole time of the job takes it off); each written whole to a temporary file and moved into
    place."""
    path = Path(path or TIMES_FILE)
    if any(took.values()):
        times = kept_times(path)
        for rule, jobs in took.items():
            for key, seconds in jobs:
                times.setdefault(rule, {})[tuple(key)] = seconds
        _write_times(path, times)
    marked = partial_jobs(path)
    now = marked - {(rule, tuple(key)) for rule, jobs in took.items() for key, _ in jobs}
    now |= {(rule, tuple(key)) for rule, jobs in (partial or {}).items() for key, _ in jobs}
    if now != marked:
        jobs: dict[str, dict[tuple, float]] = defaultdict(dict)
        for rule, key in now:
            jobs[rule][key] = 0.0
        _write_times(_partial_path(path), jobs)


def _write_times(path: Path, times: dict[str, dict[tuple, float]]) -> None:
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


class TimeLeft:
    """The estimate of the time left, for a class that keeps a run's jobs as the console does:
    ``running`` (job id -> its job_info record and ``start``), ``took`` (rule -> (job key,
    seconds) of its finished jobs), ``partial`` (the same, of the finished jobs an earlier
    attempt began: they count as work done, not as a price), ``counts`` (rule -> jobs this
    run), ``started``, and the caches ``records`` (rule -> job key -> seconds, of its benchmark
    records) and ``kept`` (TIMES_FILE's, None until read)."""

    running: dict[int, dict]
    took: dict[str, list[tuple[tuple, float]]]
    partial: dict[str, list[tuple[tuple, float]]]
    counts: dict[str, int]
    started: float | None
    records: dict[str, dict[tuple, float]]
    kept: dict[str, dict[tuple, float]] | None

    @staticmethod
    def _bar(job: dict) -> dict | None:
        """A running job's last progress bar (``left``: its seconds left); none here: the console reads its log."""
        return None

    def left(self, done: int, total: int, now: float) -> tuple[float | None, list[str]]:
        """Seconds left, and the rules left out of it: the work left (job-seconds) over the
        parallelism so far (job-seconds of work, the running jobs' included, per second of wall
        time). A job yet to start costs its own earlier time (``_priors``: earlier runs' records,
        else the reference run's) at this run's speed: a rule's jobs differ (a synthetic_mt
        training takes six times a synthetic_cls one), so its mean over the jobs finished so far
        misprices the ones left. Which waiting job starts next is not known, so each costs the
        mean of the earlier times of its rule's jobs this run has yet to start (PENDING; where
        the run's jobs are not known, of all its rule's earlier times not yet matched by a job
        of this run); with none, its
        rule's mean in this run, else its running jobs' own estimates from their progress bars,
        else its rule's earlier mean; a rule with none of these is left out and named (an early
        estimate from small jobs would say seconds where trainings remain). A running job counts
        what its bar says is left, else its own price less what it has run. The time left is at
        least the longest job's left (in a run's tail one job runs alone: the work left over the
        parallelism so far said half of it)."""
        finished = [t for took in (self.took, self.partial) for jobs in took.values() for _, t in jobs]
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
                ended = self.took.get(rule, []) + self.partial.get(rule, [])
                waiting = max(0, n - len(ended) - len(running))
                if not waiting and not running:
                    continue
                priors = self._priors(rule)
                ts, prior = [t for _, t in self.took.get(rule, [])] or guesses.get(rule), self._rule_prior(rule)
                mean = sum(ts) / len(ts) if ts else None if prior is None else prior * speed
                seen = {key for key, _ in ended} | {self._key(job) for job in running.values()}
                # the earlier times of this run's jobs yet to start, where known (else every record's)
                unseen = [priors[key] for key in PENDING.get(rule, priors) if key not in seen and key in priors]
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
            partial = partial_jobs()
            self.records[rule] = {key: t for key, t in recorded_jobs(BENCHMARKS[rule]).items()
                                  if (rule, key) not in partial} if rule in BENCHMARKS else {}
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
