"""Rule proxy_probe_train: one proxy seed's trained proxy (xi^px) and the count table probed on
training examples."""

import json

import pandas as pd
import pyarrow.parquet as pq
import torch

from attnlearn.runtime.device import resolve_device
from attnlearn.runtime.io import atomic_path
from attnlearn.runtime.jobs import run
from attnlearn.models import BagOfWords
from attnlearn.data.probe_table import probe_examples
from attnlearn.probing.proxy import probe_proxy, translation_table
from attnlearn.training.proxy import best_epoch
from attnlearn.models.tasks import make_task


def main(job):
    p = job.params
    task = make_task(p.task, json.load(open(job.input.tokenizer))["vocab_size"])
    device = resolve_device(p.device)
    state = torch.load(job.input.model, map_location=device, weights_only=True)
    model = BagOfWords(task.vocab_size, p.proxy["embed"], state["out.weight"].shape[0])
    model.load_state_dict(state)
    model.to(device)
    log = pd.read_parquet(job.input.log)
    examples = probe_examples(pd.read_parquet(job.input.examples), p.probe["max_examples"])
    table = probe_proxy(task, model, translation_table(pd.read_parquet(job.input.counts), task), examples,
                        p.probe["batch_size"], best_epoch(log))
    with atomic_path(job.output.probe, ".parquet") as tmp:
        pq.write_table(table, tmp)


run(main, globals().get("snakemake"))
