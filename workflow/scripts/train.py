"""Rule train: one run (variant x seed), or rule train_stack_*: a stack of runs (train.stack);
resumes from its last state when rerun. A run with ``init`` starts from the source run's
checkpoint at init.step (its checkpoint folder is the input ``init``)."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from attnlearn.runtime.jobs import run
from attnlearn.models.tasks import make_task
from attnlearn.training.train import train_run, train_stack
from attnlearn.runtime.io import file_sha256
from attnlearn.training.workdir import ckpt_name, inputs_digest


def start(inputs: dict, spec: dict) -> dict:
    """The source's checkpoint at init.step, read; the input named by that file, so that the
    resume state's digest follows that checkpoint and not the folder around it."""
    path = Path(inputs["init"]) / ckpt_name(spec["step"])
    if not path.is_file():
        saved = sorted(p.name for p in Path(inputs["init"]).glob("step*.pt"))
        raise SystemExit(f"init.step: {spec['step']} is not a checkpoint of {spec['run']} ({path} is missing; "
                         f"it saved {saved})")
    inputs["init"] = str(path)
    return {**spec, "state": torch.load(path, map_location="cpu", weights_only=True), "sha256": file_sha256(path)}


def main(job):
    p = job.params
    inputs = dict(job.input.items()) if hasattr(job.input, "items") else vars(job.input)
    stack = isinstance(p.run, list)  # a stack (train.stack): one entry per member
    first = p.run[0] if stack else p.run
    task = make_task(first["task"], json.load(open(inputs["tokenizer"]))["vocab_size"])
    embeddings = np.load(inputs["vectors"]) if "vectors" in inputs else None
    init = start(inputs, first["init"]) if "init" in inputs else None
    train = train_stack if stack else train_run
    train(task, pd.read_parquet(inputs["train"]), p.run, job.output.checkpoints, job.output.log, p.work_dir,
          embeddings=embeddings, inputs=inputs_digest(inputs), init=init)


run(main, globals().get("snakemake"))
