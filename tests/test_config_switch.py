"""Two configs in one directory: after a good run of one config, a run of another that fails
in prepare_data leaves the first config's summaries intact or marked NOT CURRENT at their top,
and the summaries it made name it (src/attnlearn/reporting/made_for.py); a run that makes no
summary leaves them all as they were."""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnlearn.reporting.made_for import read_stamp, summaries

REPO = Path(__file__).resolve().parents[1]
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(REPO / "Snakefile")]


def run(*args, cwd):
    return subprocess.run([*SNAKEMAKE, "-d", str(cwd), *map(str, args)], capture_output=True, text=True)


def content(path: Path):
    """What a summary shows without its stamp: Markdown and HTML without the stamp's words,
    a table's frame, a figure's pixels."""
    if path.suffix == ".md":
        return path.read_text().split("\n\n", 1)[1]
    if path.suffix == ".html":
        return re.sub(r"<!-- made_for: .*? --><p class=\"made-for\"[^>]*>.*?</p>", "", path.read_text(), flags=re.S)
    if path.suffix == ".parquet":
        return pd.read_parquet(path).to_json()
    from PIL import Image

    return Image.open(path).tobytes()


@pytest.mark.workflow
def test_a_failed_run_of_another_config_leaves_the_first_configs_summaries_intact_or_marked(tmp_path):
    subprocess.run([sys.executable, REPO / "tests/make_own_data.py", tmp_path / "my_data"], check=True)
    first = tmp_path / "first.yaml"
    first.write_text((REPO / "tests/configs/own.yaml").read_text())
    good = run("--cores", "2", "--configfile", first, cwd=tmp_path)
    assert good.returncode == 0, good.stderr[-3000:]
    made = {p: read_stamp(tmp_path / p) for p in summaries(tmp_path)}
    assert made and all(s is not None and s["config"] == first.name and "not_current" not in s
                        for s in made.values()), made
    assert (tmp_path / "results/tables/tables.md").read_text().splitlines()[1].startswith(
        f"> Made for config `{first.name}` (settings sha256 ")
    before = {p: (tmp_path / p).read_bytes() for p in made}
    shown = {}
    for p in made:  # what each shows, read from a copy (the directory is the run's)
        copy = tmp_path / "before" / p
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(tmp_path / p, copy)
        shown[p] = content(copy)

    # a run that makes no summary (pricing another config's GPU-hours) leaves every one as it was
    pricing = run("-f", "gpu_hours", "--configfile", REPO / "config/paper.yaml", cwd=tmp_path)
    assert pricing.returncode == 0, pricing.stderr[-3000:]
    assert {p: (tmp_path / p).read_bytes() for p in made} == before
    assert "Not made for" not in pricing.stderr

    # the second config: the classification dataset alone (no translation: its analyses
    # table has no rows), its file lacking the label column, so prepare_data fails
    data = pd.read_csv(tmp_path / "my_data/reviews.csv")
    (tmp_path / "bad").mkdir()
    data[["review"]].to_csv(tmp_path / "bad/reviews.csv", index=False)
    config = yaml.safe_load(first.read_text())
    config["datasets"] = {"my_reviews": config["datasets"]["my_reviews"]}
    config["datasets"]["my_reviews"]["source"]["files"]["data"]["path"] = "bad/reviews.csv"
    second = tmp_path / "missing_col.yaml"
    second.write_text(yaml.safe_dump(config))
    bad = run("--cores", "2", "--configfile", second, cwd=tmp_path)
    assert bad.returncode != 0 and "no column 'sentiment'" in bad.stderr, bad.stderr[-3000:]

    remade, marked, intact = [], [], []
    for p, data in before.items():
        stamp = read_stamp(tmp_path / p)
        if stamp["config"] == second.name:  # made by the failed run, for its config: it says so
            assert "not_current" not in stamp
            remade.append(p)
        elif stamp.get("not_current"):  # the first config's, said at its top, its content intact
            assert stamp["config"] == first.name and stamp["not_current"]["run"]["config"] == second.name
            assert content(tmp_path / p) == shown[p], p
            marked.append(p)
        else:
            assert (tmp_path / p).read_bytes() == data, p
            intact.append(p)
    if not remade:  # the failed run made no summary: every one is the first's, as it says
        assert not marked and "Not made for" not in bad.stderr
        return
    assert not intact  # every summary of the first is now the second's or marked
    tables = (tmp_path / "results/tables/tables.md").read_text().splitlines()
    assert tables[1].startswith(f"> **NOT CURRENT: made for config `{first.name}`")
    assert f"of config `{second.name}`" in tables[1] and "stopped before remaking it" in tables[1]
    assert "NOT CURRENT" in (tmp_path / "results/report/tables.html").read_text()
    assert "does not make it" in read_stamp(tmp_path / "results/figures/my_pairs/heatmap.png")["not_current"]["why"]
    # the summaries the failed run made before it stopped (the issue: analyses.md, norms.parquet)
    # name the config they were made for
    for p in remade:
        assert read_stamp(tmp_path / p)["config"] == second.name
    if Path("results/tables/analyses.md") in remade:
        assert (tmp_path / "results/tables/analyses.md").read_text().splitlines()[1].startswith(
            f"> Made for config `{second.name}`")
    assert f"Not made for config `{second.name}`" in bad.stderr  # the console says what was marked


