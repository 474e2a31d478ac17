"""paper_rows/header_rows.py on a finished row's working directory made by hand: a tiny 20
Newsgroups archive prepared and tokenized as the pipeline does, and probe tables whose first
choices are known, so the header split it prints is known too."""

import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from attnlearn.reporting.header_table import r_interval
from conftest import rows_module
from test_parsers import make_tar

from attnlearn.agreement.readings import CENTRAL
from attnlearn.data.prepare import prepare
from attnlearn.data.tokenize import tokenize_classification

header_rows = rows_module("header_rows")


def _probe(path, name, step, ids, first):
    """A probe table at one step: each example's weight peaks at position ``first(e, n)``."""
    values = []
    for e, seq in enumerate(ids):
        w = np.full(len(seq), 0.01, dtype=np.float32)
        w[first(e, len(seq))] = 1.0
        values.append(w)
    table = pa.table({"step": pa.array([step] * len(ids), pa.int32()), "example": pa.array(range(len(ids)), pa.int32()),
                      "t": pa.array([0] * len(ids), pa.int16()), "n": pa.array([len(s) for s in ids], pa.int16()),
                      name: pa.array(values, pa.large_list(pa.float32()))})
    pq.write_table(table, path)


@pytest.fixture
def row(tmp_path):
    """A row directory as paper_row.py leaves it: local.yaml, the download, results/data,
    results/tokenized, results/probes and the replicate readings."""
    posts = {f"20news-bydate-{split}/rec.sport.{group}/{i}":
             "From: " + " ".join(f"n{j}" for j in range(i + 1)) + f"\nSubject: game {i}\n\nwhat a game by {group}\n"
             for split in ("train", "test") for group in ("hockey", "baseball") for i in range(4)}
    archive = make_tar(tmp_path / "20news.tar.gz", posts)
    source = {"kind": "twenty_newsgroups", "options": {"groups": ["rec.sport.baseball", "rec.sport.hockey"]},
              "files": {"archive": {"url": "http://x/20news.tar.gz",
                                    "sha256": hashlib.sha256(archive.read_bytes()).hexdigest()}}}
    d = tmp_path / "row"
    (d / "data/downloads/newsgroups").mkdir(parents=True)
    shutil.copy(archive, d / "data/downloads/newsgroups/20news.tar.gz")
    (d / "local.yaml").write_text(yaml.safe_dump({"datasets": {"newsgroups": {"source": source}}}))
    splits = prepare(source, {"archive": archive})
    results = d / "results"
    for sub in ("data/newsgroups", "tokenized/newsgroups", "probes/newsgroups", "tables"):
        (results / sub).mkdir(parents=True)
    splits["valid"].to_parquet(results / "data/newsgroups/valid.parquet")
    vocab, tables = tokenize_classification(splits, min_count=1)
    (results / "tokenized/newsgroups/tokenizer.json").write_text(json.dumps({"kind": "words", "vocab": vocab}))
    tables["valid"].to_parquet(results / "tokenized/newsgroups/valid.parquet")
    ids = list(tables["valid"]["ids"])
    # alpha*: the header's first word ("from") in even posts, the body's last word in odd ones;
    # xi^uf: "from" everywhere. With n <= 20 positions xi's top k is one position, so A counts a hit
    # exactly where alpha* picks "from": the even posts.
    _probe(results / "probes/newsgroups/standard-s1.parquet", "alpha", 10, ids, lambda e, n: 1 if e % 2 == 0 else n - 2)
    _probe(results / "probes/newsgroups/uniform-s1.parquet", "xi", 20, ids, lambda e, n: 1)
    hit = np.mean([e % 2 == 0 for e in range(len(ids))])
    pd.DataFrame({"dataset": ["newsgroups"], "replicate": [0], "a_run": ["standard-s1"], "u_run": ["uniform-s1"],
                  "independent": [True], "a_step": [10], "u_step": [20], CENTRAL: [hit]}
                 ).to_parquet(results / "tables/replicate_readings.parquet")
    return d, splits["valid"], ids


def test_header_rows_splits_the_column_by_header_and_body_first_choices(row, tmp_path, capsys):
    d, valid, ids = row
    table = header_rows.replicate_rows(d, "newsgroups")
    r = table.iloc[0]
    heads = np.array([t.split().index("what") for t in valid["text"]])  # From: ... Subject: game i
    even = np.arange(len(ids)) % 2 == 0
    assert (r["alpha_header_share"], r["xi_header_share"]) == (pytest.approx(even.mean()), 1.0)
    assert (r["agr_header_rows"], r["agr_body_rows"]) == (1.0, 0.0)
    assert r["header_positions"] == pytest.approx(np.mean(heads / np.array([len(s) for s in ids])))
    kept = tmp_path / "kept/header_rows.parquet"
    assert header_rows.main([str(d), "--keep", str(kept)]) == 0
    printed = capsys.readouterr().out
    assert header_rows.main(["--kept", str(kept)]) == 0 and capsys.readouterr().out == printed
    assert "| standard-s1 | uniform-s1 | 50.0 | 50.0, 100.0 | 100.0, 0.0 |" in printed


def test_header_rows_refuses_a_row_whose_probes_or_posts_are_not_the_ones_it_parses(row):
    d, valid, _ = row
    readings = pd.read_parquet(d / "results/tables/replicate_readings.parquet")
    readings.assign(**{CENTRAL: 0.25}).to_parquet(d / "results/tables/replicate_readings.parquet")
    with pytest.raises(SystemExit, match="standard-s1 x uniform-s1: the probes give 0.500000, the readings 0.250000"):
        header_rows.replicate_rows(d, "newsgroups")
    valid.iloc[::-1].to_parquet(d / "results/data/newsgroups/valid.parquet")  # another order
    with pytest.raises(SystemExit, match="other validation posts than the row's results/data"):
        header_rows.replicate_rows(d, "newsgroups")


def test_a_correlation_over_three_replicates_says_it_has_no_interval():
    # Fisher's interval needs n > 3 (1 / sqrt(n - 3)); a kept block of three printed "[+nan, +nan]"
    assert r_interval({"r": 0.99, "r_low": np.nan, "r_high": np.nan}) == \
        "+0.99 (too few replicates for an interval)"
    assert r_interval({"r": -0.24, "r_low": -0.84, "r_high": 0.63}) == "-0.24 [-0.84, +0.63]"
    # a block of two replicates printed "r = +nan (too few replicates for an interval)"
    assert r_interval({"r": np.nan, "r_low": np.nan, "r_high": np.nan}) == "undefined (too few replicates)"


def test_a_block_trained_under_the_header_plan_is_not_headed_exploratory(row, tmp_path, capsys):
    # a planned block's per-block print said "Exploratory (a split chosen after the posts' words
    # were seen ...)": its split was fixed by the plan before it trained
    d, _, _ = row
    kept = tmp_path / "kept/parts11-13/tables/header_rows.parquet"
    assert header_rows.main([str(d), "--keep", str(kept)]) == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith("Exploratory (a split chosen")
    plan = [{"path": "docs/plans/newsgroups_header.yaml", "sha256": "0" * 64}]
    (kept.parents[1] / "run.json").write_text(json.dumps({"plan": plan}))
    assert header_rows.main(["--kept", str(kept)]) == 0
    summary = capsys.readouterr().out.split("\n\n")[1]
    assert summary.startswith("One block of docs/plans/newsgroups_header.yaml's replicates, trained under it")
    assert "Exploratory" not in summary
    (d / "plan.json").write_text(json.dumps(plan[0]))  # a working directory's record: one plan as a dict
    assert header_rows.main([str(d)]) == 0
    assert capsys.readouterr().out.split("\n\n")[1].startswith("One block of")
