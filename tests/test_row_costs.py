"""paper_rows/row_costs.py: what a kept row cost, from its parts' run.json, the invocations a
session's end killed included (a row's cost was otherwise its last resume's)."""

from __future__ import annotations

import json

from conftest import rows_module

row_costs = rows_module("row_costs")


def _kept(folder, invocations):
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"dataset": "multi30k", "invocations": invocations}))


def test_a_rows_cost_sums_every_invocation_of_each_part_killed_ones_included(tmp_path, capsys):
    row = tmp_path / "multi30k_epochs20"
    _kept(row / "part1", [
        {"start": "2026-12-02T19:29:09+00:00", "commit": "2e65384", "device": "cpu", "wall_s": 7200.0,
         "cpu_s": None, "cpu_s_seen": 3600.0, "killed": True},
        {"start": "2026-12-03T08:13:53+00:00", "commit": "2e65384", "device": "cpu", "wall_s": 3600.0,
         "cpu_s": 5400.0, "returncode": 0},
        {"start": "2026-12-03T09:33:37+00:00", "commit": "a27aefa", "device": "cpu", "wall_s": 1800.0,
         "cpu_s": 1800.0, "returncode": 0}])
    _kept(row / "part2", [{"start": "2026-12-03T04:00:00+00:00", "commit": "2e65384", "device": "cuda",
                           "wall_s": 900.0, "cpu_s": 720.0, "returncode": 0}])
    assert row_costs.main([str(row)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2] == ("| multi30k_epochs20/part1 | 3 (1) | 2026-12-02 19:29 | 2026-12-03 10:03 | 3.50 | 2.00 | 1.00 | "
                        "cpu | `2e65384`, `a27aefa` |")
    assert lines[3] == ("| multi30k_epochs20/part2 | 1 (0) | 2026-12-03 04:00 | 2026-12-03 04:15 | 0.25 | 0.20 | - | "
                        "cuda | `2e65384` |")
    assert lines[-1] == ("2 kept: 3.75 h of wall summed over 4 invocations (1 killed), 2.20 CPU-hours measured over "
                         "those that returned.")


def test_a_folder_without_run_json_is_named(tmp_path, capsys):
    (tmp_path / "row").mkdir()
    assert row_costs.main([str(tmp_path / "row")]) == 2
    assert f"no run.json in {tmp_path / 'row'}" in capsys.readouterr().err
