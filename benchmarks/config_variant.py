"""A copy of a config with one setting changed in every dataset (an ablation, a time cut).

    python benchmarks/config_variant.py CONFIG KEY=VALUE [KEY=VALUE ...] [--task TASK] > variant.yaml

KEY is a dotted path inside a dataset entry, VALUE is read as YAML. Examples:

    python benchmarks/config_variant.py config/config.yaml train.seeding=shared > shared.yaml
    python benchmarks/config_variant.py local.yaml probe.bleu=false --task translation > nobleu.yaml

The copy is validated like any config when Snakemake reads it.
"""

from __future__ import annotations

import argparse
import sys

import yaml


def apply(config: dict, settings: list[str], task: str | None = None) -> dict:
    for entry in config["datasets"].values():
        if task and entry.get("task") != task:
            continue
        for setting in settings:
            key, sep, value = setting.partition("=")
            if not sep:
                raise SystemExit(f"{setting!r}: expected KEY=VALUE")
            *path, last = key.split(".")
            node = entry
            for part in path:
                node = node.setdefault(part, {})
            node[last] = yaml.safe_load(value)
    return config


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config")
    ap.add_argument("settings", nargs="+", metavar="KEY=VALUE")
    ap.add_argument("--task", choices=["translation", "classification"], help="only datasets of this task")
    args = ap.parse_args()
    with open(args.config) as f:
        config = yaml.safe_load(f)
    yaml.safe_dump(apply(config, args.settings, args.task), sys.stdout, sort_keys=False)


if __name__ == "__main__":
    main()
