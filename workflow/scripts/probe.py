"""Rules probe, probe_train: every checkpoint of one run -> measures table and performance
table, on the first probe.max_examples examples of the split given as input.

Each probed checkpoint is kept in the work folder ``params.work_dir`` (not an output: Snakemake
leaves it when a job fails), so a killed job's rerun probes only the checkpoints left; the
folder goes once the outputs are in place (docs/faults.md)."""

import base64
import json
import shutil
from pathlib import Path

import pandas as pd

from attnlearn.runtime.device import resolve_device, run_precision
from attnlearn.runtime.io import atomic_path, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.data.probe_table import probe_examples
from attnlearn.probing.probes import bleu_settings, probe_checkpoints
from attnlearn.models.tasks import make_task
from attnlearn.data.tokenize import load_sentencepiece
from attnlearn.training.model import build_model
from attnlearn.training.workdir import MANIFEST, fingerprint, inputs_digest, list_checkpoints


def job_key(job) -> str:
    """The job's settings and inputs: kept checkpoints of anything else are not reused. The
    checkpoints count by their manifest, which holds each one's sha256."""
    i = job.input
    files = {"examples": i.examples, "tokenizer": i.tokenizer, "code": i.code,
             "checkpoints": str(Path(i.checkpoints) / MANIFEST)}
    if "texts" in i.keys():  # BLEU's references
        files["texts"] = i.texts
    return fingerprint({"run": job.params.run, "probe": job.params.probe}, inputs_digest(files))


def main(job):
    p = job.params
    tokenizer = json.load(open(job.input.tokenizer))
    task = make_task(p.run["task"], tokenizer["vocab_size"])
    device = resolve_device(p.run["device"])
    model = build_model(task, p.run).to(device)
    examples = probe_examples(pd.read_parquet(job.input.examples), p.probe["max_examples"])
    bleu = None
    if p.run["task"] == "translation" and p.probe.get("bleu"):
        sp = load_sentencepiece(base64.b64decode(tokenizer["model_b64"]))
        # the prepared split holds the target texts, row for row with its tokenized table
        texts = (probe_examples(pd.read_parquet(job.input.texts, columns=["tgt"]), p.probe["max_examples"])["tgt"]
                 .tolist() if "texts" in job.input.keys() else None)
        bleu = bleu_settings(p.probe, sp.decode_ids, texts)
    with run_precision(p.run["train"], device, training=False), atomic_path(job.output.probe, ".parquet") as tmp:
        perf = probe_checkpoints(task, model, examples, list_checkpoints(job.input.checkpoints),
                                 p.probe["measures"], p.probe["batch_size"], device, tmp, p.probe["chunk_elems"],
                                 bleu=bleu, work_dir=p.work_dir, key=job_key(job), optimal=p.probe.get("optimal"),
                                 at_best=p.probe.get("at_best", ()))
    write_parquet(perf, job.output.perf)
    shutil.rmtree(p.work_dir)


run(main, globals().get("snakemake"))
