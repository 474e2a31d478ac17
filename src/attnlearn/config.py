"""Loading and validating the workflow config.

Each dataset entry is merged over its task family's defaults
(``task_defaults.yaml``, the paper's settings) and validated against
``config/schema.yaml``; a wrong key or value stops with a message naming it.
"""

from __future__ import annotations

import copy
import inspect
import sys
from pathlib import Path

import jsonschema
import yaml

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


def _where(error, prefix: str) -> str:
    return ".".join([prefix, *map(str, error.absolute_path)]).strip(".")


# keys that were replaced: (section, old key) -> what to write instead
RENAMED = {("proxy", "seed"): "proxy.seed was replaced by proxy.seeds, a list: write `seeds: [N]`; "
                              "several seeds train independent proxies, one per Table 2 replicate"}


def _hint(error) -> str:
    # Snakemake's --config reads `key=true` as the string 'true'; only True / False are booleans
    if error.validator == "type" and error.instance in ("true", "false", "yes", "no"):
        return " (on the command line write --config KEY=True or KEY=False)"
    if error.validator == "additionalProperties" and error.absolute_path and isinstance(error.instance, dict):
        section = error.absolute_path[-1]
        hints = [h for (s, key), h in RENAMED.items() if s == section and key in error.instance]
        if hints:
            return f" ({'; '.join(hints)})"
    return ""


def _validate(instance, schema, prefix, source):
    errors = sorted(_Validator(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"  {_where(e, prefix) or '(top level)'}: {e.message}{_hint(e)}" for e in errors]
        raise ConfigError(f"invalid config ({source}):\n" + "\n".join(lines))


def _check_source_options(name: str, source: dict, where: str, task: str):
    """Generator options must match the generator's parameters exactly; a parser's
    files must be exactly those it reads, and its options among those it knows."""
    kind, at = source["kind"], f"invalid config ({where}): datasets.{name}.source"
    given = set(source.get("options", {}))
    if kind in GENERATORS:
        params = set(inspect.signature(GENERATORS[kind]).parameters) - {"n_sentences", "seed"}
        if given - params:
            raise ConfigError(f"{at}.options: unknown option(s) {sorted(given - params)} for kind {kind!r}; "
                              f"allowed: {sorted(params)}")
        if params - given:
            raise ConfigError(f"{at}.options: missing option(s) {sorted(params - given)} for kind {kind!r}")
        if "splits" not in source:
            raise ConfigError(f"{at}: kind {kind!r} needs 'splits' (examples per split)")
        return
    parse = PARSERS[kind]
    if given - parse.options:
        raise ConfigError(f"{at}.options: unknown option(s) {sorted(given - parse.options)} for kind {kind!r}; "
                          f"allowed: {sorted(parse.options)}")
    files = set(source.get("files", {}))
    allowed = [set(names) for names in getattr(parse, "file_sets", [parse.files])]
    if files not in allowed:
        raise ConfigError(f"{at}.files: kind {kind!r} needs exactly the files "
                          f"{' or '.join(str(sorted(names)) for names in allowed)}, got {sorted(files)}")
    errors = getattr(parse, "check_options", lambda options: [])(source.get("options", {}))
    if errors:
        raise ConfigError("\n".join(f"{at}.{e}" for e in errors))
    if getattr(parse, "task", task) != task:
        raise ConfigError(f"{at}.kind: {kind!r} is for {parse.task} datasets, this one is {task}")


def _check_measures(name: str, measures: list, where: str):
    unknown = sorted(set(measures) - set(MEASURE_NAMES))
    if unknown:
        raise ConfigError(f"invalid config ({where}): datasets.{name}.probe.measures: unknown measure(s) "
                          f"{unknown}; known: {sorted(MEASURE_NAMES)}")


def _check_glove(name: str, dataset: dict, glove: dict, where: str):
    if dataset["tokenizer"].get("glove_vocab") and dataset["task"] != "classification":
        raise ConfigError(f"invalid config ({where}): datasets.{name}.tokenizer.glove_vocab: for classification "
                          "datasets only (translation uses SentencePiece)")
    if not dataset["model"].get("glove"):
        return
    at = f"invalid config ({where}): datasets.{name}.model.glove"
    if dataset["task"] != "classification":
        raise ConfigError(f"{at}: GloVe initialisation is for classification datasets only")
    if dataset["model"]["embed"] != glove["dim"]:
        raise ConfigError(f"{at}: model.embed ({dataset['model']['embed']}) must equal glove.dim ({glove['dim']})")


TRANSLATION_ONLY = ("arch", "heads", "head_combine", "ff", "attn_bias", "readout")


def _check_model(name: str, dataset: dict, where: str):
    """Model keys the dataset's model family would silently ignore are refused."""
    model, at = dataset["model"], f"invalid config ({where}): datasets.{name}.model"
    if dataset["task"] == "classification" and (keys := [k for k in TRANSLATION_ONLY if k in model]):
        raise ConfigError(f"{at}: {keys} apply to translation models only")
    if model.get("arch") == "transformer" and "head_combine" in model:
        raise ConfigError(f"{at}.head_combine: for the LSTM only (Transformer heads are concatenated)")
    lstm_mt = dataset["task"] == "translation" and model.get("arch", "lstm") == "lstm"
    if not lstm_mt and ("readout" in model or dataset["runs"].get("additive")):
        raise ConfigError(f"invalid config ({where}): datasets.{name}: model.readout and runs.additive (appendix "
                          "A.1's additive output layer) are for LSTM translation datasets only")
    if "optimal" in dataset["probe"]["measures"] and model.get("readout") != "additive":
        raise ConfigError(f"invalid config ({where}): datasets.{name}.probe.measures: 'optimal' needs the additive "
                          "output layer (model.readout: additive); runs.additive probes it by itself")


def _check_train(name: str, dataset: dict, where: str, warn):
    """A length must be set; explicit checkpoint steps beyond a length given in steps are
    reported (a warning: the shared default schedule is longer than some runs). Beyond a
    length given in epochs, which depends on the data, the training job warns."""
    train, at = dataset["train"], f"datasets.{name}.train"
    if not train.get("steps") and not train.get("epochs"):
        raise ConfigError(f"invalid config ({where}): {at}: neither steps nor epochs is set; set {at}.steps "
                          f"(total steps) or {at}.epochs")
    if train.get("stack", 1) > 1 and dataset["task"] != "classification":
        warn(f"{at}.stack: only classification runs are stacked; {name}'s runs train one per job")
    if train.get("steps"):
        beyond = sorted(s for s in train["checkpoints"].get("steps", []) if s > train["steps"])
        if beyond:
            warn(f"{at}.checkpoints.steps: {beyond} are beyond the run's {train['steps']} steps and are not saved")


def load_config(config: dict, schema_path, source: str = "config", warn=_warn, cli: dict | None = None) -> dict:
    """Validate ``config`` and return it with every dataset fully resolved. ``warn`` gets the
    messages about settings that are valid but probably not meant. ``cli``: the values given
    with Snakemake's --config, whose nested leaves are read as YAML here."""
    schema = yaml.safe_load(Path(schema_path).read_text())
    config = copy.deepcopy(config)
    _retype_cli(config, cli or {})
    # the keys set from the command line, whose values Snakemake's --config passes as text
    if isinstance(config.get("only"), str):  # only=sst or only=[sst, sms_spam]
        only = _typed(config["only"])
        config["only"] = [only] if isinstance(only, str) else only
    for key in ("analyses", "override"):  # 'analyses={effective: {erasure_k: [2]}}'; their strings
        if isinstance(config.get(key), dict):  # are plain words, which YAML keeps as they are
            config[key] = _typed(config[key])
    _validate(config, {**schema, "properties": {**schema["properties"], "datasets": {"type": "object"}}},
              "", source)
    if not config.get("datasets"):
        raise ConfigError(f"invalid config ({source}): 'datasets' must name at least one dataset")
    dataset_schema = {"$defs": schema["$defs"], **schema["$defs"]["dataset"]}
    override = config["override"] = config.get("override") or {}
    resolved = {}
    for name, entry in _selected(config, source).items():
        if not isinstance(entry, dict) or entry.get("task") not in TASK_DEFAULTS:
            raise ConfigError(f"invalid config ({source}): datasets.{name}.task must be one of "
                              f"{sorted(TASK_DEFAULTS)}")
        merged = deep_merge(deep_merge(TASK_DEFAULTS[entry["task"]], entry), override)
        _validate(merged, dataset_schema, f"datasets.{name}", source)
        _check_source_options(name, merged["source"], source, merged["task"])
        _check_measures(name, merged["probe"]["measures"], source)
        _check_glove(name, merged, config.get("glove", {}), source)
        _check_model(name, merged, source)
        _check_train(name, merged, source, warn)
        resolved[name] = merged
    config["datasets"] = resolved
    return canonical(config)


def _selected(config: dict, source: str) -> dict:
    """The dataset entries that ``only`` names (all where it is null), in the config's order."""
    only = config.get("only")
    if only is None:
        return config["datasets"]
    unknown = [n for n in only if n not in config["datasets"]]
    if unknown:
        raise ConfigError(f"invalid config ({source}): only names {unknown}, which are not under "
                          f"'datasets' (there: {sorted(config['datasets'])})")
    return {n: e for n, e in config["datasets"].items() if n in only}


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
    runs in run order, K at a time (classification only; a run left alone trains alone).
    Adding a seed at the end of a list adds a group or a member to the last one."""
    k = dataset["train"].get("stack", 1)
    if k < 2 or dataset["task"] != "classification":
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
    the additive runs' probes only."""
    if variant == "additive":
        return {**probe, "measures": list(ADDITIVE_MEASURES)}
    settings = {k: v for k, v in probe.items() if k != "optimal"}
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
