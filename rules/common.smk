# Config validation, wildcard constraints and input helpers shared by all rules.

import re
from pathlib import Path

from attnlearn.compare import run_roles
from attnlearn.config import load_config, run_names
from attnlearn.data.prepare import SPLITS
from attnlearn.data.synthetic import GENERATORS

config.update(load_config(config, Path(workflow.basedir) / "config" / "schema.yaml"))

DATASETS = list(config["datasets"])
ENV = "../envs/attnlearn.yaml"
LIB = Path(workflow.basedir) / "src" / "attnlearn"


wildcard_constraints:
    dataset="|".join(re.escape(d) for d in DATASETS),
    run=r"(standard|uniform|frozen)-s\d+",


def ds(wildcards):
    return config["datasets"][wildcards.dataset]


def lib(*modules):
    """Library modules a rule depends on: editing them reruns the rule."""
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
    return int(config["device"] != "cpu")
