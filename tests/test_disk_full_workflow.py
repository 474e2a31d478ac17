"""A full disk inside a real Snakemake job (docs/faults.md's ENOSPC row).

A download, a checkpoint, a probe table and a table write each find the disk full in a run of
one small dataset (tests/configs/tiny.yaml's tiny_cls, its data downloaded from a file:// URL,
`only=[tiny_dl]`). Each time the job fails naming the file and "no space", nothing of it is left
at its output path (no partial file, no hidden temporary one), and after space is freed the same
command, with no `--unlock`, goes on; the run that completes holds the same bytes as an
uninterrupted run's in another folder: downloaded file, data, checkpoints, probe tables, tables.

Two ways to fill the disk:

- a test-only fault point, which always runs: ATTNLEARN_FAULT=full:PATTERN makes io.atomic_path's
  write of that one file raise OSError(ENOSPC) just before its rename, so the job's own clean-up
  and error path run as for a real full disk (attnlearn.runtime.faults.disk_full);
- small tmpfs file systems mounted under the outputs (root only; skipped with the reason where a
  mount is refused), so the writers themselves (urllib's copy, torch.save, pyarrow) meet the
  kernel's ENOSPC; "space freed" is a remount with a larger size.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from attnlearn.runtime.faults import DISK_FULL, FAULT_ENV
from attnlearn.runtime.io import TEMP_MARK

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "tests" / "configs" / "tiny.yaml"
TARGET = "results/tables/table2.parquet"  # its ancestors: download ... train, probe, tables
DS = "tiny_dl"
RUN = f"results/runs/{DS}/standard-s1"
DOWNLOAD = f"data/downloads/{DS}/reviews.csv"
CHECKPOINT = f"{RUN}/work/checkpoints/step00000010.pt"  # checkpoint 5 and its resume state exist by then
PROBE = f"results/probes/{DS}/standard-s1.parquet"
TABLE = "results/tables/table2.parquet"
PAGE = 4096  # tmpfs gives space in pages
# an empty file in each mounted folder: Snakemake removes the empty folder of an output it did not
# make when it exits, and a mount point cannot be removed (EBUSY, a traceback of Snakemake's own)
KEEP = ".mount_point"
TIMEOUT = 600


def overlay(site: Path) -> dict:
    """A second config file over tiny.yaml: tiny_cls's settings, its data downloaded, two standard
    runs and one uniform (Table 2's least), and this dataset alone."""
    subprocess.run([sys.executable, str(REPO / "tests/make_own_data.py"), str(site)], check=True)
    data = site / "reviews.csv"
    cls = yaml.safe_load(TINY.read_text())["datasets"]["tiny_cls"]
    dataset = {**cls,
               "source": {"kind": "own_classification",
                          "files": {"data": {"url": data.as_uri(),
                                             "sha256": hashlib.sha256(data.read_bytes()).hexdigest()}},
                          "options": {"text": "review", "label": "sentiment", "labels": ["neg", "pos"],
                                      "valid": 0.2}},
               "runs": {"standard": [1, 2], "uniform": [1], "frozen": [], "tanhmax": []},
               "proxy": {k: v for k, v in cls["proxy"].items() if k != "seeds"}}  # one proxy
    return {"only": [DS], "tables": {"train_split": False}, "datasets": {DS: dataset}}


def snakemake(cwd: Path, config: Path, full: str | None = None) -> subprocess.CompletedProcess:
    """The same command each time; ``full``: the file (relative to ``cwd``) whose write finds the
    disk full."""
    env = {k: v for k, v in os.environ.items() if k != FAULT_ENV}
    if full:
        env[FAULT_ENV] = f"{DISK_FULL}{cwd / full}"
    cmd = [sys.executable, "-m", "snakemake", TARGET, "-s", str(REPO / "Snakefile"), "-d", str(cwd),
           "--cores", "1", "--configfile", str(TINY), str(config)]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def console(proc) -> str:
    return proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    """The config, and the folder of a run that nothing stopped."""
    base = tmp_path_factory.mktemp("disk_full")
    config = base / "download.yaml"
    config.write_text(yaml.safe_dump(overlay(base / "site")))
    ref = base / "ref"
    proc = snakemake(ref, config)
    assert proc.returncode == 0, console(proc)[-4000:]
    return config, ref


def temporaries(root: Path) -> list[Path]:
    """Hidden temporary files of io.atomic_path's writes (Snakemake's own folder aside)."""
    return [p for p in root.rglob(f".*{TEMP_MARK}*") if ".snakemake" not in p.relative_to(root).parts]


def outputs(root: Path) -> dict[str, str]:
    """sha256 of every file the run leaves, by path, less what no two runs share: job logs,
    benchmarks, Snakemake's records, a training's work folder (its lock names the process; it is
    no output) and the training logs' wall times (compared apart, in ``train_logs``)."""
    skip = ("results/logs/", "results/benchmarks/", ".snakemake/")
    files = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if (p.is_file() and not rel.startswith(skip) and "/work/" not in rel and not rel.endswith("train_log.parquet")
                and p.name != KEEP):
            files[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return files


def train_logs(root: Path) -> dict[str, pd.DataFrame]:
    return {p.relative_to(root).as_posix(): pd.read_parquet(p).drop(columns="elapsed_s")
            for p in sorted(root.glob("results/runs/*/*/train_log.parquet"))}


def assert_same_as(root: Path, ref: Path) -> None:
    got, want = outputs(root), outputs(ref)
    assert sorted(got) == sorted(want)
    assert any(f.endswith(".pt") for f in want) and PROBE in want and TABLE in want and DOWNLOAD in want
    assert {f for f in want if got[f] != want[f]} == set()
    logs, ref_logs = train_logs(root), train_logs(ref)
    assert sorted(logs) == sorted(ref_logs) and len(logs) == 3
    for name, log in logs.items():
        pd.testing.assert_frame_equal(log, ref_logs[name], obj=name)


def assert_failed_on(proc, root: Path, written: str, outputs_gone: list[str]) -> None:
    """The job failed naming ``written`` and the cause; neither its file, nor the job's outputs,
    nor any temporary file is left."""
    text = console(proc)
    assert proc.returncode != 0, text[-4000:]
    # the console prints the project's own error alone, its class and traceback in the job log
    assert f"[Errno 28] no space left on the device to write {written} (" in text, text[-4000:]
    assert "nothing partial was left in its place: free space and rerun" in text
    for path in [written, *outputs_gone]:
        assert not (root / path).exists(), path
    assert temporaries(root) == []


@pytest.mark.workflow
def test_a_write_that_finds_the_disk_full_fails_its_job_and_the_rerun_is_identical(uninterrupted, tmp_path):
    """The fault point, one write at a time, in the order the run reaches them; each failed run
    leaves the next write's job to the next run of the same command."""
    config, ref = uninterrupted
    root = tmp_path / "run"
    faults = [  # the file that finds the disk full, and outputs of its job that must be gone
        (DOWNLOAD, []),
        (CHECKPOINT, [f"{RUN}/checkpoints", f"{RUN}/train_log.parquet"]),
        (PROBE, [f"results/probes/{DS}/standard-s1.perf.parquet"]),
        (TABLE, ["results/tables/agreement.parquet", "results/tables/tables.md"]),
    ]
    for written, gone in faults:
        assert_failed_on(snakemake(root, config, full=written), root, written, gone)
    assert (root / f"{RUN}/work/checkpoints/step00000005.pt").exists()  # kept: training resumes there
    proc = snakemake(root, config)  # the fault removed: as when space is freed
    assert proc.returncode == 0, console(proc)[-4000:]
    train_log = (root / f"results/logs/train/{DS}/standard-s1.log").read_text()
    assert "resumed from step 5 of 20" in train_log  # not started over
    assert temporaries(root) == []
    assert_same_as(root, ref)


def mount_tmpfs(folder: Path, size: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)], check=True,
                   capture_output=True, text=True)
    (folder / KEEP).touch()  # no space taken: an empty file uses no page


def resize(folder: Path, size: int) -> None:
    subprocess.run(["mount", "-o", f"remount,size={size}", str(folder)], check=True, capture_output=True, text=True)


def pages(nbytes: int) -> int:
    return PAGE * math.ceil(nbytes / PAGE)


@pytest.fixture
def small_disks(tmp_path):
    """Mounts tmpfs file systems on request; unmounts them all at the end. Skips where a mount is refused."""
    mounted = []
    try:
        mount_tmpfs(tmp_path / "can_mount", PAGE)
        mounted.append(tmp_path / "can_mount")
    except (OSError, subprocess.CalledProcessError) as e:
        reason = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else e
        pytest.skip(f"cannot mount a tmpfs here ({reason}): it needs root (CAP_SYS_ADMIN); "
                    "the fault-point test fills the disk at the same writes")

    def mount(folder: Path, size: int) -> Path:
        mount_tmpfs(folder, size)
        mounted.append(folder)
        return folder

    yield mount
    for folder in reversed(mounted):
        if subprocess.run(["umount", str(folder)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)  # busy: detach it


@pytest.mark.workflow
def test_a_small_file_system_fills_up_and_the_rerun_after_freeing_space_is_identical(uninterrupted, tmp_path,
                                                                                     small_disks):
    """Real ENOSPC from the kernel: the download's folder smaller than the file; the run's folder
    room for its lock and first checkpoint only; the tables' folder half of what they need."""
    config, ref = uninterrupted
    root = tmp_path / "run"
    step0 = (ref / f"{RUN}/checkpoints/step00000000.pt").stat().st_size
    tables = sum(p.stat().st_size for p in (ref / "results/tables").iterdir())
    assert (ref / DOWNLOAD).stat().st_size > PAGE
    disks = [  # folder, its size, the file expected to find it full, outputs of the job that must be gone
        (f"data/downloads/{DS}", PAGE, DOWNLOAD, []),
        (RUN, PAGE + pages(step0), f"{RUN}/work/checkpoints/step00000005.pt",
         [f"{RUN}/checkpoints", f"{RUN}/train_log.parquet"]),
        ("results/tables", tables // 2, None, ["results/tables/table2.parquet", "results/tables/tables.md"]),
    ]
    for folder, size, _, _ in disks:
        small_disks(root / folder, size)
    for folder, _, written, gone in disks:
        proc = snakemake(root, config)
        if written is None:  # which table finds the disk full depends on their sizes: the one named
            named = re.findall(r"\[Errno 28\] no space left on the device to write (\S+) \(",
                               console(proc))
            assert named and named[0].startswith("results/tables/"), console(proc)[-4000:]
            written = named[0]
        assert_failed_on(proc, root, written, gone)
        resize(root / folder, 64 << 20)  # space freed
    proc = snakemake(root, config)
    assert proc.returncode == 0, console(proc)[-4000:]
    assert temporaries(root) == []
    assert_same_as(root, ref)
