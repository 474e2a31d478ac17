"""A target that no rule makes is said with the targets there are.

Snakemake's own words for a misspelled target ("No rule to produce results/tables/tabel2.parquet
(if you use input functions make sure that they don't raise unexpected exceptions)") name no
target that exists. The console (runtime/console.py) says instead which target no
rule makes, the closest ones, and the tables by rule.
"""

from __future__ import annotations

import difflib
import os
import re

TABLES = "results/tables/"


def table_targets(rules) -> dict[str, list[str]]:
    """rule name -> the tables it makes (files under results/tables without wildcards)."""
    out = {}
    for rule in rules:
        files = [str(f) for f in rule.output if str(f).startswith(TABLES) and "{" not in str(f)]
        if files:
            out[rule.name] = files
    return out


def unknown_targets(targets, rules, exists=os.path.exists) -> list[str]:
    """The targets that no rule is named or makes, and that are not files already there."""
    names = {rule.name for rule in rules}
    unknown = []
    for target in targets:
        path = target if os.path.isabs(target) else os.path.relpath(target)
        if target in names or exists(path) or any(rule.is_producer(path) for rule in rules):
            continue
        unknown.append(target)
    return unknown


def message(unknown: list[str], rules) -> str:
    tables = table_targets(rules)
    known = [*{rule.name for rule in rules}, *(f for files in tables.values() for f in files)]
    lines = []
    for target in unknown:
        close = difflib.get_close_matches(target, known, n=1, cutoff=0.7)
        lines.append(f"no rule makes {target}" + (f" (did you mean {' or '.join(close)}?)" if close else ""))
    lines.append("The tables, as files or by their rule's name (`snakemake --cores 2 table2` makes "
                 "results/tables/table2.parquet and what it needs; `snakemake --list-rules` lists every rule):")
    for name, files in sorted(tables.items()):
        shown = ", ".join(f[len(TABLES):] for f in files)
        lines.append(f"  {name}: {shown}")
    return "\n".join(lines)


_RULES: list | None = None  # the workflow's rules, once read (remember_rules)
_MISSING = re.compile(r"^No rule to produce (?P<target>\S+) \(if you use input functions", re.M)


def remember_rules(workflow) -> None:
    """Keep the workflow's rules for ``missing_rule_lines`` (call at the Snakefile's end: the
    targets are known only when Snakemake builds its DAG, after the Snakefile is read, and it
    says an unknown one with a MissingRuleException, which the console rewrites)."""
    global _RULES
    _RULES = list(workflow.rules)


def missing_rule_lines(msg: str) -> list[str] | None:
    """Snakemake's MissingRuleException for a target, as ``message`` says it (None where the
    rules are not known here or the message is another)."""
    m = _MISSING.search(msg)
    if _RULES is None or m is None:
        return None
    return message([m["target"]], _RULES).splitlines()
