"""What is wrong with a config, each thing as a ``Problem`` naming its key: the schema's errors
(every one, an unknown key with the key it was probably meant to be), and the checks the schema
cannot make, against the registries of data, training and probing: a source's options and
files, the probe's measures, GloVe, the model keys a family would ignore, the training length."""

from __future__ import annotations

import copy
import difflib
import inspect
from pathlib import Path

import jsonschema

from attnlearn.data import own  # noqa: F401  (registers the own-data kinds in PARSERS)
from attnlearn.data.parsers import PARSERS
from attnlearn.data.synthetic import GENERATORS
from attnlearn.probing.measures import MEASURE_NAMES
from attnlearn.training.schedule import saves_step


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


def schema_problems(instance, schema, prefix=()) -> list[Problem]:
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


def check_source_options(name: str, source: dict, task: str) -> list[Problem]:
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


def check_local_files(name: str, source: dict, root: Path) -> list[Problem]:
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


def check_measures(name: str, measures: list) -> list[Problem]:
    unknown = sorted(set(measures) - set(MEASURE_NAMES))
    return [Problem(("datasets", name, "probe", "measures"),
                    f"unknown measure(s) {unknown}; known: {sorted(MEASURE_NAMES)}")] if unknown else []


def check_glove(name: str, dataset: dict, glove: dict) -> list[Problem]:
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


def check_model(name: str, dataset: dict) -> list[Problem]:
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


def check_train(name: str, dataset: dict, warn) -> list[Problem]:
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


def check_init(name: str, dataset: dict) -> list[Problem]:
    """A dataset's ``init``: every standard run's source (``{from}-sN``) a run of the dataset, the
    step one the source saves, and one run per job (a stack's members would need a source each).
    The parts named in init.params are checked against the model when the run starts."""
    init, at = dataset.get("init"), ("datasets", name, "init")
    if not init:
        return []
    problems = []
    source = init["from"]
    if missing := [s for s in dataset["runs"]["standard"] if s not in dataset["runs"].get(source, [])]:
        problems.append(Problem((*at, "from"), f"standard run(s) {', '.join(f'standard-s{s}' for s in missing)} would "
                                f"start from {', '.join(f'{source}-s{s}' for s in missing)}, which this dataset "
                                f"does not train: add {missing} to runs.{source}"))
    train = dataset["train"]
    if not saves_step(train["checkpoints"], init["step"], train.get("steps")):
        problems.append(Problem((*at, "step"), f"{init['step']} is not a step the {init['from']} runs save "
                                f"(train.checkpoints: {train['checkpoints']}, train.steps: {train.get('steps')})"))
    if train.get("stack", 1) > 1:
        problems.append(Problem((*at,), "the runs that start from another run's weights train one per job: "
                                "set train.stack to 1"))
    return problems


def check_transfer(config: dict, datasets: dict) -> list[Problem]:
    """The transfer section: a sweep of the config whose key is init or under it, and a window
    that every value's standard runs reach with a checkpoint at each end."""
    transfer, at = config.get("transfer"), ("transfer",)
    if not isinstance(transfer, dict):
        return []
    sweep = (config.get("sweeps") or {}).get(transfer.get("sweep"))
    if sweep is None:
        return [Problem((*at, "sweep"), f"names {transfer.get('sweep')!r}, which is not under 'sweeps' "
                        f"(there: {sorted(config.get('sweeps') or {})})")]
    if str(sweep["key"]).split(".")[0] != "init":
        return [Problem((*at, "sweep"), f"the sweep {transfer['sweep']!r} varies {sweep['key']}, not where the "
                        "standard runs start: its key must be init or a key under it")]
    window = transfer.get("window", 250)
    for name in (d for d in sweep["datasets"] if d in datasets):
        train = datasets[name]["train"]
        missing = [s for s in (0, window) if not saves_step(train["checkpoints"], s, train.get("steps"))]
        if missing:
            return [Problem((*at, "window"), f"the response averages steps 0..{window}, but {name}'s runs save no "
                            f"checkpoint at step {missing[0]} (train.checkpoints: {train['checkpoints']})")]
    return []
