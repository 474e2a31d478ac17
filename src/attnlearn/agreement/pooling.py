"""Several kept folders' replicate tables read as one (the reproduction's parts and blocks).

No rule imports this module: the pipeline's own tables read one run's replicates; the
reproduction pools parts and blocks kept apart (attnlearn.rows)."""

from __future__ import annotations

import pandas as pd

from attnlearn.agreement.replicates import B_COLUMNS, shared_b


def pool(frames: list[pd.DataFrame], grid: bool = False) -> pd.DataFrame:
    """One replicate table from several folders. A dataset may come from several folders only
    as parts sharing no run (paper_row.py --part parts and --parts blocks; replicates
    renumbered 1, 2, ...). A block's replicates read each other's A runs as B, so its values of
    the columns that read B (replicates.B_COLUMNS) are left out (NaN): those columns pool the
    replicates that own their B runs, and their ``n`` says how many. ``grid``: a crossed or
    factorial grid read for its variance split, every value kept (B is tied to A there)."""
    frames = [f.assign(folder=i) for i, f in enumerate(frames)]
    if not grid:
        frames = [f.assign(**{c: f[c].where(~shared_b(f)) for c in B_COLUMNS if c in f}) for f in frames]
    reps = pd.concat(frames, ignore_index=True)
    out = []
    for dataset, g in reps.groupby("dataset", sort=False):
        runs = [{run for r in f.itertuples() for run in (r.a_run, r.u_run, r.p_run, *r.b_runs)}
                for _, f in g.groupby("folder")]
        shared = sorted({run for i, mine in enumerate(runs) for run in mine if any(run in o for o in runs[i + 1:])})
        if shared:
            raise ValueError(f"{dataset}: the folders share runs {shared}: a dataset's replicates may come "
                             "from several folders only as paper_row.py --part parts or --parts blocks")
        out.append(g.drop(columns="folder").assign(replicate=range(1, len(g) + 1)))
    return pd.concat(out, ignore_index=True)
