"""Every summary names the config it was made for, and one of another config is marked as not
current when a run ends (src/attnlearn/reporting/made_for.py; a config that failed in
prepare_data once rewrote some summaries, and the first config's others looked current)."""

import os
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from attnlearn.reporting.made_for import config_stamp, headline, read_stamp, reconcile, summaries, write_stamp  # noqa: E402

A = config_stamp({"datasets": {"d": {"task": "classification"}}}, ["a.yaml"])
B = config_stamp({"datasets": {"e": {"task": "classification"}}}, ["b.yaml"])


def make(root: Path, rel: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    kind = path.suffix
    if kind == ".md":
        path.write_text("# Tables\n\nrows\n")
    elif kind == ".html":
        path.write_text("<!DOCTYPE html><html><head></head><body><h1>Page</h1></body></html>")
    elif kind == ".parquet":
        pd.DataFrame({"dataset": ["d"], "value": [0.5]}).to_parquet(path)
    elif kind == ".png":
        fig = plt.figure(figsize=(1, 1))
        fig.savefig(path)
        plt.close(fig)
    os.utime(path, (1_000_000_000, 1_000_000_000))
    return path


@pytest.mark.parametrize("rel", ["results/tables/t.md", "results/report/t.html", "results/tables/t.parquet",
                                 "results/figures/t.png"])
def test_a_stamp_is_read_back_replaced_and_keeps_the_file_and_its_time(tmp_path, rel):
    path = make(tmp_path, rel)
    before = path.read_bytes()
    assert read_stamp(path) is None
    write_stamp(path, A)
    assert read_stamp(path) == A and path.stat().st_mtime == 1_000_000_000  # Snakemake sees nothing new
    stale = {**A, "not_current": {"run": B, "at": "2026-11-28 10:00", "why": "does not make it"}}
    write_stamp(path, stale)
    write_stamp(path, stale)  # once, not twice
    assert read_stamp(path) == stale
    write_stamp(path, A)
    assert read_stamp(path) == A
    if path.suffix == ".md":
        text = path.read_text()
        assert text.splitlines()[1] == f"> Made for config `a.yaml` (settings sha256 {A['sha256'][:12]})."
        assert text.endswith("# Tables\n\nrows\n") and text.count("made_for") == 1
    if path.suffix == ".html":
        assert path.read_text().count("made-for") == 1 and "<body><!-- made_for:" in path.read_text()
    if path.suffix == ".parquet":
        assert pd.read_parquet(path).equals(pd.DataFrame({"dataset": ["d"], "value": [0.5]}))
    if path.suffix == ".png":
        from PIL import Image

        assert Image.open(path).size == (100, 100) and len(path.read_bytes()) > len(before)


def test_the_words_at_the_top():
    assert headline(A) == f"Made for config `a.yaml` (settings sha256 {A['sha256'][:12]})."
    stale = {**A, "not_current": {"run": B, "at": "2026-11-28 10:00", "why": "stopped before remaking it"}}
    assert headline(stale) == (
        f"NOT CURRENT: made for config `a.yaml` (settings sha256 {A['sha256'][:12]}). The last run in this "
        f"directory, of config `b.yaml` (settings sha256 {B['sha256'][:12]}) at 2026-11-28 10:00, stopped before "
        "remaking it; `snakemake --cores 2 --configfile a.yaml` makes it current again.")


class FakeDag:
    """Snakemake's DAG as reconcile reads it: jobs with outputs, and which are up to date."""

    def __init__(self, done: dict[str, bool]):
        self.jobs = [SimpleNamespace(output=[rel], ok=ok) for rel, ok in done.items()]

    def noneedrun_finished(self, job):
        return job.ok


def test_a_failed_run_of_another_config_marks_what_it_did_not_remake(tmp_path):
    """The issue's sequence: config A's run made every summary; config B's run made analyses.md
    and failed before tables.md; figures of A's dataset B does not have are not B's."""
    files = ["results/tables/tables.md", "results/tables/analyses.md", "results/tables/norms.parquet",
             "results/figures/d/heatmap.png", "results/report/tables.html"]
    for rel in files:
        make(tmp_path, rel)
    assert [str(p) for p in summaries(tmp_path)] == sorted(files)
    first = reconcile(FakeDag({rel: True for rel in files}), A, tmp_path)
    assert sorted(first["current"]) == sorted(files) and not first["not_current"]
    kept = {rel: (tmp_path / rel).read_bytes() for rel in files}

    (tmp_path / "results/tables/analyses.md").write_text("# Analyses\n\nNo dataset has translation runs.\n")
    (tmp_path / "results/tables/norms.parquet").unlink()
    pd.DataFrame().to_parquet(tmp_path / "results/tables/norms.parquet")  # B's 0 x 0 table
    dag = FakeDag({"results/tables/analyses.md": True, "results/tables/norms.parquet": True,
                   "results/tables/tables.md": False, "results/report/tables.html": False})
    second = reconcile(dag, B, tmp_path, now=0)
    assert sorted(second["current"]) == ["results/tables/analyses.md", "results/tables/norms.parquet"]
    assert sorted(second["not_current"]) == ["results/figures/d/heatmap.png", "results/report/tables.html",
                                             "results/tables/tables.md"]
    assert read_stamp(tmp_path / "results/tables/norms.parquet") == B
    tables = (tmp_path / "results/tables/tables.md").read_text()
    assert tables.splitlines()[1].startswith("> **NOT CURRENT: made for config `a.yaml`")
    assert "of config `b.yaml`" in tables and "stopped before remaking it" in tables
    assert tables.endswith(kept["results/tables/tables.md"].decode().split("\n\n", 1)[1])  # A's text, intact
    assert "does not make it" in read_stamp(tmp_path / "results/figures/d/heatmap.png")["not_current"]["why"]
    assert "NOT CURRENT" in (tmp_path / "results/report/tables.html").read_text()

    # A again: what is up to date for A (nothing to do, or remade) is current again, unmarked
    third = reconcile(FakeDag({rel: True for rel in files}), A, tmp_path)
    assert sorted(third["current"]) == sorted(files)
    for rel in ("results/tables/tables.md", "results/figures/d/heatmap.png", "results/report/tables.html"):
        assert (tmp_path / rel).read_bytes() == kept[rel], rel
    # a partial run of A (one target) leaves A's other summaries as they are
    assert reconcile(FakeDag({"results/tables/tables.md": True}), A, tmp_path) == {"current": [], "not_current": []}


def test_an_unstamped_summary_of_no_known_config_is_marked(tmp_path):
    make(tmp_path, "results/tables/old.md")
    make(tmp_path, "results/tables/new.md")
    done = reconcile(FakeDag({"results/tables/new.md": True}), B, tmp_path)
    assert done["not_current"] == ["results/tables/old.md"]
    assert "made for an unknown config" in (tmp_path / "results/tables/old.md").read_text()


def test_the_settings_hash_does_not_depend_on_key_order_and_names_the_file_as_given(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one = config_stamp({"a": 1, "b": {"c": 2, "d": 3}}, [str(tmp_path / "x.yaml")])
    two = config_stamp({"b": {"d": 3, "c": 2}, "a": 1}, ["x.yaml"])
    assert one == two == {"config": "x.yaml", "sha256": one["sha256"]}
    assert config_stamp({"a": 2}, ["/elsewhere/x.yaml"])["config"] == "/elsewhere/x.yaml"


def test_a_run_that_made_no_summary_leaves_every_stamp_as_it_was(tmp_path):
    """A fault this reproduces: `snakemake -f gpu_hours --configfile config/paper.yaml` (its
    DAG: the pricing job alone), a preflight, or a run of another config whose jobs failed
    before any summary marked every summary NOT CURRENT; the summaries were all the first
    config's, as they said."""
    files = ["results/tables/tables.md", "results/tables/sweep_s.parquet", "results/figures/d/heatmap.png",
             "results/report/tables.html"]
    for rel in files:
        make(tmp_path, rel)
    reconcile(FakeDag({rel: True for rel in files}), A, tmp_path)
    kept = {rel: (tmp_path / rel).read_bytes() for rel in files}
    pricing = FakeDag({"results/preflight/gpu_hours.md": True})
    failed = FakeDag({"results/data/e/train.parquet": False, **{rel: False for rel in files}})
    for dag in (pricing, failed, FakeDag({})):
        assert reconcile(dag, B, tmp_path, now=0) == {"current": [], "not_current": []}
        assert {rel: (tmp_path / rel).read_bytes() for rel in files} == kept
        assert all(read_stamp(tmp_path / rel) == A for rel in files)
    # one summary made by B: the others, A's, are marked
    done = reconcile(FakeDag({"results/tables/tables.md": True}), B, tmp_path, now=0)
    assert done["current"] == ["results/tables/tables.md"] and len(done["not_current"]) == 3


def test_the_end_reconciles_a_run_that_the_snakefiles_onstart_said_started_or_that_had_nothing_to_do(
        tmp_path, monkeypatch):
    """register's exit handler against Snakemake's ways to end: a DAG with jobs left to run is a
    printing mode (--dag, --summary) until onstart: calls what register returned; a DAG with
    nothing to do (no onstart) reconciles all the same; a dry run registers nothing."""
    import atexit

    from attnlearn.reporting import made_for

    make(tmp_path, "results/tables/tables.md")
    handlers = []
    monkeypatch.setattr(atexit, "register", handlers.append)
    monkeypatch.chdir(tmp_path)

    class Dag(FakeDag):
        def needrun_jobs(self, exclude_finished):
            return [job for job in self.jobs if not job.ok]

    def workflow(**done):
        return SimpleNamespace(is_main_process=True, dryrun=False, touch=False, dag=Dag(done))

    pending = workflow(**{"results/tables/tables.md": True, "results/data/d/train.parquet": False})
    for started in (False, True):
        handlers.clear()
        onstart = made_for.register(pending, A)
        if started:
            onstart()
        handlers[0]()
        assert (read_stamp(tmp_path / "results/tables/tables.md") == A) is started
    make(tmp_path, "results/tables/tables.md")
    handlers.clear()
    made_for.register(workflow(**{"results/tables/tables.md": True}), B)
    handlers[0]()
    assert read_stamp(tmp_path / "results/tables/tables.md") == B
    handlers.clear()
    made_for.register(SimpleNamespace(**{**vars(pending), "dryrun": True}), A)()
    assert handlers == []
