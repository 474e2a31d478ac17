"""Every summary names the config it was made for, and one of another config never looks current.

The summaries (results/tables, results/figures, results/report) are one set per directory: a
run of another config rewrites those it makes and leaves the rest. A run that failed, or a
config that makes fewer summaries, left the first config's files beside the second's with
nothing to tell them apart (a config that failed in prepare_data had once already
rewritten analyses.md, norms.parquet and optimal_attention.md; tables.md was the first's).

So when a run ends (done, failed, interrupted, or nothing to do) having made a summary for its
config (made now, or up to date), ``reconcile`` goes over the summaries in the directory:

- one that this run's DAG has and that is up to date for the run's config (made now, or not
  needing to run) is stamped as made for that config: its file and settings hash;
- one stamped with another config's settings, or with none, is marked as not current: the
  last run here was of another config and stopped before remaking it, or does not make it;
- one stamped with this config's settings that the run did not bring up to date is left as it
  is (it is this config's, from earlier code or inputs).

A run that made no summary leaves every stamp as it was: the summaries there are then all of
the configs that made them, as their stamps say. A 3-second pricing run (`snakemake -f
gpu_hours`), a preflight, or a run whose first jobs failed had marked every summary NOT CURRENT.

Markdown and HTML show the stamp as their first line; Parquet tables keep it in their file
metadata (``made_for``), PNG figures in a text chunk (``made_for``). A stamp rewrites the file in
place and keeps its modification time, so Snakemake sees nothing new and reruns nothing.
The settings hash is the SHA-256 of the resolved config (every dataset merged over its task's
defaults, key order canonical): two files with the same settings are the same config.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import struct
import sys
import time
import zlib
from pathlib import Path

SUMMARY_DIRS = ("results/tables", "results/figures", "results/report")
KEY = "made_for"
SHOWN = 12  # hex digits of the hash a reader sees; the metadata keeps all 64


def config_stamp(config: dict, files: list[str]) -> dict:
    """The stamp of a run's config: its file(s) as named on the command line (relative to the
    working directory where inside it) and the SHA-256 of its resolved settings."""
    text = json.dumps(config, sort_keys=True, default=str, separators=(",", ":"))
    return {"config": ", ".join(_shown_path(f) for f in files), "sha256": hashlib.sha256(text.encode()).hexdigest()}


def _shown_path(path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path))
    return path if rel.startswith("..") else rel


def _words(stamp: dict) -> str:
    sha = stamp.get("sha256")
    return f"config `{stamp['config']}` (settings sha256 {sha[:SHOWN]})" if sha else f"{stamp['config']}"


def headline(stamp: dict) -> str:
    """The words at a summary's top: what it was made for, or why it is not current."""
    stale = stamp.get("not_current")
    if not stale:
        return f"Made for {_words(stamp)}."
    return (f"NOT CURRENT: made for {_words(stamp)}. The last run in this directory, of "
            f"{_words(stale['run'])} at {stale['at']}, {stale['why']}; "
            f"`snakemake --cores 2 --configfile {stamp['config'].split(', ')[0]}` makes it current again.")


# ---- the stamp in each kind of file -------------------------------------------------------

_MD = re.compile(r"\A<!-- made_for: (?P<json>.*?) -->\n[^\n]*\n\n", re.S)
_HTML = re.compile(r"<!-- made_for: (?P<json>.*?) --><p class=\"made-for\"[^>]*>.*?</p>", re.S)
_BODY = re.compile(r"<body[^>]*>")


def _md_read(path: Path):
    m = _MD.match(path.read_text(encoding="utf-8"))
    return json.loads(m["json"]) if m else None


def _md_write(path: Path, stamp: dict):
    text = _MD.sub("", path.read_text(encoding="utf-8"), count=1)
    top = headline(stamp)
    path.write_text(f"<!-- made_for: {json.dumps(stamp)} -->\n> {'**' + top + '**' if stamp.get('not_current') else top}"
                    f"\n\n{text}", encoding="utf-8")


def _html_read(path: Path):
    m = _HTML.search(path.read_text(encoding="utf-8"))
    return json.loads(m["json"]) if m else None


def _html_write(path: Path, stamp: dict):
    import html

    text = _HTML.sub("", path.read_text(encoding="utf-8"), count=1)
    style = ("background:#fdd;border:2px solid #c00;padding:6px" if stamp.get("not_current")
             else "color:#555;font-size:small")
    tag = (f"<!-- made_for: {json.dumps(stamp).replace('--', '- -')} --><p class=\"made-for\" style=\"{style}\">"
           f"{html.escape(headline(stamp))}</p>")
    body = _BODY.search(text)
    at = body.end() if body else 0
    path.write_text(text[:at] + tag + text[at:], encoding="utf-8")


def _parquet_read(path: Path):
    import pyarrow.parquet as pq

    meta = pq.read_schema(path).metadata or {}
    value = meta.get(KEY.encode())
    return json.loads(value) if value else None


def _parquet_write(path: Path, stamp: dict):
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    meta = {**(table.schema.metadata or {}), KEY.encode(): json.dumps(stamp).encode()}
    tmp = path.with_name(path.name + ".stamp.tmp")
    pq.write_table(table.replace_schema_metadata(meta), tmp)
    os.replace(tmp, path)


def _png_chunks(data: bytes):
    """(type, body, start, end) of each chunk after the signature."""
    at = 8
    while at < len(data):
        (length,) = struct.unpack(">I", data[at:at + 4])
        kind = data[at + 4:at + 8]
        yield kind, data[at + 8:at + 8 + length], at, at + 12 + length
        at += 12 + length


def _png_read(path: Path):
    for kind, body, _, _ in _png_chunks(path.read_bytes()):
        if kind == b"tEXt" and body.startswith(KEY.encode() + b"\0"):
            return json.loads(body[len(KEY) + 1:].decode("latin-1"))
    return None


def _png_write(path: Path, stamp: dict):
    data = path.read_bytes()
    kept, end = [data[:8]], None
    for kind, body, start, stop in _png_chunks(data):
        if kind == b"tEXt" and body.startswith(KEY.encode() + b"\0"):
            continue
        if kind == b"IEND":
            end = data[start:stop]
            continue
        kept.append(data[start:stop])
    body = KEY.encode() + b"\0" + json.dumps(stamp, ensure_ascii=True).encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    path.write_bytes(b"".join(kept) + chunk + (end or b""))


KINDS = {".md": (_md_read, _md_write), ".html": (_html_read, _html_write),
         ".parquet": (_parquet_read, _parquet_write), ".png": (_png_read, _png_write)}


def read_stamp(path) -> dict | None:
    """The stamp a summary carries (None: none, or a kind of file that carries none)."""
    path = Path(path)
    kind = KINDS.get(path.suffix)
    try:
        return kind[0](path) if kind else None
    except (OSError, ValueError, UnicodeDecodeError, struct.error):
        return None


def write_stamp(path, stamp: dict) -> None:
    """Put ``stamp`` at the summary's top (replacing any), keeping the file's modification time,
    so that Snakemake sees no newer input and reruns nothing."""
    path = Path(path)
    before = path.stat()
    KINDS[path.suffix][1](path, stamp)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def summaries(root=".") -> list[Path]:
    """The summary files under ``root`` that carry a stamp, relative to it."""
    root = Path(root)
    found = []
    for folder in SUMMARY_DIRS:
        for dirpath, _, names in os.walk(root / folder):
            found += [Path(dirpath, n).relative_to(root) for n in names if Path(n).suffix in KINDS]
    return sorted(found)


# ---- the run's end --------------------------------------------------------------------------

def reconcile(dag, stamp: dict, root=".", now: float | None = None) -> dict[str, list[str]]:
    """Stamp and mark the summaries under ``root`` after a run of the config ``stamp`` whose
    DAG is ``dag`` (Snakemake's: ``jobs``, ``noneedrun_finished(job)``). Returns the files
    stamped current and those marked not current: none where the run made no summary."""
    producer = {}
    for job in dag.jobs:
        for f in job.output:
            producer[os.path.normpath(str(f))] = job
    at = time.strftime("%Y-%m-%d %H:%M", time.localtime(now))
    run = {"config": stamp["config"], "sha256": stamp["sha256"]}
    done = {"current": [], "not_current": []}
    found = summaries(root)
    ours = {rel for rel in found if (job := producer.get(os.path.normpath(str(rel)))) is not None
            and dag.noneedrun_finished(job)}  # made or up to date for this run's config
    if not ours:
        return done
    for rel in found:
        path = Path(root) / rel
        job = producer.get(os.path.normpath(str(rel)))
        old = read_stamp(path)
        if rel in ours:
            if old != stamp:
                write_stamp(path, stamp)
                done["current"].append(str(rel))
            continue
        if old is not None and old.get("sha256") == stamp["sha256"]:
            continue  # this config's own, from earlier: the run did not touch it
        why = "stopped before remaking it" if job is not None else "does not make it"
        made = {k: v for k, v in (old or {"config": "an unknown config (made before summaries were stamped)",
                                           "sha256": None}).items() if k != "not_current"}
        write_stamp(path, {**made, "not_current": {"run": run, "at": at, "why": why}})
        done["not_current"].append(str(rel))
    return done


def register(workflow, stamp: dict):
    """At the end of this Snakemake process's run (its main process, not a dry run: a real run,
    a run with nothing to do, or a report), reconcile the directory's summaries and say which
    were marked. Printing modes (--dag, --summary) build a DAG with jobs left to run and run
    none: only a run that started or had nothing to do reconciles. Returns what the Snakefile's
    onstart: calls, which tells the end that the run started.

    The end is an exit handler, not onsuccess:/onerror:, which Snakemake calls neither for a run
    with nothing to do nor for a report nor when its scheduler raises; and it prints after
    Snakemake's last words of the run (its log file's name)."""
    import atexit

    if not workflow.is_main_process or workflow.dryrun or workflow.touch:
        return lambda: None
    root, started = os.getcwd(), []

    def at_exit():
        dag = workflow.dag
        if dag is None or not (started or not any(True for _ in dag.needrun_jobs(exclude_finished=False))):
            return
        try:
            done = reconcile(dag, stamp, root)
        except Exception as e:  # noqa: BLE001 (a stamp that cannot be written must not hide the run's outcome)
            print(f"WARNING: could not stamp the summaries with their config: {e}", file=sys.stderr)
            return
        stale = done["not_current"]
        if stale:
            named = ", ".join(stale[:3]) + (f" and {len(stale) - 3} more" if len(stale) > 3 else "")
            print(f"Not made for {_words(stamp)}: {named}; each says NOT CURRENT at its top (Markdown, HTML) or in "
                  f"its metadata ({KEY}: Parquet, PNG).", file=sys.stderr)

    atexit.register(at_exit)
    return lambda: started.append(True)
