# Config validation and the input helpers shared by all rules.

import re
from pathlib import Path
from types import SimpleNamespace

from attnlearn.compare import run_roles
from attnlearn.config import load_config, run_names
from attnlearn.data.download import FileSpec, url_filename
from attnlearn.data.prepare import SPLITS
from attnlearn.data.synthetic import GENERATORS

# config errors name the file(s): those given with --configfile, else the built-in default
CONFIG_FILES = [str(f) for f in workflow.overwrite_configfiles]
CONFIG_SOURCE = ", ".join(CONFIG_FILES) or str(Path(workflow.basedir) / "config" / "config.yaml")
config.update(load_config(config, Path(workflow.basedir) / "config" / "schema.yaml", source=CONFIG_SOURCE))

DATASETS = list(config["datasets"])
ENV = "../envs/attnlearn.yaml"
LIB = Path(workflow.basedir) / "src" / "attnlearn"
MODEL_MODULE = {"translation": "models/seq2seq.py", "classification": "models/classifier.py"}


def model_module(wildcards):
    """The model family's module: editing it reruns that family's trainings only."""
    d = ds(wildcards)
    if d["model"].get("arch") == "transformer":
        return "models/transformer.py"
    return MODEL_MODULE[d["task"]]


def ds(wildcards):
    return config["datasets"][wildcards.dataset]


def lib(*modules):
    """Library modules a job depends on: editing one reruns the job."""
    return [str(LIB / m) for m in modules]


def runs(dataset):
    return run_names(config["datasets"][dataset])


def has_gold(dataset):
    return config["datasets"][dataset]["source"]["kind"] in GENERATORS


def run_params(wildcards):
    """Everything that determines one training run (its checkpoints depend on nothing else)."""
    d = ds(wildcards)
    variant, seed = wildcards.run.rsplit("-s", 1)
    return {"name": f"{wildcards.dataset}/{wildcards.run}", "task": d["task"], "variant": variant,
            "seed": int(seed), "model": d["model"], "train": d["train"], "device": config["device"]}


def uses_gpu(wildcards):
    """GPU jobs claim the `gpu` resource; `auto` claims it only where Snakemake sees a GPU
    (on a cluster, set device: cuda so that jobs ask the scheduler for one)."""
    if config["device"] == "auto":
        import torch

        return int(torch.cuda.is_available())
    return int(config["device"] == "cuda")


def agreement_inputs(wildcards, probes="results/probes"):
    """A dataset's probe tables from folder ``probes`` and the validation performance (which
    picks alpha*). Gold links and IBM Model 1 exist for the validation probes only."""
    d = wildcards.dataset
    inputs = {
        "probes": [f"{probes}/{d}/{r}.parquet" for r in runs(d)],
        "perf": [f"results/probes/{d}/{r}.perf.parquet" for r in runs(d)],
        "proxy": f"{probes}/{d}/proxy.parquet",
        "code": lib("agreement.py", "compare.py"),
    }
    if probes == "results/probes" and has_gold(d):
        inputs["gold"] = f"results/probes/{d}/gold.parquet"
    if probes == "results/probes" and ibm1_enabled(d):
        inputs["ibm1"] = f"results/probes/{d}/ibm1.parquet"
    return inputs


TRAIN_SPLIT = config["tables"]["train_split"]


def role_run(dataset, role):
    return next(r for r, ro in run_roles(runs(dataset)).items() if ro == role)


def figures_all():
    return expand("results/figures/{dataset}/{kind}.png", dataset=DATASETS, kind=["contextualized", "agreement_curves", "heatmap"])


def download_path(dataset, spec):
    """Where a download lands; place the file there by hand to work offline."""
    return f"data/downloads/{dataset}/{url_filename(spec['url'])}"


def source_files(wildcards):
    """The verified downloads a dataset's parser reads, by file name."""
    files = ds(wildcards)["source"].get("files", {})
    return {name: download_path(wildcards.dataset, spec) for name, spec in files.items()}


def source_params(wildcards):
    """The dataset's source with each download identified by its checksum (see FileSpec)."""
    source = ds(wildcards)["source"]
    return {**source, "files": {k: FileSpec(v) for k, v in source.get("files", {}).items()}}


def download_spec(wildcards):
    for spec in ds(wildcards)["source"].get("files", {}).values():
        if url_filename(spec["url"]) == wildcards.filename:
            return FileSpec(spec)
    raise ValueError(f"no download named {wildcards.filename!r} for dataset {wildcards.dataset!r}")


def uses_glove(wildcards):
    return bool(ds(wildcards)["model"].get("glove"))


GLOVE_ZIP = f"data/downloads/glove/{url_filename(config['glove']['url'])}"


def glove_inputs(kind):
    """Input function: the GloVe file a job needs when its dataset uses GloVe, else nothing."""
    path = {"words": "results/glove/words.txt", "vectors": "results/tokenized/{dataset}/glove.npy"}[kind]
    return lambda w: {kind: path.format(dataset=w.dataset)} if uses_glove(w) else {}


# The controlled experiments (rules/experiments.smk): the config section `experiments`
# (absent or null: none); each subsection present adds its jobs.
EXP = config.get("experiments") or {}
EXP_THREADS = EXP.get("threads", 1)
COPY_TASKS = list(EXP["copying"]["tasks"]) if "copying" in EXP else []
TOY_LIB = lib("toy/__init__.py", "toy/data.py", "toy/model.py", "toy/train.py", "models/attention.py")


def experiment_tables():
    out = []
    if "copying" in EXP:
        out += ["results/tables/copying.parquet", "results/tables/copy_counts.parquet"]
    if "multihead" in EXP:
        out += ["results/tables/multihead.parquet"]
    if "keyword" in EXP:
        out += ["results/tables/keyword.parquet"]
    return out


def experiment_figures():
    kinds = {"copying": ["copying", "copy_counts"], "multihead": ["multihead"], "keyword": ["keyword"]}
    return [f"results/figures/experiments/{k}.png" for section, ks in kinds.items() if section in EXP for k in ks]


def experiments_all():
    return experiment_tables() + experiment_figures()


def ibm1_enabled(dataset):
    return "ibm1" in EXP and config["datasets"][dataset]["task"] == "translation"


# The attention analyses (rules/analyses.smk)
ANALYSIS_CODE = ("analyses/__init__.py", "analyses/run.py", "analyses/sites.py", "analyses/norms.py",
                 "analyses/effective.py", "analyses/head_roles.py", "models/attention.py", "models/seq2seq.py",
                 "models/transformer.py", "tasks.py")
TRANSLATION = [d for d in DATASETS if config["datasets"][d]["task"] == "translation"]
WITH_TANHMAX = [d for d in DATASETS if config["datasets"][d]["runs"].get("tanhmax")]


def run_a_inputs(wildcards):
    a = role_run(wildcards.dataset, "A")
    return {"checkpoints": f"results/runs/{wildcards.dataset}/{a}/checkpoints",
            "perf": f"results/probes/{wildcards.dataset}/{a}.perf.parquet"}


def run_a_params(wildcards):
    return run_params(SimpleNamespace(dataset=wildcards.dataset, run=role_run(wildcards.dataset, "A")))


ANALYSIS_SETTINGS = {"norms": ("exclude_special",), "effective": ("effective",), "head_roles": ("roles",)}


def analysis_rule_params(name):
    """Each analysis gets only its own settings: changing one reruns only it."""
    keys = ("max_examples", "batch_size", *ANALYSIS_SETTINGS[name])
    return dict(analysis=name, run=run_a_params, settings={k: config["analyses"][k] for k in keys},
                max_examples=lambda w: ds(w)["probe"]["max_examples"], has_gold=lambda w: has_gold(w.dataset))
