"""One verdict per claim on every page: the claims tables printed anywhere in docs/ agree, every
inside/outside reading rests on an interval that holds the examples' error, and the runs given up
are on record (checkable from the tree, no process)."""

import json
import re
from pathlib import Path

import pandas as pd
from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
# the pages people read; a kept folder's tables.md is one run's own record (its claims read over
# that run's replicates alone, as the pipeline writes them for any run), not a page of the study
PAGES = sorted(p for p in [*REPO.glob("docs/**/*.md"), REPO / "README.md"]
               if not (p.name == "tables.md" and p.parent.name == "tables"))


def _claims_tables(page: Path):
    """(row, claim, verdict) of each claims table on ``page``: a table whose header names a claim
    and a verdict."""
    header = None
    for line in page.read_text().splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if header is None:
            header = cells
            continue
        if set(cells) <= {"---", ""} or "claim" not in header:
            continue
        verdicts = [i for i, h in enumerate(header) if h.startswith("verdict")]
        for i in verdicts:
            yield cells[header.index("dataset")], cells[header.index("claim")], header[i], cells[i]


def test_every_page_prints_one_verdict_per_claim_and_row():
    seen = {}
    for page in PAGES:
        for row, claim, column, verdict in _claims_tables(page):
            assert column == "verdict, in the family", (
                f"{page.relative_to(REPO)}: a claims table with a verdict column {column!r}: a claim has one "
                "verdict, the family's (docs/plans/families/paper_claims.yaml)")
            if verdict.startswith("- (not in the family)"):
                continue
            first = seen.setdefault((row, claim), (page, verdict))
            assert first[1] == verdict, (f"{row} / {claim}: {first[1]} on {first[0].relative_to(REPO)}, "
                                         f"{verdict} on {page.relative_to(REPO)}")
    assert len(seen) >= 19  # the family's claims are printed somewhere


def test_a_paper_value_is_read_only_against_an_interval_that_holds_the_examples_error():
    """Every interval the pipeline sets a paper value against (table2_intervals of every kept
    folder, recomputed by the pages' code) either holds an examples' term or gives no verdict."""
    from attnlearn.agreement.replicates import interval_table
    rows = rows_module("kept")
    for folder in sorted(REPO.glob("reproduction/rows/*/part*/tables")):
        reps = pd.read_parquet(folder / "table2_replicates.parquet")
        iv = interval_table(reps, rows.probed_examples([folder]))
        read = iv[iv["paper_in_pi"].notna()]
        assert read["examples_sd"].notna().all(), folder
        assert read["pi_holds"].str.startswith("seeds+examples").all(), folder
        assert (iv.loc[iv["examples_sd"].isna(), "paper_in_pi"].isna()).all(), folder


def test_a_tanhmax_run_is_read_against_the_softmax_draws_with_the_examples_error():
    """The TanhMax run is one more draw, examples and all: it is set against the prediction
    interval of one more softmax draw with the examples' error, never the seeds' alone, and no
    verdict is read where that error is not known (no bootstrap, no count of examples)."""
    from attnlearn.statistics import t_intervals
    table = rows_module("reproduction_rows").tanhmax_table
    perf = pd.DataFrame({"dataset": "d", "run": [f"standard-s{i}" for i in range(5)], "metric": "accuracy",
                         "value": [0.80, 0.801, 0.799, 0.8005, 0.7995]})
    reps = pd.DataFrame({"dataset": "d", "perf_metric": "accuracy", "agr_alpha_xi_uniform": [0.3, 0.31, 0.29],
                         "agr_alpha_xi_uniform_boot_sd": 0.02})
    tanhmax = pd.DataFrame({"dataset": "d", "run": "tanhmax-s1", "activation": "tanhmax",
                            "metric": ["accuracy", "agreement_alpha_xi_uniform"], "value": [0.81, 0.34]})
    seeds = t_intervals(perf["value"])
    assert not seeds["pi_low"] <= 0.81 <= seeds["pi_high"]  # outside the seeds' spread alone
    read = table(tanhmax, perf, reps, {"d": 500}).set_index("measure")
    assert read.loc["best accuracy", "inside"] and read.loc["best accuracy", "pi_high"] > seeds["pi_high"]
    assert read.loc["A(|w|, xi^uf)", "pi_high"] > t_intervals(reps["agr_alpha_xi_uniform"])["pi_high"]
    unknown = table(tanhmax, perf, reps, {}).set_index("measure")["inside"]  # the agreement has its bootstrap
    assert unknown.isna().to_dict() == {"best accuracy": True, "A(|w|, xi^uf)": False}


def test_the_runs_given_up_are_on_record():
    records = [json.loads(line) for line in (REPO / "reproduction/rows/ledger.jsonl").read_text().splitlines() if line]
    dropped = {r["directory"] for r in records if r["event"] == "dropped"}
    text = json.dumps(records)
    assert {"/tmp/row_ng_e", "/tmp/sweep_sms (first try)", "/tmp/row_sst_b (refused start)"} <= dropped
    for commit in ("eb19b82", "ec244ba", "9dfe2ad"):  # where each reconstructed line was read from
        assert commit in text
    killed = [r for r in records if r["directory"] in ("/tmp/row_ng_b", "/tmp/row_ngh_b") and r["event"] == "started"]
    assert len(killed) == 4 and all(r["reconstructed"] for r in killed)


def test_no_page_calls_a_contrast_planned_that_its_tests_followed():
    page = (REPO / "reproduction/rows/newsgroups_no_headers/README.md").read_text()
    assert not re.search(r"\*\*[^*]*Holm 0\.045[^*]*\*\*", page)  # nothing exploratory bolded
    assert "Exploratory: each p alone" in page
