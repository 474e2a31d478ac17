"""Rule train: one run (variant x seed); resumes from its last state when rerun."""

import json

import numpy as np
import pandas as pd

from attnlearn.jobs import run
from attnlearn.tasks import make_task
from attnlearn.train import train_run


def main(job):
    p = job.params
    task = make_task(p.run["task"], json.load(open(job.input.tokenizer))["vocab_size"])
    embeddings = np.load(job.input.vectors) if "vectors" in job.input.keys() else None
    train_run(task, pd.read_parquet(job.input.train), p.run, job.output.checkpoints, job.output.log, p.work_dir,
              embeddings=embeddings)


run(main, globals().get("snakemake"))
