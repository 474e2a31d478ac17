"""Why jobs rerun, said once per rule when a run starts.

Snakemake says why each job runs only in a dry run (``-n``: "Params have changed since last
execution", per job, without the key). A real run reran a dataset's 23 jobs after
``probe.max_examples`` changed and said nothing. At the start of a run this prints,
for the jobs whose outputs exist from an earlier run and are out of date, one line per rule
with the cause: the params that changed (down to the config key: ``probe.max_examples``), the
library modules edited (``code changed: models/seq2seq.py``; the modules are inputs,
runtime/codedeps.py), the input files newer than the outputs, a run stopped before its end, a
training that goes on from the step where a stop left it (its log's last words: "training stopped
at step N"); and one line for the jobs that rerun only because jobs above them do. Other jobs
making outputs for the first time are not reruns and are not listed.
"""

from __future__ import annotations

import ast
import os
import re
import sys

SHOWN = 3  # keys, modules or files named per cause; the rest are counted
RULES_SHOWN = 8  # rules with a line of their own; the rest are counted on one line


def changed_keys(old, new, prefix: str) -> list[str]:
    """The dotted keys whose values differ between two params (dicts: recursively)."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = []
        for k in sorted(set(old) | set(new), key=str):
            if k not in old or k not in new or old[k] != new[k]:
                keys += changed_keys(old.get(k), new.get(k), f"{prefix}.{k}")
        return keys
    return [prefix] if old != new else []


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def params_keys(job, change) -> list[str]:
    """Which of the job's params changed, as dotted config keys: Snakemake keeps each param's
    repr without its name, so the new values are named from the job's params and each is set
    beside the old value most like it (a dict: the one sharing most keys)."""
    old = [_literal(r) for r in getattr(change, "only_old", ())]
    keys = []
    for name, value in job.params.items():
        if repr(value) not in getattr(change, "only_new", ()):
            continue
        like = [o for o in old if type(o) is type(value)]
        if isinstance(value, dict):
            like.sort(key=lambda o: -len(set(o) & set(value)))
        keys += changed_keys(like[0], value, name) if like else [name]
    return keys or ["(a param)"]


def _some(names, shown: int = SHOWN) -> str:
    names = list(dict.fromkeys(names))
    return ", ".join(names[:shown]) + (f" and {len(names) - shown} more" if len(names) > shown else "")


def causes(job, reason, code_roots) -> dict[str, list[str]]:
    """A rerun job's causes: {kind: [what]} (empty where the job runs for the first time or only
    because a job above it runs). ``code_roots``: folders (ending in a separator) whose files
    are code, named relative to them."""
    out = {}
    if reason.forced:
        out["forced"] = []
    if reason.incomplete_output:
        out["stopped before its end (incomplete outputs)"] = []
    if reason.params_changed:
        out["params changed"] = params_keys(job, reason.params_changed)
    if reason.code_changed:
        out["code changed"] = ["its rule's code"]
    if reason.software_stack_changed:
        out["software environment changed"] = []
    if reason.input_changed:
        out["its set of inputs changed"] = []
    newer = set(reason.updated_input) - set(reason.updated_input_run)
    for f in sorted(map(str, newer)):
        root = next((r for r in code_roots if os.path.abspath(f).startswith(r)), None)
        if root:  # a library module or a rule's script: an input of its jobs (runtime/codedeps.py)
            out.setdefault("code changed", []).append(os.path.relpath(os.path.abspath(f), root))
        else:
            out.setdefault("input newer", []).append(f)
    return out


def own_causes(job, persistence, code_roots) -> dict[str, list[str]]:
    """The causes of a job that Snakemake reruns because a job above it reruns, which it then
    does not look for: its changed params and its code modules newer than its outputs (where
    they all exist: else it makes them for the first time)."""
    outputs = [str(f) for f in job.output]
    if not outputs or not all(os.path.exists(f) for f in outputs):
        return {}
    out = {}
    change = persistence.params_changed(job) if persistence is not None else None
    if change:
        out["params changed"] = params_keys(job, change)
    oldest = min(os.stat(f).st_mtime for f in outputs)
    code = [os.path.relpath(os.path.abspath(f), root) for f in map(str, job.input) for root in code_roots
            if os.path.abspath(f).startswith(root) and os.path.exists(f) and os.stat(f).st_mtime > oldest]
    if code:
        out["code changed"] = sorted(code)
    return out


# a training's last words when a signal stopped it (training/train.py), which its rerun resumes
_STOPPED = re.compile(r"training stopped at step (?P<step>\d+) \(")
RESUMED = "resumed from where a stop left it"


def stopped_at(job) -> int | None:
    """The step at which the job's last attempt stopped, where its log ends with a training's stop
    (the rerun goes on from there); None for any other log."""
    for log in getattr(job, "log", None) or []:
        try:
            with open(log, "rb") as f:
                f.seek(max(0, os.fstat(f.fileno()).st_size - 4096))
                last = [line for line in f.read().decode("utf-8", errors="replace").splitlines() if line.strip()]
        except OSError:
            continue
        found = _STOPPED.search(last[-1]) if last else None
        if found:
            return int(found["step"])
    return None


def _name(job) -> str:
    values = getattr(job, "wildcards_dict", None) or {}
    return "/".join(map(str, values.values())) or job.rule.name


def summary(dag, code_roots) -> list[str]:
    """The lines: one per rule with reruns of its own causes, one for the jobs that follow."""
    rules, follow = {}, {}
    persistence = getattr(getattr(dag, "workflow", None), "persistence", None)
    for job in dag.needrun_jobs():
        if not job.output:  # a target rule (all): no work of its own
            continue
        reason = dag.reason(job)
        missing = set(map(str, reason.missing_output))
        # made for the first time, not a rerun: Snakemake may still list its inputs as updated
        # (the training-split probes of kept runs read "input newer: checkpoints")
        first = set(map(str, job.output)) <= missing
        found = {} if first else causes(job, reason, code_roots)
        if not found and missing and (step := stopped_at(job)) is not None:
            # a training that a stop left without outputs (Snakemake names the missing log
            # table alone, not the checkpoint folder) goes on from where it stopped
            found = {RESUMED: [f"{_name(job)} at step {step:,}"]}
        if first and not found:
            continue
        if not found and reason.updated_input_run:
            found = own_causes(job, persistence, code_roots)
        name = job.rule.name
        if found:
            entry = rules.setdefault(name, [0, {}])
            entry[0] += 1
            for kind, what in found.items():
                entry[1].setdefault(kind, []).extend(what)
        elif reason.updated_input_run and not reason.missing_output:
            follow[name] = follow.get(name, 0) + 1
    if not rules and not follow:
        return []
    lines = ["Why jobs rerun (their outputs from an earlier run are out of date):"]
    for name, (n, kinds) in list(rules.items())[:RULES_SHOWN]:
        said = [f"{kind}: {_some(what)}" if what else kind for kind, what in kinds.items()]
        lines.append(f"  {name} ({n} job{'s' if n > 1 else ''}): {'; '.join(said)}")
    if len(rules) > RULES_SHOWN:
        rest = list(rules)[RULES_SHOWN:]
        lines.append(f"  and {sum(rules[r][0] for r in rest)} jobs of {_some(rest)}")
    if follow:
        n = sum(follow.values())
        lines.append(f"  then {n} job{'s' if n > 1 else ''} of {_some(follow, 6)} on their outputs")
    return lines


def explain(workflow, code_roots) -> None:
    """Print the lines; the Snakefile's onstart: calls it (the DAG is built, no job has run; never
    in a dry run, whose per-job reasons Snakemake prints itself, nor in a job's own process)."""
    if not workflow.is_main_process or workflow.dryrun:
        return
    roots = [os.path.abspath(root) + os.sep for root in code_roots]
    try:
        lines = summary(workflow.dag, roots)
    except Exception as e:  # noqa: BLE001 (words about the run must not stop it)
        lines = [f"(why jobs rerun: not known: {e!r})"]
    if lines:
        print("\n".join(lines), file=sys.stderr, flush=True)
