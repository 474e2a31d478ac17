"""Rule train: one run (variant x seed); resumes from its last state when rerun."""

import json

import numpy as np
import pandas as pd

from attnlearn.runtime.jobs import run
from attnlearn.models.tasks import make_task
from attnlearn.training.train import inputs_digest, train_run


def main(job):
    p = job.params
    inputs = dict(job.input.items()) if hasattr(job.input, "items") else vars(job.input)
    task = make_task(p.run["task"], json.load(open(inputs["tokenizer"]))["vocab_size"])
    embeddings = np.load(inputs["vectors"]) if "vectors" in inputs else None
    train_run(task, pd.read_parquet(inputs["train"]), p.run, job.output.checkpoints, job.output.log, p.work_dir,
              embeddings=embeddings, inputs=inputs_digest(inputs))


run(main, globals().get("snakemake"))
