"""The proxy's seed list (proxy.seeds): one independent proxy per seed, one per Table 2
replicate; adding a seed trains only the new proxy; the old single `proxy.seed` is refused."""

import re

import pandas as pd
import pytest
import torch
import yaml

from test_workflow import TINY, snakemake

DATASET = "tiny_cls"


def write_config(path, seeds):
    """tests/configs/tiny.yaml reduced to tiny_cls (no experiments), with proxy seeds ``seeds``."""
    config = yaml.safe_load(TINY.read_text())
    config["datasets"] = {DATASET: config["datasets"][DATASET]}
    config["datasets"][DATASET]["proxy"]["seeds"] = seeds
    del config["experiments"]
    path.write_text(yaml.safe_dump(config))
    return path


def proxy_jobs(output: str, rule: str = "proxy") -> dict[str, list[str]]:
    """pseed -> outputs of every ``rule`` job in a dry run's output."""
    jobs = {}
    for block in re.findall(rf"^rule {rule}:\n(.*?)(?=\n\n|\Z)", output, re.S | re.M):
        seed = re.search(r"wildcards: dataset=([\w-]+), pseed=(\d+)", block)
        assert seed.group(1) == DATASET
        jobs[seed.group(2)] = re.search(r"^    output: (.*)$", block, re.M).group(1).split(", ")
    return jobs


def probe_targets(seeds):
    return [f"results/probes/{DATASET}/proxy-s{s}.parquet" for s in seeds]


@pytest.mark.workflow
def test_dry_run_plans_one_proxy_job_per_seed(tmp_path):
    config = write_config(tmp_path / "config.yaml", [0, 1])
    out = snakemake("-n", "--configfile", config, cwd=tmp_path).stdout
    jobs = proxy_jobs(out)
    assert sorted(jobs) == ["0", "1"]
    assert set(jobs["0"]).isdisjoint(jobs["1"])
    for seed, outputs in jobs.items():
        assert sorted(outputs) == sorted([f"results/proxy/{DATASET}/s{seed}/{f}"
                                          for f in ("model.pt", "log.parquet", "logreg.parquet")]
                                         + probe_targets([seed]))
    train = proxy_jobs(out, "proxy_probe_train")  # tiny.yaml sets tables.train_split
    assert train == {s: [f"results/train_split/probes/{DATASET}/proxy-s{s}.parquet"] for s in ("0", "1")}
    # the agreement jobs read every seed's probe (the first also as `proxy`)
    for folder in ("results/probes", "results/train_split/probes"):
        agreement = re.search(rf"^rule agreement(?:_train)?:\n    input: (.*)\n(?:    .*\n)*?    output: "
                              rf"{folder.replace('probes', 'agreement')}/", out, re.M)
        assert {f"{folder}/{DATASET}/proxy-s{s}.parquet" for s in (0, 1)} <= set(agreement.group(1).split(", "))


@pytest.mark.workflow
def test_agreement_inputs_name_the_first_proxy_and_every_proxy(tmp_path):
    """rules/common.smk: `proxy` is the first seed's probe, `proxies` every seed's in config order."""
    config = write_config(tmp_path / "config.yaml", [5, 0, 3])
    out = snakemake("-n", f"results/agreement/{DATASET}.parquet", "--configfile", config, cwd=tmp_path).stdout
    assert sorted(proxy_jobs(out)) == ["0", "3", "5"]
    inputs = re.search(r"^rule agreement:\n    input: (.*)$", out, re.M).group(1).split(", ")
    proxies = [p for p in inputs if "/proxy-s" in p]
    assert proxies[0] == f"results/probes/{DATASET}/proxy-s5.parquet"  # `proxy`, then `proxies`
    assert list(dict.fromkeys(proxies)) == probe_targets([5, 0, 3])


@pytest.fixture(scope="module")
def two_proxies(tmp_path_factory):
    """tiny_cls's proxies of seeds 0 and 1, trained by the workflow."""
    work = tmp_path_factory.mktemp("proxy_seeds")
    config = write_config(work / "config.yaml", [0, 1])
    snakemake("--cores", "2", *probe_targets([0, 1]), "--configfile", config, cwd=work)
    return work, config


@pytest.mark.workflow
def test_different_seeds_give_different_proxies_and_the_same_seed_the_same_bytes(two_proxies):
    work, config = two_proxies
    model = {s: work / f"results/proxy/{DATASET}/s{s}/model.pt" for s in (0, 1)}
    state = {s: torch.load(path, weights_only=True) for s, path in model.items()}
    assert state[0].keys() == state[1].keys()
    assert all(not torch.equal(state[0][k], state[1][k]) for k in state[0])
    probe = {s: pd.read_parquet(work / probe_targets([s])[0]) for s in (0, 1)}
    assert not probe[0]["xi_px"].equals(probe[1]["xi_px"])
    pd.testing.assert_series_equal(probe[0]["count"], probe[1]["count"])  # the count table has no seed
    # Table 11's logistic regression: fitted in the first seed's job only
    logreg = {s: pd.read_parquet(work / f"results/proxy/{DATASET}/s{s}/logreg.parquet") for s in (0, 1)}
    assert len(logreg[0]) > 0 and logreg[0]["chosen"].sum() == 1
    assert logreg[1].empty and list(logreg[1].columns) == list(logreg[0].columns)
    assert "xi_lr" in probe[0].columns and "xi_lr" not in probe[1].columns
    # seed 0 trained again: the same bytes
    before = {p: (p.read_bytes(), p.stat().st_mtime_ns) for p in (
        model[0], work / probe_targets([0])[0], work / f"results/proxy/{DATASET}/s0/log.parquet")}
    snakemake("--cores", "1", *probe_targets([0]), "--forcerun", "proxy", "--configfile", config, cwd=work)
    for path, (data, mtime) in before.items():
        assert path.stat().st_mtime_ns != mtime and path.read_bytes() == data, path


@pytest.mark.workflow
def test_adding_a_seed_trains_only_the_new_proxy(two_proxies):
    work, _ = two_proxies
    more = write_config(work / "more.yaml", [0, 1, 2])
    out = snakemake("-n", *probe_targets([0, 1, 2]), "--configfile", more, cwd=work).stdout
    assert sorted(proxy_jobs(out)) == ["2"]
    assert "Nothing to be done" in snakemake("-n", *probe_targets([0, 1]), "--configfile", more, cwd=work).stdout
    # the seeds' params hold their own seed, not the list
    summary = snakemake("--summary", *probe_targets([0, 1, 2]), "--configfile", more, cwd=work).stdout
    status = {line.split("\t")[0]: line.split("\t")[-2:] for line in summary.splitlines()[1:] if "\t" in line}
    for s in (0, 1):
        assert status[probe_targets([s])[0]] == ["ok", "no update"], status
    assert status[probe_targets([2])[0]] == ["missing", "update pending"], status


@pytest.mark.workflow
@pytest.mark.parametrize("proxy, expected", [
    ({"seed": 1}, "unknown key 'seed'"),
    ({"seed": 1}, "proxy.seed was replaced by proxy.seeds"),
    ({"seeds": []}, "datasets.tiny_cls.proxy.seeds"),
    ({"seeds": [1, 1]}, "non-unique"),
    ({"seeds": 1}, "datasets.tiny_cls.proxy.seeds"),
])
def test_old_or_bad_proxy_seeds_are_refused_naming_the_key(proxy, expected, tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["datasets"][DATASET]["proxy"].update(proxy)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = snakemake("-n", "--configfile", path, cwd=tmp_path, check=False)
    assert proc.returncode != 0
    assert expected in proc.stdout + proc.stderr
    assert f"invalid config ({path})" in proc.stdout + proc.stderr
