"""Rule multihead: rejection sampling of good/bad heads, then the K-head scenarios."""

import logging

from attnlearn.io import write_parquet
from attnlearn.jobs import run
from attnlearn.toy import experiments as E


def main(job):
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    p = job.params
    mh = p.multihead
    base, good, bad, candidates = E.find_heads(mh["task"], p.model, p.train, mh)
    table = E.multihead(mh["task"], p.model, p.train, mh, base, good, bad, p.threshold)
    write_parquet(table, job.output.table)
    write_parquet(candidates, job.output.heads)


run(main, globals().get("snakemake"))
