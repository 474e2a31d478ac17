"""Plumbing for the thin rule scripts in workflow/scripts.

Each script defines ``main(job)`` and ends with ``run(main, globals().get("snakemake"))``.
Under Snakemake, ``job`` is the ``snakemake`` object; outside it, run
``python workflow/scripts/NAME.py job.json`` with a JSON file holding
``input``, ``output``, ``params`` (and optionally ``log``, ``threads``,
``wildcards``) to debug one job by hand.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import sys
import traceback
from types import SimpleNamespace


class Files(list):
    """Input or output files as Snakemake hands them to a script (its Namedlist): by position,
    by name (``job.input.train``, ``job.input["train"]``), ``keys()`` and ``items()``. From
    JSON: a list (positional files) or an object (named files)."""

    def __init__(self, files):
        self._names = list(files) if isinstance(files, dict) else []
        super().__init__(files.values() if isinstance(files, dict) else files)

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._names:
            raise AttributeError(name)
        return self[name]

    def __getitem__(self, key):
        return super().__getitem__(self._names.index(key) if isinstance(key, str) else key)

    def keys(self):
        return list(self._names)

    def items(self):
        return [(name, self[name]) for name in self._names]


def _job_from_cli(argv):
    if len(argv) != 2:
        sys.exit(f"usage: {argv[0]} job.json  (keys: input, output, params, log, threads)")
    spec = json.loads(open(argv[1]).read())
    return SimpleNamespace(input=Files(spec["input"]), output=Files(spec["output"]),
                           params=SimpleNamespace(**spec.get("params", {})), log=spec.get("log", []),
                           threads=spec.get("threads", 1), wildcards=SimpleNamespace(**spec.get("wildcards", {})))


@contextlib.contextmanager
def _log_to(path):
    """Send this process's stdout and stderr (C level too: SentencePiece, torch) to the job log."""
    if not path:
        yield
        return
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    with open(path, "a") as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)


def _precision():
    """Full float32 for a job that may compute on a GPU: torch's own default runs cuDNN's LSTMs
    in TF32, the inferred cause of the analyses' ~1e-3 from the CPU's on an H200; a run that
    states ``train.tf32: true`` switches to TF32 inside (device.run_precision). Such a job has
    imported attnlearn.runtime.device (resolve_device); looked up, not imported, so that the jobs that
    never do (tables, figures) do not depend on it for their reruns (codedeps)."""
    device = sys.modules.get("attnlearn.runtime.device")
    return device.float32_precision(False) if device else contextlib.nullcontext()


# glibc's mallopt parameters (malloc.h)
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3


def keep_freed_memory(libc=None) -> bool:
    """Let glibc's malloc keep the memory a torch job frees for its next step. By default it maps
    each block above a threshold (128 KiB, rising with the blocks freed) afresh and returns the
    heap's free top to the kernel: every training step frees its activations and allocates them
    again, megabytes each, and the kernel zero-fills the new pages every time (the multi-head
    experiment: 16 of its 210 CPU-seconds were the kernel's). Here blocks up to 32 MiB (glibc's own
    ceiling for the threshold) come from the heap and a free top of up to 1 GiB stays: the same
    numbers, fewer page faults (docs/benchmarks.md, "Training cost, same bytes"). Both are set, as
    setting either one stops glibc from adjusting the other. False where the C library has no
    mallopt (macOS) or ignores it (musl)."""
    try:
        mallopt = (libc or ctypes.CDLL(None)).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, 32 << 20)) and bool(mallopt(M_TRIM_THRESHOLD, 1 << 30))


def run(main, snakemake=None):
    job = snakemake if snakemake is not None else _job_from_cli(sys.argv)
    # the thread budget binds torch where the script imported it; the jobs that never do
    # (tables, figures, counts, ...) skip its one-second import
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(max(1, int(job.threads)))
        keep_freed_memory()
    log = job.log[0] if len(job.log) else None
    with _log_to(log), _precision():
        try:
            main(job)
        except Exception:
            traceback.print_exc()  # into the job's log, which the console shows under the job's error
            if log is None:
                raise
            failed = True
        except SystemExit as stop:
            if log is None or not isinstance(stop.code, str):
                raise
            # a job that stops with words ("training stopped at step 963 (SIGINT); rerun to resume
            # from there"): a stop, not a fault, so the words alone go into the log, where the
            # console reads them; left to propagate, Python would print them on the terminal,
            # without the job's name, beside the console's line for it
            print(stop.code, file=sys.stderr)
            failed = True
        except BaseException:  # an interrupt or an exit code: its traceback too, and it propagates
            traceback.print_exc()
            raise
        else:
            failed = False
    if failed:  # once in the log is enough: the console prints the log's end and the named error
        raise SystemExit(1)
