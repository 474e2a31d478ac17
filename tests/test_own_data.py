"""The user's own data (src/attnlearn/data/own.py): tables in four formats, parallel text
files, given or seeded splits, and bad files named with their line."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnlearn.config import ConfigError, load_config
from attnlearn.data.parsers import DataError
from attnlearn.data.prepare import prepare

REPO = Path(__file__).resolve().parents[1]
SCHEMA = REPO / "config" / "schema.yaml"
ROWS = [("A fine film!", "pos"), ("dull, too long", "neg"), ("loved it", "pos"), ("not good", "neg")] * 5


def write_table(path: Path, rows, columns=("review", "stars")):
    df = pd.DataFrame(rows, columns=list(columns))
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        df.to_csv(path, sep="\t", index=False)
    elif path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(dict(zip(columns, r))) + "\n" for r in rows))
    else:
        df.to_parquet(path)
    return path


def own(kind, files, **options):
    source = {"kind": kind, "files": {k: {"path": str(v)} for k, v in files.items()}, "options": options}
    return prepare(source, {k: str(v) for k, v in files.items()})


CLS = dict(text="review", label="stars", labels=["neg", "pos"])


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet"])
def test_classification_table_in_every_format(suffix, tmp_path):
    path = write_table(tmp_path / f"reviews{suffix}", ROWS)
    out = own("own_classification", {"data": path}, valid=0.25, test=4, **CLS)
    assert [len(out[s]) for s in ("train", "valid", "test")] == [12, 4, 4]
    both = pd.concat(out.values())
    assert sorted(zip(both["text"], both["label"])) == sorted(
        [("a fine film", 1), ("dull too long", 0), ("loved it", 1), ("not good", 0)] * 5)


def test_seeded_split_is_the_same_for_the_same_seed(tmp_path):
    path = write_table(tmp_path / "r.csv", [(f"text {i}", "pos" if i % 2 else "neg") for i in range(40)])
    a, b = (own("own_classification", {"data": path}, valid=10, seed=3, **CLS) for _ in range(2))
    c = own("own_classification", {"data": path}, valid=10, seed=4, **CLS)
    assert a["valid"].equals(b["valid"]) and not a["valid"].equals(c["valid"])


def test_given_splits_are_kept(tmp_path):
    train = write_table(tmp_path / "train.jsonl", ROWS)
    valid = write_table(tmp_path / "valid.jsonl", ROWS[:4])
    out = own("own_classification", {"train": train, "valid": valid}, **CLS)
    assert [len(out[s]) for s in ("train", "valid", "test")] == [20, 4, 0]


def test_translation_from_parallel_files_and_from_a_table(tmp_path):
    (tmp_path / "de.txt").write_text("ein Haus\nzwei Katzen\ndrei Hunde\nvier\n")
    (tmp_path / "en.txt").write_text("a house\ntwo cats\nthree dogs\nfour\n")
    out = own("own_translation", {"src": tmp_path / "de.txt", "tgt": tmp_path / "en.txt"}, valid=1, test=1)
    pairs = pd.concat(out.values())
    assert dict(zip(pairs["src"], pairs["tgt"]))["zwei Katzen"] == "two cats" and len(out["train"]) == 2
    table = write_table(tmp_path / "pairs.tsv", [("ein Haus", "a house"), ("zwei", "two")] * 3, ("de", "en"))
    out = own("own_translation", {"train": table, "valid": table}, src="de", tgt="en")
    assert list(out["valid"].columns) == ["src", "tgt"] and len(out["train"]) == 6


@pytest.mark.parametrize("name, content, options, message", [
    ("r.csv", "review,stars\nfine,pos\ntoo,many,fields\n", CLS, "r.csv: line 3 has 3 fields, expected 2"),
    ("r.csv", "text,stars\nfine,pos\n", CLS, "r.csv: line 1 (header): no column 'review'"),
    ("r.csv", "review,stars\nfine,pos\nbad,meh\n", CLS, "r.csv: line 3: label 'meh' is not one of ['neg', 'pos']"),
    ("r.csv", "review,stars\nfine,pos\n,neg\n", CLS, "r.csv: line 3: empty 'review'"),
    ("r.jsonl", '{"review": "fine", "stars": "pos"}\n{"review": "oops"\n', CLS, "r.jsonl: line 2 is not JSON"),
    ("r.jsonl", '{"review": "fine", "stars": "pos"}\n{"review": "x"}\n', CLS, "r.jsonl: line 2: no column 'stars'"),
    ("r.csv", "review,stars\nfine,5\n", dict(CLS, labels=None),
     "line 2: label '5' is not one of ['0', '1']; set options.labels"),
    ("r.txt", "review,stars\n", CLS, "r.txt: unknown table format"),
])
def test_bad_table_names_file_and_line(name, content, options, message, tmp_path):
    (tmp_path / name).write_text(content)
    with pytest.raises(DataError, match=re.escape(message)):
        own("own_classification", {"data": tmp_path / name}, **{k: v for k, v in options.items() if v is not None})


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path):
    (tmp_path / "r.csv").write_bytes("review,stars\nfine,pos\ncaf\xe9 ok,neg\n".encode("latin-1"))
    with pytest.raises(DataError, match=re.escape("r.csv: line 3 is not UTF-8 (byte 0xe9 at column 4)")):
        own("own_classification", {"data": tmp_path / "r.csv"}, **CLS)


def test_bad_parallel_files_are_named(tmp_path):
    (tmp_path / "de.txt").write_text("ein\n\ndrei\n")
    (tmp_path / "en.txt").write_text("one\ntwo\nthree\n")
    with pytest.raises(DataError, match=r"de.txt: line 2 is empty"):
        own("own_translation", {"src": tmp_path / "de.txt", "tgt": tmp_path / "en.txt"})
    (tmp_path / "de.txt").write_text("ein\nzwei\n")
    with pytest.raises(DataError, match=r"different line counts \(2 vs 3\)"):
        own("own_translation", {"src": tmp_path / "de.txt", "tgt": tmp_path / "en.txt"})


def test_a_local_file_with_a_wrong_checksum_is_refused(tmp_path):
    path = write_table(tmp_path / "r.csv", ROWS)
    source = {"kind": "own_classification", "files": {"data": {"path": str(path), "sha256": "0" * 64}},
              "options": CLS}
    with pytest.raises(Exception, match="checksum mismatch.*r.csv"):
        prepare(source, {"data": str(path)})


def own_config(kind="own_classification", task="classification", files=None, **options):
    files = files or {"data": {"path": "r.csv"}}
    return {"datasets": {"mine": {"task": task, "source": {"kind": kind, "files": files,
                                                            "options": {**CLS, **options}}}}}


@pytest.mark.parametrize("config, message", [
    (own_config(task="translation"), "'own_classification' is for classification datasets"),
    (own_config(files={"train": {"path": "r.csv"}}), "needs exactly the files ['data'] or ['train', 'valid']"),
    (own_config(files={"data": {"path": "r.csv", "url": "https://x/r.csv"}}), "datasets.mine.source.files.data"),
    # values that prepare_data would refuse only after the downloads: refused before any job
    (own_config(valid=1.5), "datasets.mine.source.options.valid: a fraction in (0, 1) or a count"),
    (own_config(valid=0), "datasets.mine.source.options.valid: a fraction in (0, 1) or a count of at least 1"),
    (own_config(test=-2), "datasets.mine.source.options.test: a fraction in [0, 1) or a count of 0 or more"),
    (own_config(valid=0.6, test=0.5), "options.valid + options.test: 1.1 of the examples leaves none"),
    (own_config(labels=["neg", "pos", "mixed"]), "options.labels: two different label values"),
    (own_config(labels=["pos", "pos"]), "options.labels: two different label values"),
])
def test_own_source_config_errors_name_the_key(config, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_config(config, SCHEMA)


def test_a_missing_local_file_is_a_config_error_naming_its_line(tmp_path):
    """Checked when the config is read, before Snakemake plans: a prepared dataset whose file
    is gone would otherwise plan nothing, and a new one stop with Snakemake's raw exception."""
    write_table(tmp_path / "r.csv", ROWS)
    (tmp_path / "folder.csv").mkdir()
    config = own_config(files={"data": {"path": "r.csv"}})
    assert load_config(config, SCHEMA, data_root=tmp_path)["datasets"]["mine"]["source"]["files"]["data"]
    files = tmp_path / "mine.yaml"
    for path, what in (("nope.csv", "does not exist"), ("folder.csv", "is a folder, not a file")):
        config = own_config(files={"data": {"path": path}})
        files.write_text(yaml.safe_dump(config))
        with pytest.raises(ConfigError) as e:
            load_config(config, SCHEMA, source=str(files), data_root=tmp_path)
        line = files.read_text().splitlines().index(f"          path: {path}") + 1
        assert str(e.value).splitlines()[1] == (
            f"{files}:{line}: datasets.mine.source.files.data.path: {path} {what} (a relative path is read "
            f"from the directory Snakemake runs in, {tmp_path})")
    # parallel text: each missing file named, an absolute path without the directory
    config = own_config("own_translation", "translation", files={"src": {"path": "de.txt"},
                                                                   "tgt": {"path": str(tmp_path / "en.txt")}})
    config["datasets"]["mine"]["source"]["options"] = {}
    with pytest.raises(ConfigError) as e:
        load_config(config, SCHEMA, data_root=tmp_path)
    lines = str(e.value).splitlines()
    assert lines[0].endswith("2 errors")
    assert lines[1].endswith("datasets.mine.source.files.src.path: de.txt does not exist (a relative path is read "
                             f"from the directory Snakemake runs in, {tmp_path})")
    assert lines[2].endswith(f"datasets.mine.source.files.tgt.path: {tmp_path / 'en.txt'} does not exist")


def snakemake_in(work, *args):
    return subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(work),
                           "--cores", "1", *map(str, args)], capture_output=True, text=True)


@pytest.mark.workflow
def test_a_missing_or_changed_data_file_after_its_data_were_prepared(tmp_path):
    """A missing local file stops the run before any job, naming the config's line, whether the
    dataset was prepared before or not; a changed one reruns the preparation and says why
    (own_classification, own_translation, and a verified download whose cached copy changed)."""
    subprocess.run([sys.executable, str(REPO / "tests/make_own_data.py"), str(tmp_path / "my_data")], check=True)
    config = yaml.safe_load((REPO / "tests/configs/own.yaml").read_text())
    good = tmp_path / "own.yaml"
    good.write_text(yaml.safe_dump(config))
    targets = ["results/tokenized/my_reviews/train.parquet", "results/tokenized/my_pairs/train.parquet"]
    first = snakemake_in(tmp_path, *targets, "--configfile", good)
    assert first.returncode == 0, first.stderr[-3000:]
    made = sorted((tmp_path / "results").rglob("*.parquet"))
    before = {p: p.stat().st_mtime_ns for p in made}

    for name, key, path in (("my_reviews", "data", "my_data/nope.csv"), ("my_pairs", "tgt", "my_data/nope.txt"),
                            ("new_name", "data", "my_data/nope.csv")):
        bad = yaml.safe_load(good.read_text())
        entry = bad["datasets"].pop("my_reviews" if name == "new_name" else name)
        entry["source"]["files"][key]["path"] = path
        bad["datasets"][name] = entry
        config_file = tmp_path / f"bad_{name}.yaml"
        config_file.write_text(yaml.safe_dump(bad))
        line = next(i + 1 for i, text in enumerate(config_file.read_text().splitlines()) if path in text)
        for dry in ([], ["-n"]):
            proc = snakemake_in(tmp_path, *dry, "--configfile", config_file)
            console = proc.stdout + proc.stderr
            assert proc.returncode != 0, console[-3000:]
            assert f"{config_file}:{line}: datasets.{name}.source.files.{key}.path: {path} does not exist" in console
            assert "MissingInputException" not in console and "Nothing to be done" not in console
            assert "Traceback" not in console
        assert {p: p.stat().st_mtime_ns for p in made} == before  # no job ran, nothing removed
        assert not (tmp_path / "results/data/new_name").exists()

    # edited in place: that dataset's preparation reruns, and what follows, saying why
    reviews = tmp_path / "my_data/reviews.csv"
    reviews.write_text(reviews.read_text() + "a new review,pos\n")
    source, target = tmp_path / "my_data/source.txt", tmp_path / "my_data/target.txt"
    source.write_text(source.read_text() + "a b c\n")
    target.write_text(target.read_text() + "x y\n")
    again = snakemake_in(tmp_path, *targets, "--configfile", good)
    assert again.returncode == 0, again.stderr[-3000:]
    [why] = [line for line in again.stderr.splitlines() if line.startswith("  prepare_data (2 jobs): input newer: ")]
    assert set(why.split("input newer: ")[1].split(", ")) == {"my_data/reviews.csv", "my_data/source.txt",
                                                               "my_data/target.txt"}, why
    assert "then 2 jobs of tokenize on their outputs" in again.stderr
    train = pd.read_parquet(tmp_path / "results/data/my_reviews/train.parquet")
    valid = pd.read_parquet(tmp_path / "results/data/my_reviews/valid.parquet")
    assert len(train) + len(valid) == 241

    # a verified download: its cached copy changed on disk reruns the preparation, which refuses it
    sha = __import__("hashlib").sha256((tmp_path / "my_data/reviews.csv").read_bytes()).hexdigest()
    config["datasets"] = {"my_reviews": config["datasets"]["my_reviews"]}
    config["datasets"]["my_reviews"]["source"]["files"]["data"] = {"url": reviews.as_uri(), "sha256": sha}
    download = tmp_path / "download.yaml"
    download.write_text(yaml.safe_dump(config))
    fetched = snakemake_in(tmp_path, targets[0], "--configfile", download)
    assert fetched.returncode == 0, fetched.stderr[-3000:]
    cached = tmp_path / "data/downloads/my_reviews/reviews.csv"
    cached.write_text(cached.read_text().replace("pos", "neg", 1))
    changed = snakemake_in(tmp_path, targets[0], "--configfile", download)
    assert changed.returncode != 0
    assert "prepare_data (1 job): input newer: data/downloads/my_reviews/reviews.csv" in changed.stderr
    last = changed.stderr.strip().splitlines()[-1]
    assert last.strip().startswith(f"checksum mismatch for {reviews.as_uri()} (file data/downloads/my_reviews/"
                                   f"reviews.csv): expected sha256 {sha}"), changed.stderr[-3000:]
    assert not (tmp_path / "results/data/my_reviews/train.parquet").exists()


@pytest.mark.workflow
def test_the_readme_own_data_example_runs_end_to_end(tmp_path):
    """docs/own_data.md's worked example: make the example files, run the study."""
    subprocess.run([sys.executable, str(REPO / "tests/make_own_data.py"), str(tmp_path / "my_data")], check=True)
    config = yaml.safe_load((REPO / "tests/configs/own.yaml").read_text())
    assert config["datasets"]["my_reviews"]["source"]["files"]["data"]["path"] == "my_data/reviews.csv"
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path),
                           "--cores", "2", "--configfile", str(REPO / "tests/configs/own.yaml")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    table2 = pd.read_parquet(tmp_path / "results/tables/table2.parquet").set_index("dataset")
    assert set(table2.index) == {"my_reviews", "my_pairs"}
    assert table2["agr_alpha_xi_uniform"].between(0, 1).all()
    card = pd.read_parquet(tmp_path / "results/tables/datasets.parquet").set_index(["dataset", "split"])
    assert card.loc[("my_reviews", "valid"), "examples"] == 48 and card.loc[("my_pairs", "test"), "examples"] == 20
    assert (tmp_path / "results/figures/my_reviews/contextualized.png").stat().st_size > 10_000


@pytest.mark.process
def test_a_data_error_is_the_last_thing_the_console_says(tmp_path):
    """A file that is not UTF-8: the run's console ends with the job's own error, naming the
    file and the line (not Snakemake's generic WorkflowError), its message alone: the traceback
    stays in the job's log."""
    subprocess.run([sys.executable, str(REPO / "tests/make_own_data.py"), str(tmp_path / "my_data")], check=True)
    reviews = tmp_path / "my_data" / "reviews.csv"
    lines = reviews.read_bytes().split(b"\n")
    lines[4] = lines[4][:5] + b"\xe9" + lines[4][5:]
    reviews.write_bytes(b"\n".join(lines))
    proc = subprocess.run([sys.executable, "-m", "snakemake", "results/tables/datasets.parquet", "-s",
                           str(REPO / "Snakefile"), "-d", str(tmp_path), "--cores", "1", "--configfile",
                           str(REPO / "tests/configs/own.yaml"), "--config", "only=[my_reviews]"],
                          capture_output=True, text=True)
    console = (proc.stdout + proc.stderr).strip().splitlines()
    assert proc.returncode != 0
    assert console[-1].strip().startswith("my_data/reviews.csv: line 5 is not UTF-8"), console[-6:]
    assert console[-2].strip().startswith("prepare_data (my_reviews)")
    assert not [line for line in console if "Traceback" in line or line.strip(" |").startswith("File ")], console
    assert sum("my_data/reviews.csv: line 5 is not UTF-8" in line for line in console) == 2  # at the job, at the end
    log = (tmp_path / "results/logs/prepare_data/my_reviews.log").read_text()
    assert "Traceback (most recent call last)" in log and "DataError: my_data/reviews.csv: line 5" in log
