"""The real download -> verify -> prepare path through the workflow, on the
copies of the canonical downloads in ../shared/data served on 127.0.0.1."""


import pandas as pd
import pytest
import yaml

from httpserver import serve
from test_workflow import REPO, snakemake

from attnlearn.rows import local_sources
from attnlearn.rows.local_sources import LOCAL

SHARED = REPO.parent / "shared" / "data"
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data (test copies of the datasets) absent")


def local_config(base_url: str, config_file: str = "paper.yaml") -> dict:
    """A shipped config's entries for the datasets copied here, pointed at the local server: the
    first dataset of each source kind (multi30k_tf, multi30k_mh read the same files as multi30k)."""
    config = local_sources.local_config(yaml.safe_load((REPO / "config" / config_file).read_text()), base_url)
    first = {}
    for name, entry in config["datasets"].items():
        first.setdefault(entry["source"]["kind"], (name, entry))
    return {"device": "cpu", "datasets": dict(first.values())}


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    work = tmp_path_factory.mktemp("real")
    with serve(SHARED) as (url, handler):
        path = work / "local.yaml"
        path.write_text(yaml.safe_dump(local_config(url)))
        snakemake("--cores", "2", "results/tables/datasets.parquet", "--configfile", path, cwd=work)
        hits = dict(handler.hits)
    return work, hits


def test_every_file_downloaded_once_and_verified(prepared):
    work, hits = prepared
    assert sorted(hits) == sorted(f"/{p}" for files in LOCAL.values() for p, _ in files.values())
    assert all(n == 1 for n in hits.values())
    assert (work / "data/downloads/sst/trainDevTestTrees_PTB.zip").exists()


def test_counts_match_the_datasets(prepared):
    work, _ = prepared
    card = pd.read_parquet(work / "results/tables/datasets.parquet").set_index(["dataset", "split"])["examples"]
    assert [card["multi30k", s] for s in ("train", "valid", "test")] == [29000, 1014, 1000]
    assert [card["sst", s] for s in ("train", "valid", "test")] == [6920, 872, 1821]
    assert card["sms_spam"].sum() == 5572  # 5,574 messages less 2 with no word (':)', ':-) :-)')
    assert card["sms_spam", "train"] == 3500  # the paper's Table 9
    assert card["newsgroups", "train"] == 1197 and card["newsgroups", "test"] == 796


def test_prepared_tables_follow_the_contract(prepared):
    work, _ = prepared
    mt = pd.read_parquet(work / "results/data/multi30k/train.parquet")
    assert list(mt.columns) == ["src", "tgt"] and (mt["src"].str.len() > 0).all()
    sst = pd.read_parquet(work / "results/data/sst/valid.parquet")
    assert list(sst.columns) == ["text", "label"] and set(sst["label"]) == {0, 1}
    sms = pd.concat([pd.read_parquet(work / f"results/data/sms_spam/{s}.parquet") for s in ("train", "valid")])
    assert sms["label"].sum() == 747
    # stored in a random order, so the first rows (what probes read) hold both classes
    for ds, split in (("newsgroups", "valid"), ("newsgroups", "train"), ("sst", "valid")):
        head = pd.read_parquet(work / f"results/data/{ds}/{split}.parquet")["label"].head(200)
        assert 0.3 < head.mean() < 0.7, (ds, split)
    ng = pd.read_parquet(work / "results/data/newsgroups/train.parquet")
    assert not ng["text"].str.contains("_").any()
    assert ng["text"].str.contains("<unk>").any()


@pytest.mark.workflow
def test_rerun_with_downloads_present_fetches_nothing(prepared):
    work, _ = prepared
    with serve(SHARED) as (url, handler):
        path = work / "again.yaml"
        path.write_text(yaml.safe_dump(local_config(url)))
        out = snakemake("-n", "results/tables/datasets.parquet", "--configfile", path, cwd=work).stdout
    assert "rule download" not in out


@pytest.mark.workflow
def test_wrong_checksum_stops_the_run_and_leaves_nothing(tmp_path):
    with serve(SHARED) as (url, _):
        config = local_config(url)
        config["datasets"] = {"sst": config["datasets"]["sst"]}
        config["datasets"]["sst"]["source"]["files"]["archive"]["sha256"] = "ab" * 32
        path = tmp_path / "bad.yaml"
        path.write_text(yaml.safe_dump(config))
        proc = snakemake("--cores", "1", "results/data/sst/train.parquet", "--configfile", path, cwd=tmp_path,
                         check=False)
    assert proc.returncode != 0
    log = (tmp_path / "results/logs/download/sst/trainDevTestTrees_PTB.zip.log").read_text()
    assert "checksum mismatch" in log and "ab" * 32 in log and "50faea3c" in log
    assert not list((tmp_path / "data").rglob("*.zip")) if (tmp_path / "data").exists() else True
    assert not (tmp_path / "results/data").exists()


@pytest.mark.workflow
def test_archive_placed_by_hand_is_used_offline_and_verified(tmp_path):
    config = local_config("http://127.0.0.1:9")  # nothing listens there: offline
    config["datasets"] = {"sms_spam": config["datasets"]["sms_spam"]}
    path = tmp_path / "offline.yaml"
    path.write_text(yaml.safe_dump(config))
    target = tmp_path / "data/downloads/sms_spam/smsspamcollection.zip"
    target.parent.mkdir(parents=True)
    target.write_bytes((SHARED / "sms_spam/smsspamcollection.zip").read_bytes())
    leftover = target.with_name(".smsspamcollection.zip.tmp-0a1b2c3d.tmp")  # of a download killed earlier
    leftover.write_bytes(b"PK")
    snakemake("--cores", "1", "results/data/sms_spam/train.parquet", "--configfile", path, cwd=tmp_path)
    assert len(pd.read_parquet(tmp_path / "results/data/sms_spam/train.parquet")) == 3500
    assert not leftover.exists()
    log = (tmp_path / "results/logs/prepare_data/sms_spam.log").read_text()
    assert "dropped 2 message(s) with no word after tokenization" in log
    # a corrupted hand-placed file is refused by the checksum, not parsed
    target.write_bytes(b"not the archive")
    proc = snakemake("--cores", "1", "results/data/sms_spam/train.parquet", "--forcerun", "prepare_data",
                     "--configfile", path, cwd=tmp_path, check=False)
    assert proc.returncode != 0
    log = (tmp_path / "results/logs/prepare_data/sms_spam.log").read_text()
    assert "checksum mismatch" in log
    assert not (tmp_path / "results/data/sms_spam/train.parquet").exists()


def test_median_lengths_match_the_papers_table_9(prepared):
    """Where the paper's Table 9 is comparable (same splits), our data card equals it."""
    work, _ = prepared
    card = pd.read_parquet(work / "results/tables/datasets.parquet").set_index(["dataset", "split"])
    assert card.loc[("newsgroups", "train"), "median_src_tokens"] == 183
    assert card.loc[("newsgroups", "valid"), "median_src_tokens"] == 207
    assert card.loc[("sms_spam", "train"), "median_src_tokens"] == 13
    assert tuple(card.loc[("multi30k", "train"), ["median_src_tokens", "median_tgt_tokens"]]) == (14, 14)
    assert tuple(card.loc[("multi30k", "valid"), ["median_src_tokens", "median_tgt_tokens"]]) == (15, 14)
