"""Rule multihead: rejection sampling of good/bad heads, then the K-head scenarios."""

import logging

from attnlearn.io import write_parquet
from attnlearn.jobs import run
from attnlearn.toy import multihead as M


def main(job):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    p = job.params
    mh = p.multihead
    base, good, bad, candidates = M.find_heads(mh["task"], p.model, p.train, mh)
    table = M.multihead(mh["task"], p.model, p.train, mh, base, good, bad, p.threshold)
    write_parquet(table, job.output.table)
    write_parquet(candidates, job.output.heads)


run(main, globals().get("snakemake"))
