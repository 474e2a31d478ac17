"""Rule proxy: train the bag-of-words proxy of one proxy seed (params.proxy["seed"]), then
probe it (xi^px), the count table and, for classification, the L2 logistic regression of
Table 11 (xi^lr). The logistic regression does not depend on the proxy seed: only the job of
the first seed fits it (params.logreg); the other seeds write an empty C sweep with the same
columns and a probe without xi_lr, so the fit is not repeated."""

import json

import pandas as pd
import pyarrow.parquet as pq

from attnlearn.runtime.io import atomic_path, save_torch, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.training.logreg import fit_logreg
from attnlearn.data.probe_table import probe_examples
from attnlearn.probing.proxy import probe_proxy, translation_table
from attnlearn.training.proxy import best_epoch, train_proxy
from attnlearn.models.tasks import make_task


def main(job):
    p = job.params
    vocab = json.load(open(job.input.tokenizer))["vocab_size"]
    task = make_task(p.task, vocab)
    train, valid = pd.read_parquet(job.input.train), pd.read_parquet(job.input.valid)
    model, log = train_proxy(task, train, valid, {**p.proxy, "device": p.device})
    save_torch(model.state_dict(), job.output.model)
    write_parquet(log, job.output.log)
    t_table = translation_table(pd.read_parquet(job.input.counts), task)
    coef, sweep = None, pd.DataFrame({"C": pd.Series(dtype="float64"), "valid_accuracy": pd.Series(dtype="float64"),
                                       "chosen": pd.Series(dtype="bool")})
    if p.logreg:  # Table 11's logistic regression: classification, first proxy seed only
        coef, sweep = fit_logreg(train, valid, vocab)
    write_parquet(sweep, job.output.logreg)
    table = probe_proxy(task, model, t_table, probe_examples(valid, p.probe["max_examples"]),
                        p.probe["batch_size"], best_epoch(log), coef)
    with atomic_path(job.output.probe, ".parquet") as tmp:
        pq.write_table(table, tmp)


run(main, globals().get("snakemake"))
