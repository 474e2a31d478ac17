"""Rule multihead: rejection sampling of good/bad heads, then the K-head scenarios."""

import logging

from attnlearn.runtime.io import write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.experiments import multihead as M
from attnlearn.runtime.device import resolve_device


def main(job):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    p = job.params
    mh = p.multihead
    device = resolve_device(p.device)
    base, good, bad, candidates = M.find_heads(mh["task"], p.model, p.train, mh, device)
    table = M.multihead(mh["task"], p.model, p.train, mh, base, good, bad, p.threshold, device)
    write_parquet(table, job.output.table)
    write_parquet(M.trial_table(table, mh["base_seed"], mh["combo_data_seed"]), job.output.trials)
    write_parquet(candidates, job.output.heads)


run(main, globals().get("snakemake"))
