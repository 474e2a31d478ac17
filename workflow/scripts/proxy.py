"""Rule proxy: train the bag-of-words proxy, then probe it (xi^px) and the count table."""

import json

import pandas as pd
import pyarrow.parquet as pq
import scipy.sparse as sp

from attnlearn import counts as C
from attnlearn.io import atomic_path, save_torch, write_parquet
from attnlearn.jobs import run
from attnlearn.probes import probe_examples
from attnlearn.proxy import probe_proxy, train_proxy
from attnlearn.tasks import make_task


def main(job):
    p = job.params
    vocab = json.load(open(job.input.tokenizer))["vocab_size"]
    task = make_task(p.task, vocab)
    train, valid = pd.read_parquet(job.input.train), pd.read_parquet(job.input.valid)
    model, log = train_proxy(task, train, valid, {**p.proxy, "device": p.device})
    save_torch(model.state_dict(), job.output.model)
    write_parquet(log, job.output.log)
    cells = pd.read_parquet(job.input.counts)
    n_tgt = vocab if p.task == "translation" else 2
    t_table = sp.csr_matrix((cells["t_tgt_given_src"], (cells["src_id"], cells["tgt_id"])), shape=(vocab, n_tgt))
    best_epoch = int(log.loc[log["valid_loss"].idxmin(), "epoch"])
    table = probe_proxy(task, model, t_table, probe_examples(valid, p.probe["max_examples"]),
                        p.probe["batch_size"], best_epoch)
    with atomic_path(job.output.probe, ".parquet") as tmp:
        pq.write_table(table, tmp)


run(main, globals().get("snakemake"))
