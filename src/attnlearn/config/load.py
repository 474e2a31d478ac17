"""Loading and validating the workflow config.

Each dataset entry is merged over its task family's defaults
(``task_defaults.yaml``, the paper's settings) and validated against
``config/schema.yaml``; a wrong key or value stops with a message naming it.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import yaml

from attnlearn import sweeps
from attnlearn.config.checks import (Problem, check_glove, check_init, check_local_files, check_measures,
                                     check_model, check_source_options, check_train, check_transfer,
                                     schema_problems)
from attnlearn.config.files import ConfigError, key_lines, locate

TASK_DEFAULTS = yaml.safe_load((Path(__file__).parents[1] / "task_defaults.yaml").read_text())


def _warn(message: str) -> None:
    print(f"WARNING: {message}", file=sys.stderr)


def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def load_config(config: dict, schema_path, source: str = "config", warn=_warn, cli: dict | None = None,
                files: list | None = None, data_root=None) -> dict:
    """Validate ``config`` and return it with every dataset fully resolved. ``warn`` gets the
    messages about settings that are valid but probably not meant. ``cli``: the values given
    with Snakemake's --config, whose nested leaves are read as YAML here. ``files``: the config
    files merged into ``config``, in order, whose lines the errors name (default: ``source``
    where it is a file). ``data_root``: the directory the datasets' local files (``path``) are
    read from, where each must exist (default: the working directory, where Snakemake runs).
    Every error is reported at once, one line each:
    ``config.yaml:23: datasets.tiny_mt.train: unknown key 'trian' (did you mean 'train'?)``."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    config = copy.deepcopy(config)
    given_override = copy.deepcopy(config.get("override")) or {}
    _retype_cli(config, cli or {})
    # the keys set from the command line, whose values Snakemake's --config passes as text
    if isinstance(config.get("only"), str):  # only=sst or only=[sst, sms_spam]
        only = _typed(config["only"])
        config["only"] = [only] if isinstance(only, str) else only
    for key in ("analyses", "override"):  # 'analyses={effective: {erasure_k: [2]}}'; their strings
        if isinstance(config.get(key), dict):  # are plain words, which YAML keeps as they are
            config[key] = _typed(config[key])
    problems = schema_problems(config, {**schema, "properties": {**schema["properties"],
                                                                 "datasets": {"type": "object"}}})
    if isinstance(config.get("datasets"), dict) and not config["datasets"]:
        problems.append(Problem(("datasets",), "must name at least one dataset"))
    dataset_schema = {"$defs": schema["$defs"], **schema["$defs"]["dataset"]}
    override = config.get("override") if isinstance(config.get("override"), dict) else {}
    config["override"] = override
    if not any(p.path[:1] == ("sweeps",) for p in problems):
        # each sweep's values become datasets, checked below as any other (attnlearn/sweeps.py)
        config, swept = sweeps.expand(config, dataset_schema, schema["$defs"])
        problems += [Problem(path, message, at) for path, message, at in swept]
    resolved = {}
    selected, only_problems = _selected(config)
    problems += only_problems
    for name, entry in selected.items():
        if not isinstance(entry, dict) or entry.get("task") not in TASK_DEFAULTS:
            problems.append(Problem(("datasets", name, "task"), f"must be one of {sorted(TASK_DEFAULTS)}"))
            continue
        merged = deep_merge(deep_merge(TASK_DEFAULTS[entry["task"]], entry), override)
        dataset_problems = schema_problems(merged, dataset_schema, ("datasets", name))
        # the checks below read keys the schema vouches for: on an entry the schema refused,
        # a check that trips on a missing or mistyped key has nothing to add to its errors
        for check in (lambda: check_source_options(name, merged["source"], merged["task"]),
                      lambda: check_measures(name, merged["probe"]["measures"]),
                      lambda: check_glove(name, merged, config.get("glove", {})),
                      lambda: check_model(name, merged),
                      lambda: check_train(name, merged, warn),
                      lambda: check_init(name, merged),
                      lambda: check_local_files(name, merged["source"], Path(data_root or Path.cwd()))):
            try:
                dataset_problems += check()
            except (KeyError, TypeError, AttributeError):
                if not dataset_problems:
                    raise
        for p in dataset_problems:  # a sweep's entry: each problem named where the sweep or its base entry set it
            path, at = sweeps.where(config, p.path, p.at, p.message)
            problems.append(Problem(path, p.message, at))
        resolved[name] = merged
    problems += check_transfer(config, resolved)
    # one problem of a base entry is every value's: said once
    problems = list({(p.label(), p.message, p.at): p for p in problems}.values())
    if problems:
        if files is None:
            files = [source] if Path(source).is_file() else []
        located = [(str(f), key_lines(f)) for f in files]
        cli_given = {**(cli or {}), **({"override": given_override} if "override" in (cli or {}) else {})}
        where = [locate(p.at, located, cli_given, given_override) for p in problems]
        order = {name: i for i, (name, _) in enumerate(located)}

        def reading_order(i):  # as the files read, top to bottom; --config first
            name, _, line = where[i].rpartition(":")
            return (order.get(name, -1), int(line)) if line.isdigit() else (-1, 0)

        lines = [f"{where[i]}: {problems[i].label()}: {problems[i].message}"
                 for i in sorted(range(len(problems)), key=reading_order)]
        count = f"{len(problems)} errors" if len(problems) > 1 else "1 error"
        raise ConfigError(f"invalid config ({source}): {count}\n" + "\n".join(lines))
    config["datasets"] = resolved
    return canonical(config)


def _selected(config: dict) -> tuple[dict, list[Problem]]:
    """The dataset entries that ``only`` names (all where it is null), in the config's order,
    and the problem of an ``only`` that names a dataset the config has not."""
    datasets = config.get("datasets") if isinstance(config.get("datasets"), dict) else {}
    only = config.get("only")
    if not isinstance(only, list):
        return datasets, []
    unknown = [n for n in only if n not in datasets]
    problems = [Problem(("only",), f"names {unknown}, which are not under 'datasets' "
                                   f"(there: {sorted(datasets)})")] if unknown else []
    return {n: e for n, e in datasets.items() if n in only}, problems


def _retype_cli(config: dict, cli: dict, nested: bool = False) -> None:
    """Snakemake's --config reads `tables={train_split: false}` with YAML's base loader, which
    keeps every nested leaf as text ('false'); read the leaves that the command line set as
    YAML, in place, leaving the config file's own text values as they are (a top-level
    `key=value` Snakemake types itself)."""
    for key, value in cli.items():
        if key not in config:
            continue
        if isinstance(value, dict) and isinstance(config[key], dict):
            _retype_cli(config[key], value, nested=True)
        elif isinstance(value, (dict, list)) or (nested and isinstance(value, str)):
            config[key] = _typed(value)


def _typed(obj):
    """Text leaves read as YAML: Snakemake's --config passes nested values as text."""
    if isinstance(obj, dict):
        return {k: _typed(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_typed(v) for v in obj]
    return yaml.safe_load(obj) if isinstance(obj, str) else obj


def canonical(obj):
    """Dicts with keys sorted, recursively. Snakemake compares params by repr, which
    depends on key order: this keeps a reordered config from rerunning anything."""
    if isinstance(obj, dict):
        return {k: canonical(obj[k]) for k in sorted(obj)}
    if isinstance(obj, list):
        return [canonical(v) for v in obj]
    return obj
