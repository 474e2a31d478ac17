"""Does ``probe.at_best`` change any output of a finished run? (not a test)

    snakemake --cores 2 -d /tmp/A                      # any config's finished run
    python benchmarks/at_best_same.py /tmp/A /tmp/B [--configfile my.yaml]

Copies the run folder A to B, reruns B's probes with ``probe.at_best: []`` on every dataset
(every measure at every checkpoint, what every probe did before), then compares every summary
table and figure of the two under one config stamp (reporting/made_for.py: each names its
config's file). Prints the files that differ; for agreement tables, whether they differ only by
the rows of the norm-based weights against the gold links at run A's checkpoints other than its
best, which no table reads (tests/test_workflow.py checks the same on the tiny config). Exit
status 1 when anything else differs.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml
from same_tables import differing  # the sibling script (a script's folder is first on sys.path)

REPO = Path(__file__).resolve().parents[1]


def every_checkpoint_config(configfile: Path, out: Path) -> Path:
    config = yaml.safe_load(configfile.read_text())
    for entry in config["datasets"].values():
        entry.setdefault("probe", {})["at_best"] = []
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    return out


def norm_gold(df: pd.DataFrame) -> pd.Series:
    """The rows of the norm-based weights against the gold links."""
    return (df["a_measure"] == "norm") & (df["b_role"] == "G")


def unread_rows_only(best: pd.DataFrame, full: pd.DataFrame) -> bool:
    """``full`` is ``best`` plus norm-vs-gold rows at A checkpoints ``best`` has none of."""
    if "a_measure" not in full:
        return False
    kept = set(zip(best.loc[norm_gold(best), "dataset"], best.loc[norm_gold(best), "a_step"]))
    extra = norm_gold(full) & ~pd.Series(list(zip(full["dataset"], full["a_step"]))).isin(kept)
    return full[~extra].reset_index(drop=True).equals(best.reset_index(drop=True))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path, help="a finished run's folder (the default: at_best [grad, norm])")
    ap.add_argument("copy", type=Path, help="where the copy rerun with at_best [] goes (must not exist)")
    ap.add_argument("--configfile", type=Path, default=REPO / "config" / "config.yaml")
    ap.add_argument("--snakefile", type=Path, default=REPO / "Snakefile", help="the code that made RUN")
    ap.add_argument("--cores", default="2")
    args = ap.parse_args(argv)
    shutil.copytree(args.run, args.copy, symlinks=True)
    every = every_checkpoint_config(args.configfile, args.copy / "every_checkpoint.yaml")
    subprocess.run(["snakemake", "--cores", args.cores, "-s", str(args.snakefile), "-d", str(args.copy),
                    "--configfile", str(every)], check=True)
    files, differ = differing(args.run, args.copy)
    bad = []
    for f in differ:
        only = f.suffix == ".parquet" and unread_rows_only(pd.read_parquet(args.run / f), pd.read_parquet(args.copy / f))
        print(f"{f}: differs" + (" only by norm-vs-gold rows at A's other checkpoints (no table reads them)"
                                 if only else ""))
        bad += [] if only else [f]
    print(f"{len(files)} tables and figures compared, {len(differ)} differ, {len(bad)} beyond the unread rows")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
