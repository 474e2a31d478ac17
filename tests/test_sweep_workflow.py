"""A sweep end to end: tests/configs/tiny.yaml's tiny_cls swept over train.lr, two values of
two replicates, through Snakemake. The dry run lists the values and plans one data preparation;
the run links the second value's data to the first's, and pools the sweep into its table, trend
and figure. About a minute and a half on two idle cores."""

import copy
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnlearn.agreement.sweep import COLUMNS

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "--cores", "2"]


@pytest.mark.workflow
def test_a_tiny_sweep_runs_once_per_value_shares_its_data_and_is_pooled(tmp_path):
    tiny = yaml.safe_load((REPO / "tests" / "configs" / "tiny.yaml").read_text())
    config = {"device": "cpu", "only": ["lr"], "datasets": {"tiny_cls": copy.deepcopy(tiny["datasets"]["tiny_cls"])},
              "tables": {"bootstrap": 20},
              "sweeps": {"lr": {"base": "tiny_cls", "key": "train.lr", "values": [0.001, 0.05], "replicates": 2}}}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(config))
    # no checksums: a touched input counts as updated, as any over Snakemake's 1 MB checksum limit does
    command = [*SNAKEMAKE, "--max-checksum-file-size", "0", "-d", str(tmp_path / "run"), "sweeps",
               "--configfile", str(path)]

    dry = subprocess.run([*command, "-n"], capture_output=True, text=True)
    assert dry.returncode == 0, dry.stderr[-3000:]
    said = dry.stdout + dry.stderr
    assert "  lr_0: train.lr = 0.001" in said and "  lr_1: train.lr = 0.05" in said
    stats = dict(line.split() for line in said[said.index("Job stats"):said.index("total")].splitlines()[3:]
                 if len(line.split()) == 2)
    assert stats["prepare_data"] == "1" and stats["tokenize"] == "1" and stats["sweep_data"] == "1"
    assert stats["train"] == "8" and stats["proxy"] == "4"  # 2 values x (2 standard + 2 uniform), 2 proxies

    # the first value's run ahead of the links to its data: linking must not make it look updated
    ahead = [*command[:-3], "results/runs/lr_0/standard-s1/train_log.parquet", "--configfile", str(path)]
    assert subprocess.run(ahead, capture_output=True, text=True).returncode == 0
    done = subprocess.run(command, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    again = subprocess.run([*command, "-n"], capture_output=True, text=True)
    assert "Nothing to be done" in again.stdout + again.stderr, (again.stdout + again.stderr)[-3000:]
    run = tmp_path / "run"
    # the second value reads the first's tokenized data: one file on disk
    for name in ("train.parquet", "tokenizer.json"):
        linked, first = run / "results/tokenized/lr_1" / name, run / "results/tokenized/lr_0" / name
        assert linked.stat().st_ino == first.stat().st_ino
    table = pd.read_parquet(run / "results/tables/sweep_lr.parquet")
    assert len(table) == 2 * len(COLUMNS) and list(table["value"].unique()) == [0.001, 0.05]
    central = table[table["column"] == "agr_alpha_xi_uniform"]
    assert (central["n"] == 2).all() and central["mean"].between(0, 1).all()
    assert table.loc[table["column"] == "agr_alpha_gold", "n"].eq(2).all()  # per replicate, from the probes
    trend = pd.read_parquet(run / "results/tables/sweep_lr_trend.parquet").set_index("column")
    assert trend.loc["agr_alpha_xi_uniform", "n"] == 4  # over the replicates, not the two means
    reps = pd.read_parquet(run / "results/tables/sweep_lr_replicates.parquet")
    assert len(reps) == 4 and set(reps["a_run"]) == {"standard-s1", "standard-s2"}
    assert (run / "results/figures/sweep_lr.png").stat().st_size > 0
    assert "# Sweep lr: train.lr of tiny_cls" in (run / "results/tables/sweep_lr.md").read_text()
