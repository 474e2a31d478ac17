"""Probing every checkpoint: batches grouped by length give the same table as one example at
a time, measures run without autograd, memory stays bounded by probe.chunk_elems, and a probe
killed midway resumes at the next unprobed checkpoint, to the uninterrupted table."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from attnlearn.agreement.metric import computed_steps, load_measure
from attnlearn.probing import probes
from attnlearn.probing.best import best_step, best_steps
from attnlearn.probing.probes import MEASURES, probe_checkpoints
from attnlearn.training.model import build_model
from conftest import run_params

TESTS = Path(__file__).resolve().parent


def _probe(task, model, table, ckpt, batch_size, measures=("alpha", "xi", "grad")):
    out = ckpt.parent / f"probe{batch_size}.parquet"
    perf = probe_checkpoints(task, model, table, [(0, ckpt), (5, ckpt)], list(measures), batch_size,
                             torch.device("cpu"), out, progress=False)
    return pq.read_table(out), perf


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_length_grouped_batches_give_the_table_of_unpadded_examples(data, request, tmp_path):
    task, tables = request.getfixturevalue(data)
    model = build_model(task, run_params(task.name))
    torch.save(model.state_dict(), tmp_path / "step.pt")
    valid = tables["valid"].iloc[:40].reset_index(drop=True)
    alone, perf_alone = _probe(task, model, valid, tmp_path / "step.pt", batch_size=1)
    grouped, perf_grouped = _probe(task, model, valid, tmp_path / "step.pt", batch_size=16)
    for col in ("step", "example", "t", "n"):
        assert grouped[col].equals(alone[col])
    keys = np.stack([grouped[c].to_numpy() for c in ("step", "example", "t")])
    assert (np.diff(keys[0] * 10**8 + keys[1] * 10**4 + keys[2]) > 0).all()  # the table's order
    for m in ("alpha", "xi", "grad"):
        a, g = (pa.compute.list_flatten(t[m]).to_numpy() for t in (alone, grouped))
        assert np.allclose(a, g, atol=1e-5), m
    assert perf_grouped.equals(perf_alone)


def test_measures_run_without_autograd(mt_data, tmp_path, monkeypatch):
    """Autograd on the T x S x V logits would keep every chunk alive: chunk_elems would bound nothing."""
    task, tables = mt_data
    model = build_model(task, run_params("translation"))
    torch.save(model.state_dict(), tmp_path / "step.pt")
    seen = []

    def spy(name):
        original = MEASURES[name]

        def wrapped(p, b, out):
            value = original(p, b, out)
            seen.append((name, value.requires_grad))
            return value
        return wrapped

    for name in ("xi", "norm", "grad"):
        monkeypatch.setitem(MEASURES, name, spy(name))
    _probe(task, model, tables["valid"].iloc[:8], tmp_path / "step.pt", 4, ("alpha", "xi", "norm", "grad"))
    assert seen and not any(requires for _, requires in seen)


PEAK = textwrap.dedent("""
    import json, os, sys, tempfile
    import numpy as np, pandas as pd, torch
    from attnlearn.probing.probes import probe_checkpoints
    from attnlearn.models.tasks import make_task
    from attnlearn.training.model import build_model
    torch.set_num_threads(1)
    length, V = int(sys.argv[1]), 2000
    rng = np.random.default_rng(0)
    seq = lambda: [1, *rng.integers(4, V, length - 2).tolist(), 2]
    table = pd.DataFrame({"src_ids": [seq() for _ in range(8)], "tgt_ids": [seq() for _ in range(8)]})
    task = make_task("translation", V)
    model = build_model(task, {"seed": 0, "variant": "standard", "model": {"hidden": 32, "layers": 2, "dropout": 0}})
    path = os.path.join(tempfile.mkdtemp(), "step.pt")
    torch.save(model.state_dict(), path)
    status = lambda key: int(next(l for l in open("/proc/self/status") if l.startswith(key)).split()[1]) * 1024
    run = lambda out: probe_checkpoints(task, model, table, [(0, path)], ["alpha", "xi"], 8, torch.device("cpu"),
                                        out, chunk_elems=int(sys.argv[2]), progress=False)
    # A first call pays the one-time costs (lazy imports, library pages faulted in), which a
    # loaded machine made vary by 100 MB; the second call's peak is the probe's own working
    # memory. Blocks past 32 MB are mmapped by malloc and unmapped on free, so an unchunked
    # T x S x V tensor still raises the second call's peak.
    # Noise only adds (a page faulted in late, a pool grown by another library: one CI run read
    # 108 MB where this machine reads 15-25), so the least of three calls is the probe's own peak.
    run(path + ".warm.parquet")
    peaks = []
    for k in range(3):
        open("/proc/self/clear_refs", "w").write("5")  # the peak (VmHWM) restarts from here
        before = status("VmRSS")
        run(path + f".probe{k}.parquet")
        peaks.append(status("VmHWM") - before)
    print(json.dumps(min(peaks)))
""")


def _peak_added(length: int, chunk_elems: int = 1 << 20) -> int:
    out = subprocess.run([sys.executable, "-c", PEAK, str(length), str(chunk_elems)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.process
def test_probe_memory_is_bounded_by_chunk_elems_not_by_s_t_v():
    """All T x S x V logits of a batch at S = T = 64: 8 * 63 * 64 * 2000 floats = 258 MB; a chunk
    of 2^20 numbers is 4 MB. The peak must not grow with S and T."""
    small, large = _peak_added(16), _peak_added(64)
    assert large < 100 * 2**20, large
    assert large < small + 60 * 2**20, (small, large)
    # the measure sees what chunking saves: one chunk holding all the logits peaks past 200 MB
    assert _peak_added(64, chunk_elems=1 << 40) > 200 * 2**20


# -- a probe job killed midway resumes at the next unprobed checkpoint ----------------------------------

STEPS = [0, 2, 4, 6, 8]
BEST = [2, 6]  # the best checkpoints: 2 by BLEU (the earliest of its ties), 6 by token accuracy


def probe_job(root: Path, key: str = "k", at_best=probes.AT_BEST, out: str = "probe.parquet"):
    """A probe job over checkpoints STEPS of a tiny translation model: its work folder root/work,
    its output root/``out``; returns the performance frame. Also run killed, in a subprocess.
    Checkpoint 6 predicts </s> everywhere: the best token accuracy, so the best checkpoints by
    the two metrics (BEST) differ and neither is the first."""
    import conftest
    from attnlearn.data.synthetic import synthetic_mt
    from attnlearn.models.tasks import make_task
    from attnlearn.data.tokenize import load_sentencepiece, tokenize_translation

    data = synthetic_mt(n_sentences=60, seed=0, **conftest.MT_OPTIONS)
    sp, tables = tokenize_translation({"train": data[:40].reset_index(drop=True),
                                       "valid": data[40:].reset_index(drop=True)}, 120, 0)
    task = make_task("translation", load_sentencepiece(sp).get_piece_size())
    model = build_model(task, run_params("translation"))
    checkpoints = []
    for step in STEPS:  # a different model at each step
        path = root / f"step{step}.pt"
        if not path.exists():
            g = torch.Generator().manual_seed(step)
            state = {k: v + 0.1 * step * torch.randn(v.shape, generator=g) for k, v in model.state_dict().items()}
            state["out.bias"][2] += 50.0 * (step == 6)  # </s>: every sentence's last target token
            torch.save(state, path)
        checkpoints.append((step, path))
    bleu = {"beam": 2, "max_len": 6, "detok": lambda ids: " ".join(map(str, ids))}
    return probe_checkpoints(task, model, tables["valid"], checkpoints, ["alpha", "xi", "grad", "norm"], 8,
                             torch.device("cpu"), root / out, progress=False, bleu=bleu,
                             work_dir=root / "work", key=key, at_best=at_best)


KILLED = textwrap.dedent("""
    import sys, pathlib
    sys.path.insert(0, {tests!r})
    from test_probes import probe_job
    probe_job(pathlib.Path(sys.argv[1]))
""")


@pytest.fixture
def probed(monkeypatch):
    """The steps that probe_checkpoints probes in this process (a best checkpoint's at_best
    measures as (step, "best"))."""
    steps = []
    one = probes._probe_one

    def spy(probe, table, batches, measures, step, *args):
        steps.append((step, "best") if set(measures) <= set(probes.AT_BEST) else step)
        return one(probe, table, batches, measures, step, *args)

    monkeypatch.setattr(probes, "_probe_one", spy)
    return steps


def kept(work: Path) -> list[str]:
    return sorted(p.name for p in work.iterdir())


def kept_names(every, best=()) -> list[str]:
    return sorted([f"step{s:08d}.parquet" for s in every] + [f"step{s:08d}.best.parquet" for s in best])


def test_g_and_norm_are_computed_at_the_best_checkpoints_alone_with_the_values_of_every_checkpoints(tmp_path,
                                                                                                     probed):
    """probe.at_best: g and the norm-based weights have values at the best checkpoint by each
    metric (token accuracy, BLEU) and are null elsewhere; there they are the values of a probe
    that computes every measure at every checkpoint, as is every other column everywhere."""
    perf = probe_job(tmp_path)
    assert best_steps(perf) == BEST
    assert best_step(perf) == 6 and best_step(perf, "bleu") == 2
    assert probed == [*STEPS, *[(s, "best") for s in BEST]]
    table = pq.read_table(tmp_path / "probe.parquet")
    assert {m: computed_steps(table, m) for m in ("alpha", "xi", "grad", "norm")} == {
        "alpha": set(STEPS), "xi": set(STEPS), "grad": set(BEST), "norm": set(BEST)}
    probed.clear()
    everywhere = probe_job(tmp_path, key="every", at_best=(), out="every.parquet")
    assert probed == STEPS
    full = pq.read_table(tmp_path / "every.parquet")
    pd.testing.assert_frame_equal(perf, everywhere)
    at = pa.compute.is_in(full["step"], pa.array(BEST, pa.int32()))
    for m in ("grad", "norm"):
        assert table[m].filter(at).equals(full[m].filter(at)), m  # the same float32s
        assert table[m].filter(pa.compute.invert(at)).null_count == (~at.to_numpy(zero_copy_only=False)).sum()
    assert table.drop_columns(["grad", "norm"]).equals(full.drop_columns(["grad", "norm"]))
    assert table.schema == full.schema
    with pytest.raises(ValueError, match="measure 'grad' has no values at step 4"):
        load_measure(table, "grad", 4)


def test_a_probe_of_measures_all_at_best_is_refused(mt_data, tmp_path):
    task, tables = mt_data
    model = build_model(task, run_params("translation"))
    torch.save(model.state_dict(), tmp_path / "step.pt")
    with pytest.raises(ValueError, match=r"probe measures \['grad'\] are all in probe.at_best"):
        probe_checkpoints(task, model, tables["valid"].iloc[:4], [(0, tmp_path / "step.pt")], ["grad"], 4,
                          torch.device("cpu"), tmp_path / "probe.parquet", progress=False)


def _killed(root: Path, whole: Path, fault_at: str) -> subprocess.CompletedProcess:
    """The probe job of ``root`` (the checkpoints of ``whole``) SIGKILLed at fault point ``fault_at``."""
    root.mkdir()
    for step in STEPS:
        (root / f"step{step}.pt").write_bytes((whole / f"step{step}.pt").read_bytes())
    env = {**os.environ, "ATTNLEARN_FAULT": fault_at}
    killed = subprocess.run([sys.executable, "-c", KILLED.format(tests=str(TESTS)), str(root)], env=env,
                            capture_output=True, text=True)
    assert killed.returncode == -9, killed.stderr
    return killed


@pytest.mark.process
def test_probe_killed_midway_probes_only_the_rest_to_the_same_table(tmp_path, probed):
    """Killed once checkpoint 4 is kept (before any best checkpoint's g), or once the first best
    checkpoint's g is (every checkpoint probed): the rerun probes only what is left, to the bytes
    of an uninterrupted job."""
    whole = tmp_path / "whole"
    whole.mkdir()
    perf_whole = probe_job(whole)
    assert probed == [*STEPS, *[(s, "best") for s in BEST]]
    assert kept(whole / "work") == kept_names(STEPS, BEST)  # kept until the job's outputs are in place
    for fault_at, every, best, rest in (("probe@4", [0, 2, 4], [], [6, 8, (2, "best"), (6, "best")]),
                                        (f"probe_best@{BEST[0]}", STEPS, BEST[:1], [(6, "best")])):
        cut = tmp_path / fault_at
        _killed(cut, whole, fault_at)
        assert kept(cut / "work") == kept_names(every, best)
        (cut / "work" / ".step00000006.parquet.tmp-0badf00d.parquet").write_bytes(b"PAR1")  # a write cut short
        probed.clear()
        perf = probe_job(cut)
        assert probed == rest, fault_at
        assert pq.read_table(cut / "probe.parquet").equals(pq.read_table(whole / "probe.parquet"))
        assert (cut / "probe.parquet").read_bytes() == (whole / "probe.parquet").read_bytes(), fault_at
        assert pq.ParquetFile(cut / "probe.parquet").num_row_groups == len(STEPS)
        pd.testing.assert_frame_equal(perf, perf_whole)
        assert kept(cut / "work") == kept_names(STEPS, BEST)


def test_probe_of_other_settings_or_inputs_reuses_no_kept_checkpoint(tmp_path, probed):
    probe_job(tmp_path, key="before")
    probed.clear()
    probe_job(tmp_path, key="after")  # e.g. the run retrained, or probe settings changed
    assert probed == [*STEPS, *[(s, "best") for s in BEST]]


@pytest.mark.workflow
def test_probe_job_killed_under_snakemake_resumes_with_rerun_incomplete(tmp_path):
    """Snakemake deletes a failed job's outputs, not the work folder: --rerun-incomplete (and a
    plain rerun) probes only the checkpoints left, to the table of an uninterrupted job."""
    from test_faults import FAULTS
    from test_workflow import SNAKEMAKE, snakemake

    probe = "results/probes/tiny_mt/standard-s1.parquet"
    partial = tmp_path / "results/probes/tiny_mt/standard-s1.partial"
    snakemake("--cores", "2", probe, "--configfile", FAULTS, cwd=tmp_path)
    whole = (tmp_path / probe).read_bytes()
    assert not partial.exists()  # removed once the outputs are in place
    env = {**os.environ, "ATTNLEARN_FAULT": "probe@40"}  # checkpoints every 20 steps
    killed = subprocess.run([*SNAKEMAKE, "-d", str(tmp_path), probe, "--forcerun", "probe", "--configfile",
                             str(FAULTS)], capture_output=True, text=True, env=env, timeout=600)
    assert killed.returncode != 0 and "Error in rule probe" in killed.stdout + killed.stderr
    assert not (tmp_path / probe).exists()
    assert sorted(p.name for p in partial.iterdir()) == [f"step{s:08d}.parquet" for s in (0, 20, 40)]
    snakemake(probe, "--rerun-incomplete", "--configfile", FAULTS, cwd=tmp_path)
    log = (tmp_path / "results/logs/probe/tiny_mt/standard-s1.log").read_text()
    assert "3 of " in log and "checkpoints probed by an earlier attempt" in log
    assert (tmp_path / probe).read_bytes() == whole and not partial.exists()


def test_at_best_is_the_standard_runs_setting_and_defaults_to_g_and_norm():
    """probe.at_best defaults to probing/measures.py's AT_BEST; only a standard run's probe
    settings carry it (the other runs probe none of its measures: changing it reruns no other
    probe); a measure it cannot hold is refused, naming the key."""
    import yaml
    from attnlearn.config import ConfigError, load_config, run_probe_settings

    schema, tiny = TESTS.parent / "config" / "schema.yaml", TESTS / "configs" / "tiny.yaml"
    config = load_config(yaml.safe_load(tiny.read_text()), schema)
    for dataset in config["datasets"].values():
        probe = dataset["probe"]
        assert tuple(probe["at_best"]) == probes.AT_BEST
        assert run_probe_settings(probe, "standard")["at_best"] == probe["at_best"]
        for variant in ("uniform", "frozen", "tanhmax", "additive", "proxy"):
            assert "at_best" not in run_probe_settings(probe, variant), variant
    bad = yaml.safe_load(tiny.read_text())
    bad["datasets"]["tiny_mt"]["probe"]["at_best"] = ["alpha"]
    with pytest.raises(ConfigError, match=r"datasets\.tiny_mt\.probe\.at_best\.0: 'alpha' is not one of \['grad', "
                                          r"'norm'\]"):
        load_config(bad, schema)


def test_bleu_scores_against_the_examples_target_text_or_their_ids_as_set():
    """probe.bleu_references: 'text' scores against the examples' own target text, row for row
    in probing order; 'ids' against the target pieces detokenised. A text list that is not the
    probed examples' is refused, saying both counts, as is 'text' without the texts."""
    table = pd.DataFrame({"tgt_ids": [[1, 7, 2], [1, 8, 9, 2], [1, 5, 2]]})
    detok = lambda ids: " ".join(map(str, ids))  # noqa: E731
    settings = {"bleu": True, "beam": 5, "max_decode_len": 100, "beam_rank": "sum"}
    text = probes.bleu_settings({**settings, "bleu_references": "text"}, detok, ["A dog.", "Two cats!", "Rain."])
    ids = probes.bleu_settings({**settings, "bleu_references": "ids"}, detok, ["ignored"] * 3)
    assert probes.bleu_references(table, [2, 0, 1], text) == ["Rain.", "A dog.", "Two cats!"]
    assert probes.bleu_references(table, [2, 0, 1], ids) == ["5", "7", "8 9"]
    assert (text["rank"], text["beam"], text["max_len"]) == ("sum", 5, 100)
    with pytest.raises(ValueError, match="2 target texts for 3 probed examples"):
        probes.bleu_references(table, [0, 1, 2], {**text, "texts": ["A dog.", "Two cats!"]})
    with pytest.raises(ValueError, match="bleu_references: text needs"):
        probes.bleu_settings({**settings, "bleu_references": "text"}, detok)


def test_the_decoding_settings_are_in_a_probes_settings_only_where_it_scores_bleu():
    """Without probe.bleu, beam, max_decode_len, beam_rank and bleu_references leave every
    run's probe settings (changing them reruns no probe that does not decode); with it, they
    stay, and the defaults are the authors' code's (summed score, target text)."""
    import yaml
    from attnlearn.config import BLEU_KEYS, load_config, run_probe_settings

    schema, tiny = TESTS.parent / "config" / "schema.yaml", TESTS / "configs" / "tiny.yaml"
    probe = load_config(yaml.safe_load(tiny.read_text()), schema)["datasets"]["tiny_mt"]["probe"]
    assert probe["bleu"] and (probe["beam_rank"], probe["bleu_references"]) == ("sum", "text")
    for variant in ("standard", "uniform", "frozen", "additive"):
        assert set(BLEU_KEYS) <= set(run_probe_settings(probe, variant)), variant
        assert not set(BLEU_KEYS) & set(run_probe_settings({**probe, "bleu": False}, variant)), variant
