"""Rule train: one run (variant x seed), or rule train_stack_*: a stack of runs (train.stack);
resumes from its last state when rerun."""

import json

import numpy as np
import pandas as pd

from attnlearn.runtime.jobs import run
from attnlearn.models.tasks import make_task
from attnlearn.training.train import train_run, train_stack
from attnlearn.training.workdir import inputs_digest


def main(job):
    p = job.params
    inputs = dict(job.input.items()) if hasattr(job.input, "items") else vars(job.input)
    stack = isinstance(p.run, list)  # a stack (train.stack): one entry per member
    first = p.run[0] if stack else p.run
    task = make_task(first["task"], json.load(open(inputs["tokenizer"]))["vocab_size"])
    embeddings = np.load(inputs["vectors"]) if "vectors" in inputs else None
    train = train_stack if stack else train_run
    train(task, pd.read_parquet(inputs["train"]), p.run, job.output.checkpoints, job.output.log, p.work_dir,
          embeddings=embeddings, inputs=inputs_digest(inputs))


run(main, globals().get("snakemake"))
