"""Loading and validating the workflow config.

Each dataset entry is merged over its task family's defaults
(``task_defaults.yaml``, the paper's settings) and validated against
``config/schema.yaml``; a wrong key or value stops with a message naming it.
"""

from __future__ import annotations

import copy
import difflib
import inspect
import sys
from pathlib import Path

import jsonschema
import yaml

from attnlearn import sweeps
from attnlearn.data import own  # noqa: F401  (registers the own-data kinds in PARSERS)
from attnlearn.data.parsers import PARSERS
from attnlearn.data.synthetic import GENERATORS
from attnlearn.probing.measures import MEASURE_NAMES
from attnlearn.training.variants import VARIANTS

TASK_DEFAULTS = yaml.safe_load((Path(__file__).parent / "task_defaults.yaml").read_text())


class ConfigError(ValueError):
    pass


def read_config_file(path) -> dict:
    """A YAML config file as a dict. A syntax error names the file, line and column; an empty
    file, or one whose top level is not a mapping, is refused naming the file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the config file ({e})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else str(path)
        problem = "; ".join(filter(None, [getattr(e, "context", None), getattr(e, "problem", None)])) or str(e)
        raise ConfigError(f"{where}: not valid YAML: {problem}") from None
    if data is None:
        raise ConfigError(f"{path}: the config file is empty (or only comments); it needs at least 'datasets:'")
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config's top level must be keys (datasets:, device:, ...), "
                          f"not a {type(data).__name__}")
    return data


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


def _with_defaults(validator_class):
    """A validator that fills in schema defaults while validating."""
    set_props = validator_class.VALIDATORS["properties"]

    def properties(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if "default" in sub:
                    instance.setdefault(name, copy.deepcopy(sub["default"]))
        yield from set_props(validator, properties, instance, schema)

    return jsonschema.validators.extend(validator_class, {"properties": properties})


_Validator = _with_defaults(jsonschema.Draft202012Validator)


class Problem:
    """One thing wrong with a config: the dotted key it is about (``path``), what is wrong, and
    the key whose line in the file to name (``at``; ``path`` where None)."""

    def __init__(self, path, message: str, at=None):
        self.path, self.message = tuple(path), message
        self.at = tuple(at) if at is not None else self.path

    def label(self) -> str:
        return ".".join(map(str, self.path)) or "(top level)"


# keys that were replaced: (section, old key) -> what to write instead
RENAMED = {("proxy", "seed"): "proxy.seed was replaced by proxy.seeds, a list: write `seeds: [N]`; "
                              "several seeds train independent proxies, one per Table 2 replicate"}


def _schema_problems(instance, schema, prefix=()) -> list[Problem]:
    """Every schema error, not the first: an unknown key is one problem per key (with the key it
    was probably meant to be), so that a config with `trian` in four datasets is told all four."""
    problems = []
    for e in sorted(_Validator(schema).iter_errors(instance), key=lambda e: list(map(str, e.absolute_path))):
        path = (*prefix, *e.absolute_path)
        if e.validator == "additionalProperties" and isinstance(e.instance, dict):
            known = list(e.schema.get("properties", {}))
            for key in [k for k in e.instance if k not in known]:
                renamed = [h for (s, old), h in RENAMED.items() if path and s == path[-1] and old == key]
                close = difflib.get_close_matches(str(key), known, n=1, cutoff=0.6)
                hint = f" ({renamed[0]})" if renamed else f" (did you mean {close[0]!r}?)" if close else \
                    f" (known: {', '.join(known)})" if known and len(known) <= 12 else ""
                problems.append(Problem(path, f"unknown key {key!r}{hint}", at=(*path, key)))
            continue
        # Snakemake's --config reads `key=true` as the string 'true'; only True / False are booleans
        hint = (" (on the command line write --config KEY=True or KEY=False)"
                if e.validator == "type" and e.instance in ("true", "false", "yes", "no") else "")
        problems.append(Problem(path, f"{e.message}{hint}"))
    return problems


def _check_source_options(name: str, source: dict, task: str) -> list[Problem]:
    """Generator options must match the generator's parameters exactly; a parser's
    files must be exactly those it reads, and its options among those it knows."""
    kind, at = source["kind"], ("datasets", name, "source")
    given = set(source.get("options", {}))
    problems = []
    if kind in GENERATORS:
        signature = inspect.signature(GENERATORS[kind]).parameters
        params = set(signature) - {"n_sentences", "seed"}
        # a knob added with a default (synthetic_mt's p_lexical) may be left out: older configs
        # keep their data
        required = {p for p in params if signature[p].default is inspect.Parameter.empty}
        for option in sorted(given - params):
            close = difflib.get_close_matches(option, sorted(params - given) or sorted(params), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed: {sorted(params)}"
            problems.append(Problem((*at, "options"), f"unknown option {option!r} for kind {kind!r} ({hint})",
                                    at=(*at, "options", option)))
        if required - given:
            problems.append(Problem((*at, "options"),
                                    f"missing option(s) {sorted(required - given)} for kind {kind!r}"))
        if "splits" not in source:
            problems.append(Problem(at, f"kind {kind!r} needs 'splits' (examples per split)"))
        return problems
    parse = PARSERS[kind]
    if given - parse.options:
        problems.append(Problem((*at, "options"), f"unknown option(s) {sorted(given - parse.options)} for kind "
                                f"{kind!r}; allowed: {sorted(parse.options)}"))
    files = set(source.get("files", {}))
    allowed = [set(names) for names in getattr(parse, "file_sets", [parse.files])]
    if files not in allowed:
        problems.append(Problem((*at, "files"), f"kind {kind!r} needs exactly the files "
                                f"{' or '.join(str(sorted(names)) for names in allowed)}, got {sorted(files)}"))
    for error in getattr(parse, "check_options", lambda options: [])(source.get("options", {})):
        # "options.valid: a fraction ...": the key is what comes before the first ': '
        key, _, message = error.partition(": ")
        keys = tuple(key.split(".")) if message and " " not in key else ()
        problems.append(Problem((*at, *keys), message if keys else error, at=(*at, *keys[:2])))
    if getattr(parse, "task", task) != task:
        problems.append(Problem((*at, "kind"), f"{kind!r} is for {parse.task} datasets, this one is {task}"))
    return problems


def _check_local_files(name: str, source: dict, root: Path) -> list[Problem]:
    """A local source file (``path``) must be there when the run is planned: Snakemake skips a
    missing input of a job whose outputs exist (the data prepared before from another file) and
    plans nothing, and names it without the config's line where they do not."""
    problems = []
    for key, spec in source.get("files", {}).items():
        if not isinstance(spec, dict) or "path" not in spec:
            continue
        path = Path(spec["path"])
        full = path if path.is_absolute() else root / path
        if full.is_file():
            continue
        what = "is a folder, not a file" if full.is_dir() else "does not exist"
        where = "" if path.is_absolute() else f" (a relative path is read from the directory Snakemake runs in, {root})"
        problems.append(Problem(("datasets", name, "source", "files", key, "path"), f"{spec['path']} {what}{where}"))
    return problems


def _check_measures(name: str, measures: list) -> list[Problem]:
    unknown = sorted(set(measures) - set(MEASURE_NAMES))
    return [Problem(("datasets", name, "probe", "measures"),
                    f"unknown measure(s) {unknown}; known: {sorted(MEASURE_NAMES)}")] if unknown else []


def _check_glove(name: str, dataset: dict, glove: dict) -> list[Problem]:
    at = ("datasets", name)
    if dataset["tokenizer"].get("glove_vocab") and dataset["task"] != "classification":
        return [Problem((*at, "tokenizer", "glove_vocab"),
                        "for classification datasets only (translation uses SentencePiece)")]
    if not dataset["model"].get("glove"):
        return []
    if dataset["task"] != "classification":
        return [Problem((*at, "model", "glove"), "GloVe initialisation is for classification datasets only")]
    if dataset["model"]["embed"] != glove["dim"]:
        return [Problem((*at, "model", "glove"),
                        f"model.embed ({dataset['model']['embed']}) must equal glove.dim ({glove['dim']})")]
    return []


TRANSLATION_ONLY = ("arch", "heads", "head_combine", "ff", "attn_bias", "readout")


def _check_model(name: str, dataset: dict) -> list[Problem]:
    """Model keys the dataset's model family would silently ignore are refused."""
    model, at = dataset["model"], ("datasets", name, "model")
    problems = []
    if dataset["task"] == "classification" and (keys := [k for k in TRANSLATION_ONLY if k in model]):
        problems.append(Problem(at, f"{keys} apply to translation models only", at=(*at, keys[0])))
    if model.get("arch") == "transformer" and "head_combine" in model:
        problems.append(Problem((*at, "head_combine"), "for the LSTM only (Transformer heads are concatenated)"))
    lstm_mt = dataset["task"] == "translation" and model.get("arch", "lstm") == "lstm"
    if not lstm_mt and ("readout" in model or dataset["runs"].get("additive")):
        problems.append(Problem(at[:2], "model.readout and runs.additive (appendix A.1's additive output layer) "
                                "are for LSTM translation datasets only"))
    if "optimal" in dataset["probe"]["measures"] and model.get("readout") != "additive":
        problems.append(Problem(("datasets", name, "probe", "measures"), "'optimal' needs the additive output "
                                "layer (model.readout: additive); runs.additive probes it by itself"))
    return problems


def _check_train(name: str, dataset: dict, warn) -> list[Problem]:
    """A length must be set; explicit checkpoint steps beyond a length given in steps are
    reported (a warning: the shared default schedule is longer than some runs). Beyond a
    length given in epochs, which depends on the data, the training job warns."""
    train, at = dataset["train"], f"datasets.{name}.train"
    if not train.get("steps") and not train.get("epochs"):
        return [Problem(("datasets", name, "train"), f"neither steps nor epochs is set; set {at}.steps "
                        f"(total steps) or {at}.epochs")]
    if train.get("steps"):
        beyond = sorted(s for s in train["checkpoints"].get("steps", []) if s > train["steps"])
        if beyond:
            warn(f"{at}.checkpoints.steps: {beyond} are beyond the run's {train['steps']} steps and are not saved")
    return []


def key_lines(path) -> dict[tuple, int]:
    """Each key's (and list item's) 1-based line in a YAML file: ('datasets', 'tiny_mt', 'train')
    -> 23. Empty where the file cannot be read or parsed (read_config_file names that fault)."""
    try:
        root = yaml.compose(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    lines = {}

    def walk(node, prefix):
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                k = key.value
                if isinstance(key, yaml.ScalarNode) and key.tag.endswith(":int"):
                    k = int(k)
                lines[(*prefix, k)] = key.start_mark.line + 1
                walk(value, (*prefix, k))
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                lines[(*prefix, i)] = item.start_mark.line + 1
                walk(item, (*prefix, i))

    if root is not None:
        lines[()] = root.start_mark.line + 1
        walk(root, ())
    return lines


def _locate(path: tuple, files: list, cli: dict, override: dict) -> str:
    """Where a key was set: 'FILE:LINE' of the last config file that sets it (Snakemake merges
    several --configfile in order), '--config' where the command line set it, else the line of
    its nearest enclosing key that a file sets (a value from the task's defaults is wrong
    because of a key the dataset set beside it)."""
    def given(tree, keys):
        for k in keys:
            if not isinstance(tree, dict) or k not in tree:
                return False
            tree = tree[k]
        return True

    candidates = [path]
    if len(path) > 2 and path[0] == "datasets" and given(override, path[2:]):
        candidates.insert(0, ("override", *path[2:]))  # the value came from override, which wins
    for keys in candidates:
        if given(cli, keys):
            return "--config"
        for name, lines in reversed(files):
            if keys in lines:
                return f"{name}:{lines[keys]}"
    for n in range(len(path) - 1, 0, -1):
        for name, lines in reversed(files):
            if path[:n] in lines:
                return f"{name}:{lines[path[:n]]}"
    return files[-1][0] if files else "--config"


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
    problems = _schema_problems(config, {**schema, "properties": {**schema["properties"],
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
        dataset_problems = _schema_problems(merged, dataset_schema, ("datasets", name))
        # the checks below read keys the schema vouches for: on an entry the schema refused,
        # a check that trips on a missing or mistyped key has nothing to add to its errors
        for check in (lambda: _check_source_options(name, merged["source"], merged["task"]),
                      lambda: _check_measures(name, merged["probe"]["measures"]),
                      lambda: _check_glove(name, merged, config.get("glove", {})),
                      lambda: _check_model(name, merged),
                      lambda: _check_train(name, merged, warn),
                      lambda: _check_local_files(name, merged["source"], Path(data_root or Path.cwd()))):
            try:
                dataset_problems += check()
            except (KeyError, TypeError, AttributeError):
                if not dataset_problems:
                    raise
        for p in dataset_problems:  # a sweep's entry: each problem named where the sweep or its base entry set it
            path, at = sweeps.where(config, p.path, p.at, p.message)
            problems.append(Problem(path, p.message, at))
        resolved[name] = merged
    # one problem of a base entry is every value's: said once
    problems = list({(p.label(), p.message, p.at): p for p in problems}.values())
    if problems:
        if files is None:
            files = [source] if Path(source).is_file() else []
        located = [(str(f), key_lines(f)) for f in files]
        cli_given = {**(cli or {}), **({"override": given_override} if "override" in (cli or {}) else {})}
        where = [_locate(p.at, located, cli_given, given_override) for p in problems]
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


def run_names(dataset: dict) -> list[str]:
    """Run names in role order: standard seeds first (A, then B...), then uniform, frozen, tanhmax,
    additive."""
    return [f"{variant}-s{seed}" for variant in VARIANTS for seed in dataset["runs"].get(variant, [])]


def stack_groups(dataset: dict) -> list[list[str]]:
    """The runs that ``train.stack: K`` trains together, one job per group: each variant's
    runs in run order, K at a time (a run left alone trains alone).
    Adding a seed at the end of a list adds a group or a member to the last one."""
    k = dataset["train"].get("stack", 1)
    if k < 2:
        return []
    groups = []
    for variant in VARIANTS:
        names = [f"{variant}-s{seed}" for seed in dataset["runs"].get(variant, [])]
        groups += [names[i:i + k] for i in range(0, len(names), k) if len(names[i:i + k]) > 1]
    return groups


ADDITIVE_MEASURES = ("alpha", "xi", "optimal")
# read of run A alone (compare.py: g* at alpha*'s step, the norm-based attention against alpha*,
# xi^uf and the gold links); a standard seed is A in some replicate, the other variants never
STANDARD_ONLY_MEASURES = ("grad", "norm")


def run_probe_settings(probe: dict, variant: str) -> dict:
    """A run's probe settings: additive runs measure only what the optimal-attention comparisons
    read (alpha, xi and 'optimal'; they take no Table 2 role); uniform, frozen and tanhmax runs
    skip the measures only run A's are read of (a translation probe's gradient saliency is half
    its time); all but the additive drop the solver's settings, so that changing them reruns
    the additive runs' probes only; all but the standard runs drop probe.at_best (they probe none
    of its measures; the proxy's probe has measures of its own), so that changing it reruns the
    standard runs' probes only."""
    if variant == "additive":
        return {**{k: v for k, v in probe.items() if k != "at_best"}, "measures": list(ADDITIVE_MEASURES)}
    drop = {"optimal"} if variant == "standard" else {"optimal", "at_best"}
    settings = {k: v for k, v in probe.items() if k not in drop}
    if variant in ("uniform", "frozen", "tanhmax") and "measures" in settings:
        settings["measures"] = [m for m in settings["measures"] if m not in STANDARD_ONLY_MEASURES]
    return settings


def main(argv=None) -> int:
    """python -m attnlearn.config FILE...: check config files as the workflow would, naming the
    file, line and column of a YAML error (Snakemake reads a --configfile before the workflow
    starts and names neither) and the key of a schema error."""
    import argparse

    ap = argparse.ArgumentParser(prog="python -m attnlearn.config", description=main.__doc__)
    ap.add_argument("files", nargs="+")
    ap.add_argument("--schema", default=Path(__file__).resolve().parents[2] / "config" / "schema.yaml")
    args = ap.parse_args(argv)
    failed = 0
    for path in args.files:
        try:
            config = load_config(read_config_file(path), args.schema, source=path)
            print(f"{path}: valid ({len(config['datasets'])} datasets)")
        except ConfigError as e:
            print(e, file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
