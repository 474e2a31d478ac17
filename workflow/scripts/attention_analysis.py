"""Rules norms, effective_attention, head_roles: one analysis of one standard run of a
translation dataset (docs/analyses.md)."""

import base64
import json

import pandas as pd
import torch

from attnlearn.analyses import rows as A
from attnlearn.models.sites import arch
from attnlearn.agreement.compare import best_step
from attnlearn.runtime.device import resolve_device
from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.data.probe_table import probe_examples
from attnlearn.models.tasks import make_task
from attnlearn.data.tokenize import load_sentencepiece, word_starts
from attnlearn.training.model import build_model
from attnlearn.training.workdir import list_checkpoints


def main(job):
    p = job.params
    s = p.settings
    tokenizer = json.load(open(job.input.tokenizer))
    task = make_task(p.run["task"], tokenizer["vocab_size"])
    device = resolve_device(p.run["device"])
    model = build_model(task, p.run).to(device).eval()
    valid = probe_examples(pd.read_parquet(job.input.valid), min(s["max_examples"], p.max_examples))
    checkpoints = dict(list_checkpoints(job.input.checkpoints))
    star = best_step(pd.read_parquet(job.input.perf))

    def load(step):
        model.load_state_dict(torch.load(checkpoints[step], map_location=device, weights_only=True))
        return {"dataset": job.wildcards.dataset, "arch": arch(model), "run": job.wildcards.run,
                "seed": p.run["seed"], "run_role": p.run_role, "step": step}

    bs = s["batch_size"]
    if p.analysis == "norms":
        meta = load(star)
        write_parquet(A.with_meta(A.norm_rows(task, model, valid, bs, device), **meta), job.output.norms)
        frames = []
        if p.has_gold:
            starts_word = word_starts(load_sentencepiece(base64.b64decode(tokenizer["model_b64"])))
            for step in sorted(checkpoints):
                meta = load(step)
                rows = A.alignment_rows(task, model, valid, s, bs, device, starts_word)
                frames.append(A.with_meta(rows, **meta, best=step == star))
        write_parquet(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(), job.output.alignment)
    elif p.analysis == "effective":
        meta = load(star)
        write_parquet(A.with_meta(A.effective_rows(task, model, valid, s["effective"], bs, device), **meta),
                      job.output.effective)
    elif p.analysis == "head_roles":
        meta = load(star)
        write_parquet(A.with_meta(A.head_role_rows(task, model, valid, s["roles"], bs, device, p.has_gold), **meta),
                      job.output.roles)
    else:
        raise ValueError(f"unknown analysis {p.analysis!r}")


run(main, globals().get("snakemake"))
