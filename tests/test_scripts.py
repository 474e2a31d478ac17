"""The rule scripts run by hand, outside Snakemake (`python workflow/scripts/X.py job.json`,
src/attnlearn/runtime/jobs.py), to debug one job; and the diagnostics/ scripts' own computations
(their runs on a finished row are in tests/test_workflow.py)."""

import json
import re
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import script_module

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = REPO / "workflow" / "scripts"


def test_no_script_shadows_a_standard_module():
    """Run by hand, a script's folder comes first on sys.path: a script named like a standard
    module (keyword.py, tokenize.py) is imported in its place and breaks every script."""
    clashes = sorted(p.stem for p in SCRIPTS.glob("*.py") if p.stem in sys.stdlib_module_names)
    assert not clashes


def run_script(name, job, tmp_path):
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(job))
    proc = subprocess.run([sys.executable, str(SCRIPTS / f"{name}.py"), str(path)], cwd=tmp_path,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.process
def test_scripts_run_standalone_from_a_job_file(tmp_path):
    splits = ("train", "valid", "test")
    source = {"kind": "synthetic_mt", "splits": {"train": 40, "valid": 8, "test": 4}, "seed": 0,
              "options": {"src_vocab": 20, "tgt_vocab": 15, "min_len": 3, "max_len": 6, "zipf": 1.0,
                          "p_swap": 0.1, "p_delete": 0.0, "p_insert": 0.0, "n_fillers": 2}}
    run_script("prepare_data", {"input": {}, "output": {s: f"data/{s}.parquet" for s in splits},
                                "params": {"source": source}}, tmp_path)
    run_script("tokenize_splits", {
        "input": {s: f"data/{s}.parquet" for s in splits},
        "output": {"tokenizer": "tok/tokenizer.json", **{s: f"tok/{s}.parquet" for s in splits}},
        "params": {"task": "translation", "tokenizer": {"vocab_size": 80}, "seed": 0},
        "log": ["logs/tokenize.log"]}, tmp_path)
    assert len(pd.read_parquet(tmp_path / "data/train.parquet")) == 40
    assert json.loads((tmp_path / "tok/tokenizer.json").read_text())["kind"] == "sentencepiece"
    assert {"src_ids", "tgt_ids"} <= set(pd.read_parquet(tmp_path / "tok/valid.parquet").columns)
    assert (tmp_path / "logs/tokenize.log").exists()


def _imports_torch(script: str) -> bool:
    """Whether importing a rule script's modules and starting its job loads torch."""
    code = ("import runpy, sys, types\n"
            f"sys.argv = ['{script}']\n"
            "import attnlearn.runtime.jobs as jobs\n"
            # the script's modules and the job runner, with a job that does nothing
            "real = jobs.run\n"
            "jobs.run = lambda main, snakemake=None: real(lambda job: None, types.SimpleNamespace(threads=1, log=[]))\n"
            f"runpy.run_path({str(SCRIPTS / script)!r})\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.strip().endswith("True")


@pytest.mark.process
def test_jobs_without_torch_do_not_import_it():
    """A second of every table, figure and count job went to importing torch, which none uses
    (the default run has about 40 such jobs)."""
    for script in ("tables.py", "agreement.py", "counts.py", "figures.py", "prepare_data.py",
                   "tokenize_splits.py", "report_page.py", "datacard.py"):
        assert not _imports_torch(script), script
    assert _imports_torch("train.py")


@pytest.mark.process
def test_a_torch_job_runs_on_its_thread_budget():
    code = ("import types, torch\nfrom attnlearn.runtime.jobs import run\n"
            "run(lambda job: print(torch.get_num_threads()), types.SimpleNamespace(threads=3, log=[]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "3"


@pytest.mark.process
def test_a_torch_job_computes_in_full_float32_unless_its_run_says_tf32():
    """On an H200 the analyses and the classifier's probe differed from the CPU by ~1e-3; the jobs
    that did not state a precision ran cuDNN's LSTMs in torch's default, TF32 (the inferred
    cause: the failing paths were exactly those). Every job that
    imports torch now runs in full float32; a run that states train.tf32 switches inside, and
    torch's default is back when the job ends."""
    code = ("import types, torch\nfrom attnlearn.runtime.jobs import run\nfrom attnlearn.runtime.device import precision_in_effect, "
            "run_precision\ndef main(job):\n    print(precision_in_effect())\n"
            "    with run_precision({'tf32': True}, 'cpu'):\n        print(precision_in_effect())\n"
            "run(main, types.SimpleNamespace(threads=1, log=[]))\nprint(precision_in_effect())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[0].startswith("full float32") and out[1].startswith("TF32"), out
    assert out[2].startswith("mixed: TF32 in cuDNN"), out  # torch's default outside a job


def diagnostic(name):
    """A script of diagnostics/ imported as a module (it is run by hand, not installed)."""
    return script_module(f"diagnostics/{name}.py")


def test_attended_words_near_baseline_is_the_chance_of_a_random_position():
    """near_baseline(xi, w) is near_agreement's exact chance value: the mean over every real
    position p of whether a top-k position of xi (#{j: xi_j > xi_i} < k, k = ceil(0.05 n),
    ties counted) lies within w of p; here counted one position at a time on rows of random
    lengths, with ties and NaN pads."""
    import math


    from attnlearn.agreement.metric import baseline_rows

    module = diagnostic("attended_words")
    rng = np.random.default_rng(0)
    lengths = rng.integers(1, 60, size=40)
    xi = np.full((len(lengths), lengths.max()), np.nan)
    for row, n in enumerate(lengths):
        xi[row, :n] = rng.integers(0, 6 if row % 2 else 1000, size=n)  # odd rows: many ties
    for near in (0, 1, 2, 5, 100):
        expected = []
        for row, n in enumerate(lengths):
            values = xi[row, :n]
            k = math.ceil(0.05 * n)
            hits = [i for i in range(n) if sum(v > values[i] for v in values) < k]
            expected.append(sum(any(abs(h - p) <= near for h in hits) for p in range(n)) / n)
            # the same as near_agreement averaged over an alpha* peaking at each real position
            peaks = np.full((n, xi.shape[1]), np.nan)
            peaks[:, :n] = np.eye(n)
            assert module.near_agreement(peaks, np.repeat(xi[row:row + 1], n, 0), near).mean() == \
                pytest.approx(expected[-1])
        assert module.near_baseline(xi, near) == pytest.approx(expected)
    assert module.near_baseline(xi, 0) == pytest.approx(baseline_rows(xi))
    assert (module.near_baseline(xi, 100) == 1).all()


def _benchmark_files(root: Path, seconds: dict) -> Path:
    for (rule, dataset, job), s in seconds.items():
        path = root / "benchmarks" / rule / dataset / f"{job}.tsv"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"s\th:m:s\n{s}\t0:00:00\n")
    return root


def test_stage_times_against_compares_only_the_named_rules_jobs_found_in_both_runs(tmp_path, capsys):
    """benchmarks/stage_times.py --against (docs/benchmarks.md, "Default run"): the machine's
    speed between two runs is read off the jobs that did the same work in both, so a job
    of another rule, or one that ran in one run only, must not enter the ratio."""
    stage_times = script_module("benchmarks/stage_times.py")
    old = _benchmark_files(tmp_path / "old", {("train", "d", "standard-s1"): 100.0, ("train", "d", "uniform-s1"): 50.0,
                                              ("train", "d", "additive-s2"): 500.0, ("probe", "d", "standard-s1"): 10.0})
    new = _benchmark_files(tmp_path / "new", {("train", "d", "standard-s1"): 80.0, ("train", "d", "uniform-s1"): 45.0,
                                              ("probe", "d", "standard-s1"): 40.0})
    both, (mean, low, high) = stage_times.same_jobs(stage_times.job_times(new), stage_times.job_times(old), ["train"])
    assert sorted(both["job"]) == ["standard-s1", "uniform-s1"]
    assert mean == pytest.approx((0.8 * 0.9) ** 0.5)
    assert low < 0.8 < 0.9 < high
    stage_times.main([str(new), "--against", str(old), "--rules", "train"])
    assert f"geometric mean {mean:.3f}" in capsys.readouterr().out
    with pytest.raises(ValueError, match="fewer than two jobs"):
        stage_times.same_jobs(stage_times.job_times(new), stage_times.job_times(old), ["probe"])


def test_stage_times_prints_each_jobs_cpu_time_beside_its_wall_time(tmp_path, capsys):
    """Jobs that ran beside others (a row's parts sharing two cores) take longer on the wall than
    they cost: stage_times prints Snakemake's cpu_time too, and '-' where a file has none."""
    stage_times = script_module("benchmarks/stage_times.py")
    results = _benchmark_files(tmp_path, {("probe", "d", "uniform-s1"): 50.0})
    (results / "benchmarks/train/d").mkdir(parents=True)
    (results / "benchmarks/train/d/standard-s1.tsv").write_text("s\th:m:s\tcpu_time\n10750.34\t2:59:10\t8432.68\n")
    jobs = stage_times.job_times(results)
    assert jobs.set_index("job")["cpu_seconds"].fillna(-1).to_dict() == {"uniform-s1": -1, "standard-s1": 8432.68}
    stage_times.main([str(results)])
    out = capsys.readouterr().out
    assert "| train | d | standard-s1 | 10,750 | 8,433 |" in out and "| probe | d | uniform-s1 | 50 | - |" in out


def test_a_probe_with_bleu_logs_what_beam_search_took_and_stage_times_reads_it(mt_data, tmp_path, capsys):
    """The cost of BLEU (docs/benchmarks.md) is read off the probe logs: the probe says how many
    of its seconds went to beam search and BLEU, and stage_times.py sums them per job."""
    import torch

    from attnlearn.probing.probes import probe_checkpoints
    from attnlearn.training.model import build_model
    from conftest import run_params

    task, tables = mt_data
    model = build_model(task, run_params("translation")).eval()
    torch.save(model.state_dict(), tmp_path / "a.pt")
    bleu = {"beam": 2, "max_len": 6, "detok": lambda ids: " ".join(map(str, ids))}
    probe_checkpoints(task, model, tables["valid"].iloc[:8], [(0, tmp_path / "a.pt"), (5, tmp_path / "a.pt")],
                      ["alpha", "xi"], 4, "cpu", tmp_path / "p.parquet", progress=False, bleu=bleu)
    log = capsys.readouterr().err
    stage_times = script_module("benchmarks/stage_times.py")
    line = next(m for m in map(stage_times.BLEU_LINE.search, log.splitlines()) if m)
    assert 0 <= float(line[1]) <= float(line[2]) and "probing 2 checkpoints" in log
    results = _benchmark_files(tmp_path / "results", {("probe", "mt", "standard-s1"): 9.0})
    (results / "logs/probe/mt").mkdir(parents=True)
    (results / "logs/probe/mt/standard-s1.log").write_text(f"noise\n{line[0]} checkpoints\n")
    times = stage_times.bleu_times(results)
    assert times.to_dict("records") == [{"dataset": "mt", "job": "standard-s1", "bleu_s": float(line[1]),
                                         "probe_s": float(line[2])}]
    stage_times.main([str(results)])
    assert "Beam search and BLEU in the probes" in capsys.readouterr().out


def test_a_torch_job_keeps_the_memory_it_frees():
    """runtime/jobs.py sets glibc's mmap threshold, then its trim threshold (the trim threshold
    alone pins the mmap threshold at 128 KiB: 7.2 million page faults in 200 steps of the
    multi-head experiment's 3-head model, against 0.5 million by default and 0.1 million with
    both); a C library without mallopt is left as it is."""
    from attnlearn.runtime.jobs import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, keep_freed_memory

    calls = []

    class Mallopt:
        argtypes = restype = None

        def __call__(self, *args):
            calls.append(args)
            return 1

    assert keep_freed_memory(types.SimpleNamespace(mallopt=Mallopt()))
    assert calls == [(M_MMAP_THRESHOLD, 32 << 20), (M_TRIM_THRESHOLD, 1 << 30)]
    assert not keep_freed_memory(object())


@pytest.mark.process
def test_main_cpu_prints_snakemake_s_own_seconds_apart_from_its_jobs(tmp_path):
    """benchmarks/main_cpu.py (docs/benchmarks.md, "What Snakemake itself costs"): a job that
    spins for a second is the children's CPU, not the main process's."""
    (tmp_path / "Snakefile").write_text('rule spin:\n    output: "done.txt"\n'
                                        '    shell: "python3 -c \'import time; t = time.process_time(); '
                                        'exec(\\"while time.process_time() - t < 1: pass\\")\'; touch {output}"\n')
    done = subprocess.run([sys.executable, str(REPO / "benchmarks/main_cpu.py"), "--cores", "1", "-d", str(tmp_path),
                           "-s", str(tmp_path / "Snakefile"), "--quiet"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    m = re.search(r"main process: user ([\d.]+) s, system ([\d.]+) s; children: user ([\d.]+) s, system ([\d.]+) s; "
                  r"wall ([\d.]+) s", done.stderr)
    assert m and (tmp_path / "done.txt").is_file()
    assert float(m[3]) + float(m[4]) >= 0.9 and float(m[5]) >= 1.0


def test_xi_ties_counts_rows_whose_top_is_shared_and_the_baseline_they_raise(tmp_path, capsys):
    """diagnostics/xi_ties.py (the 20-epoch Multi30k page): a row whose top log p two positions
    share (both 0.0, saturated) raises the random baseline from 1/length to 2/length at k = 1."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    xi_ties = script_module("diagnostics/xi_ties.py")
    nan = np.nan
    rows = np.array([[0.0, 0.0, -3.0, -4.0], [-1.0, -0.5, -2.0, nan], [-2.0, 0.0, -1.0, -5.0]])
    out = xi_ties.ties(rows)
    assert out["top tied"] == pytest.approx(1 / 3) and out["top exactly 0"] == pytest.approx(2 / 3)
    assert out["1 / length"] == pytest.approx((1 / 4 + 1 / 3 + 1 / 4) / 3)
    assert out["baseline"] == pytest.approx((2 / 4 + 1 / 3 + 1 / 4) / 3)
    probes = tmp_path / "results/probes/mt"
    probes.mkdir(parents=True)
    lists = [[v for v in r if not np.isnan(v)] for r in rows]
    pq.write_table(pa.table({"step": [0, 0, 0, 50, 50, 50], "example": [0, 1, 2] * 2, "t": [0] * 6,
                             "xi": lists + [[-1.0, -2.0, -3.0, -4.0], [-1.0, -2.0, -3.0], [-1.0, -2.0, -3.0, -4.0]]}),
                   probes / "uniform-s1.parquet")
    # alpha*'s argmax on a position tied with one other at xi's top: eq. 10 counts a hit, a tie
    # broken at random half of one; a strict top hit counts 1 either way, a miss 0
    alpha = np.array([[0.1, 0.7, 0.1, 0.1], [0.2, 0.6, 0.2, nan], [0.7, 0.1, 0.1, 0.1]])
    assert list(xi_ties.split_agreement(alpha, rows)) == [0.5, 1.0, 0.0]
    assert xi_ties.main([str(tmp_path / "results"), "mt", "--alpha-run", "standard-s1", "--alpha-step", "0"]) == 2
    assert "no probe table" in capsys.readouterr().err  # names the missing run's table
    assert xi_ties.main([str(tmp_path / "results"), "mt"]) == 0
    table = capsys.readouterr().out
    assert table.splitlines()[2:] == ["| 0 | 3 | 33.33 | 66.67 | 27.78 | 36.11 |", "| 50 | 3 | 0.00 | 0.00 | 27.78 | 27.78 |"]
    pq.write_table(pa.table({"step": [0, 0, 0], "example": [0, 1, 2], "t": [0] * 3,
                             "alpha": [[v for v in r if not np.isnan(v)] for r in alpha]}), probes / "standard-s1.parquet")
    assert xi_ties.main([str(tmp_path / "results"), "mt", "--alpha-run", "standard-s1", "--alpha-step", "0"]) == 0
    first = capsys.readouterr().out.splitlines()[2]  # A counted: 2 of 3; split: 1.5 of 3; k / n at k = 1;
    assert first.endswith(f"| 66.67 | 50.00 | {100 * (1 / 4 + 1 / 3 + 1 / 4) / 3:.2f} | 66.67 |"), first  # alpha: no ties
    # a measure tied at its own top (the proxy's xi^px): eq. 10 takes the first tied position, a
    # draw among them hits as often as they do on average; b's ties still count a hit
    px = np.array([[0.0, 0.0, -3.0, -4.0], [-1.0, -1.0, -1.0, nan], [0.0, -1.0, -1.0, -1.0]])
    assert list(xi_ties.top_split_agreement(px, rows)) == [1.0, pytest.approx(1 / 3), 0.0]
