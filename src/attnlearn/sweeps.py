"""Sweeps: one setting of one dataset entry over a list of values, each value a dataset of its own.

A config's ``sweeps:`` section names, per sweep, a base entry of ``datasets:``, a key (a dotted
path into a dataset entry: ``train.lr``, ``model.hidden``, ``source.options.p_lexical``,
``source.splits.train``), the values and the replicates per value. ``expand`` writes one dataset
entry per value, ``<sweep>_<i>``: the base entry with the key set to the i-th value and Table 2's
replicates filled in (standard, uniform and proxy seeds, as a seeded row lists them), so every
value is an ordinary dataset of the DAG and every existing rule runs it. A sweep's name in
``only`` selects its datasets.

Where the key leaves the data as it is (anything outside ``source`` and ``tokenizer``), the
datasets share one preparation: ``data_of`` maps each to the sweep's first dataset, whose
prepared, tokenized and counted files the others link to (rules/sweep.smk).

Ground floor: this module imports nothing of the package, so that config/ (which checks the
expanded entries as it checks any other) and every stage can read it.
"""

from __future__ import annotations

import copy
import re

# Keys a sweep may not set: the task chooses the model family and the defaults the entry is
# merged over; the seed lists are what ``replicates`` fills in
FIXED = {("task",): "the task decides the model family and its defaults: sweep within one task",
         ("runs",): "the runs are Table 2's replicates: set `replicates` instead",
         ("proxy", "seeds"): "the proxy seeds are Table 2's replicates: set `replicates` instead"}
# A key under these leaves the prepared and tokenized data unchanged: the values share them
DATA_SECTIONS = ("source", "tokenizer")
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*$")


def key_path(key: str) -> tuple[str, ...]:
    return tuple(part for part in str(key).split("."))


def dataset_names(name: str, values: list) -> list[str]:
    return [f"{name}_{i}" for i in range(len(values))]


def seeds(replicates: int) -> dict:
    """Table 2's rotate replicates (compare.replicate_design): replicate r takes the r-th standard
    run as A, the r-th uniform run and the r-th proxy seed. Two standard runs at least, since
    A(alpha*, xi^B) needs a B run."""
    return {"runs": {"standard": list(range(1, max(replicates, 2) + 1)), "uniform": list(range(1, replicates + 1)),
                     # the other variants feed no sweep column (Table 10, TanhMax, optimal attention)
                     "frozen": [], "tanhmax": [], "additive": []},
            "proxy_seeds": list(range(replicates))}


def _resolve(schema: dict, defs: dict) -> dict:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = defs[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def key_problem(path: tuple, dataset_schema: dict, defs: dict) -> str | None:
    """What is wrong with sweeping ``path`` in a dataset entry (None: nothing). The path must
    follow the dataset schema's keys; below a key the schema leaves open (source.options, which
    the generator or parser defines) config/'s own check of the expanded entry judges it."""
    if not path or any(not part for part in path):
        return "a dotted path into a dataset entry, e.g. train.lr or source.options.p_lexical"
    for fixed, why in FIXED.items():
        if path[:len(fixed)] == fixed:
            return f"{'.'.join(path)} cannot be swept: {why}"
    node = _resolve(dataset_schema, defs)
    for depth, part in enumerate(path):
        props = node.get("properties") if isinstance(node, dict) else None
        if props is None:
            if isinstance(node, dict) and node.get("type") == "object":
                return None  # an open mapping (source.options): checked on the expanded entries
            return f"{'.'.join(path[:depth])} takes a value, not keys below it (no {'.'.join(path)})"
        if part not in props:
            known = ", ".join(sorted(props))
            where = ".".join(path[:depth]) or "a dataset entry"
            return f"{'.'.join(path)}: {where} has no key {part!r} (known: {known})"
        node = _resolve(props[part], defs)
    return None


def _set(entry: dict, path: tuple, value) -> None:
    for part in path[:-1]:
        if not isinstance(entry.get(part), dict):
            entry[part] = {}
        entry = entry[part]
    entry[path[-1]] = copy.deepcopy(value)


def shares_data(path: tuple) -> bool:
    return path[0] not in DATA_SECTIONS


# A key under these changes the standard runs only (init: where they start): every other run of
# the values is the same run, trained once
STANDARD_ONLY_SECTIONS = ("init",)


def expand(config: dict, dataset_schema: dict, defs: dict) -> tuple[dict, list[tuple]]:
    """``config`` with every sweep's datasets added to ``datasets`` (after the entries it has),
    ``only``'s sweep names replaced by their datasets, and ``sweeps`` resolved (per sweep: base,
    key, values, replicates, plan, ``datasets`` in value order, ``data``: whether they share one
    preparation of the data, see ``data_of``). Problems as (path, message, at) with
    the sweep's keys as paths: a bad key, an empty list and the like stop the config before any
    job. An entry a sweep writes is checked with the others afterwards; ``where`` says where
    its problems were set."""
    sweeps = config.get("sweeps") or {}
    datasets = config.get("datasets") if isinstance(config.get("datasets"), dict) else {}
    if not isinstance(sweeps, dict) or not sweeps:
        return config, []  # no key added: a config without sweeps resolves as it did before them
    problems, added, resolved = [], {}, {}
    for name, sweep in sweeps.items():
        at = ("sweeps", name)
        if not isinstance(sweep, dict):
            continue  # the schema said so
        before = len(problems)
        if not NAME.match(str(name)):
            problems.append((at, "a sweep's name is letters and digits, words joined by '_' (it names its datasets "
                                 "and files)", at))
        base, key, values = sweep.get("base"), sweep.get("key"), sweep.get("values")
        if base not in datasets:
            problems.append(((*at, "base"), f"names {base!r}, which is not under 'datasets' (there: "
                                            f"{sorted(datasets)})", (*at, "base")))
        path = key_path(key) if isinstance(key, str) else ()
        why = key_problem(path, dataset_schema, defs)
        if why:
            problems.append(((*at, "key"), why, (*at, "key")))
        if isinstance(values, list) and not values:
            problems.append(((*at, "values"), f"an empty list: give {key} at least one value", (*at, "values")))
        elif isinstance(values, list):
            repeated = sorted({repr(v) for i, v in enumerate(values) if v in values[:i]})
            if repeated:
                problems.append(((*at, "values"), f"{key}: each value once (repeated: {', '.join(repeated)})",
                                 (*at, "values")))
        names = dataset_names(name, values) if isinstance(values, list) else []
        taken = [n for n in names if n in datasets or n in added]
        if taken:
            problems.append((at, f"the sweep's datasets would be named {taken}, which the config already has",
                             at))
        if len(problems) > before or not isinstance(values, list):
            continue
        replicates = int(sweep.get("replicates", 3))
        fill = seeds(replicates)
        for ds_name, value in zip(names, values):
            entry = copy.deepcopy(datasets[base])
            _set(entry, path, value)
            entry["runs"] = copy.deepcopy(fill["runs"])
            if isinstance(entry.get("init"), dict) and entry["init"].get("from") == "donor":
                entry["runs"]["donor"] = list(entry["runs"]["standard"])  # each standard run's own start
            entry["proxy"] = {**(entry.get("proxy") or {}), "seeds": list(fill["proxy_seeds"])}
            added[ds_name] = entry
        resolved[name] = {"base": base, "key": key, "values": list(values), "replicates": replicates,
                          "plan": sweep.get("plan"), "datasets": names,
                          "data": shares_data(path), "runs": path[0] in STANDARD_ONLY_SECTIONS}
    only = config.get("only")
    if isinstance(only, list):
        only = [n for item in only for n in (resolved[item]["datasets"] if item in resolved else [item])]
    out = {**config, "datasets": {**datasets, **added}, "sweeps": resolved}
    if "only" in config:
        out["only"] = only
    return out, problems


def _to_first(config: dict, shares: str) -> dict[str, str]:
    """Dataset -> its sweep's first selected dataset, for the sweeps whose flag ``shares`` ("data",
    "runs") is set (``only`` may leave the first value out); the first maps to nothing."""
    out = {}
    for sweep in config.get("sweeps", {}).values():
        selected = [d for d in sweep["datasets"] if d in config["datasets"]]
        if sweep.get(shares) and selected:
            out.update({d: selected[0] for d in selected[1:]})
    return out


def data_of(config: dict) -> dict[str, str]:
    """Dataset -> the dataset whose prepared, tokenized and counted data it reads, for the sweeps'
    datasets that share data: each reads its sweep's first selected dataset's (``only`` may
    leave the first value out). Every other dataset reads its own."""
    return _to_first(config, "data")


def runs_of(config: dict) -> dict[str, str]:
    """Dataset -> the dataset whose runs other than the standard ones it reads, for the values of
    a sweep whose key changes the standard runs only (under ``init``): each reads its sweep's first
    selected dataset's uniform, donor and other runs, which are those it would train."""
    return _to_first(config, "runs")


def where(config: dict, path: tuple, at: tuple, message: str = "") -> tuple[tuple, tuple]:
    """(path, at) of a problem of an expanded entry, as the user set it: a key under the swept
    key that the entry does not know (an unknown generator option) is the sweep's key; any other
    problem at or under it is the value's, at its item in the sweep's list (the path still names
    the value's dataset); elsewhere, it is the base entry's (every value has it there, said once).
    A problem of any other dataset stays as it is."""
    if len(at) < 2 or at[0] != "datasets":
        return path, at
    for name, sweep in config.get("sweeps", {}).items():
        if at[1] not in sweep["datasets"]:
            continue
        key, rest = key_path(sweep["key"]), tuple(at[2:])
        if rest[:len(key)] == key or key[:len(rest)] == rest:
            if message.startswith("unknown"):
                return ("sweeps", name, "key"), ("sweeps", name, "key")
            return path, ("sweeps", name, "values", sweep["datasets"].index(at[1]))
        return ("datasets", sweep["base"], *path[2:]), ("datasets", sweep["base"], *rest)
    return path, at


def describe(config: dict) -> list[str]:
    """The sweeps as the console lists them at planning time (dry runs included): a line per
    sweep, then a line per value and the dataset that runs it."""
    lines = []
    for name, sweep in config.get("sweeps", {}).items():
        selected = [d for d in sweep["datasets"] if d in config["datasets"]]
        if not selected:
            continue
        data = (f"data prepared once, by {selected[0]}" if sweep["data"] and len(selected) > 1
                else "each value prepares its own data")
        if sweep.get("runs") and len(selected) > 1:
            data += f"; runs but the standard ones trained once, by {selected[0]}"
        lines.append(f"sweep {name}: {sweep['key']} of {sweep['base']} over {len(sweep['values'])} values, "
                     f"{sweep['replicates']} replicates each ({data})")
        for ds, value in zip(sweep["datasets"], sweep["values"]):
            if ds in selected:
                lines.append(f"  {ds}: {sweep['key']} = {value}")
    return lines
