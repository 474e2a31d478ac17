"""A misspelled target is said with the targets there are (src/attnlearn/runtime/targets.py), and
other small things of the console and the command line."""

import fnmatch
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from attnlearn.runtime import targets
from attnlearn.runtime.console import Console

REPO = Path(__file__).resolve().parents[1]
MSG = ("MissingRuleException:\nNo rule to produce results/tables/tabel2.parquet (if you use input functions make "
       "sure that they don't raise unexpected exceptions).")


def rule(name, *output):
    return SimpleNamespace(name=name, output=list(output), is_producer=lambda path: path in output)


RULES = [rule("tables", "results/tables/table2.parquet", "results/tables/tables.md"), rule("table2"),
         rule("train", "results/runs/{dataset}/{run}/checkpoints"), rule("datacard", "results/tables/datasets.parquet")]


def test_an_unknown_target_names_the_closest_and_the_tables(monkeypatch):
    monkeypatch.setattr(targets, "_RULES", RULES)
    lines = Console().record({"event": "error", "exception": "MissingRuleException", "msg": MSG})
    assert lines[0] == "no rule makes results/tables/tabel2.parquet (did you mean results/tables/table2.parquet?)"
    assert lines[2:] == ["  datacard: datasets.parquet", "  tables: table2.parquet, tables.md"]
    assert targets.message(["tabel2"], RULES).startswith("no rule makes tabel2 (did you mean table2?)")
    assert targets.unknown_targets(["table2", "results/tables/tables.md", "nothing"], RULES,
                                   exists=lambda p: False) == ["nothing"]


def test_without_the_rules_snakemake_says_it(monkeypatch):
    monkeypatch.setattr(targets, "_RULES", None)
    assert Console().record({"event": "error", "exception": "MissingRuleException", "msg": MSG}) is None


def test_every_report_name_is_ignored_by_git():
    patterns = [line.strip() for line in (REPO / ".gitignore").read_text().splitlines() if line.strip()]
    for name in ("report.html", "report_my.html", "report-paper.html"):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name


@pytest.mark.workflow
def test_a_misspelled_target_lists_the_tables(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path), "-n",
                           "results/tables/tabel2.parquet"], capture_output=True, text=True)
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert ("no rule makes results/tables/tabel2.parquet (did you mean results/tables/table2.parquet"
            in said), said[-3000:]
    assert "  tables: agreement.parquet, performance.parquet, table2.parquet" in said
    assert "No rule to produce" not in said
