"""Uncertainty across the standard runs' seeds (docs/methods.md 9 and 12).

Each translation analysis runs on every standard run (``runs.standard``, run
names ``standard-s{seed}``) unless ``analyses.seeds: first``. The summaries:

- alignment error: per dataset, AER mode and layer, the gap AER(norms) -
  AER(weights) at each run's best checkpoint, its mean with a 95% t interval
  across seeds and a paired t-test (the gaps' one-sample t-test against 0);
- head roles: heads are exchangeable across seeds (another seed may give
  head 0's role to head 2), so a head index names no head of another seed.
  Within each seed the heads of a (site, layer, role) are ranked by score
  (rank 1 = the highest), and each rank gets its mean score with a 95% t
  interval across seeds and the share of seeds in which it is significant.

Every t statistic and interval here uses the sample standard deviation
(ddof = 1), as the head-role tests do (attnlearn.statistics).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.statistics import t_interval, t_test


def paired_test(a, b) -> dict:
    """Gap b - a of paired values: mean, 95% t interval, two-sided paired t-test (t, p)."""
    gap = np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)
    mean, low, high, n = t_interval(gap)
    t, p, _ = t_test(gap, 0.0)  # every seed the same gap of 0: no test (NaN)
    return {"gap": mean, "gap_ci_low": low, "gap_ci_high": high, "t": t, "p": p, "n_seeds": n}


def aer_seed_summary(aer: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, arch, aer_mode, layer): AER from weights and from norms at each run's best
    checkpoint (layer level), averaged over seeds, and the paired norm - weight gap."""
    cols = ["dataset", "arch", "aer_mode", "layer", "weight", "norm", "gap", "gap_ci_low", "gap_ci_high", "t", "p",
            "n_seeds"]
    if aer.empty:
        return pd.DataFrame(columns=cols)
    best = aer[aer["best"] & (aer["head"] == -1)]
    wide = best.pivot_table(index=["dataset", "arch", "aer_mode", "layer", "run"], columns="measure", values="aer")
    rows = []
    for key, g in wide.groupby(level=[0, 1, 2, 3]):
        rows.append({**dict(zip(cols[:4], key)), "weight": g["weight"].mean(), "norm": g["norm"].mean(),
                     **paired_test(g["weight"], g["norm"])})
    return pd.DataFrame(rows, columns=cols)


def role_seed_summary(roles: pd.DataFrame) -> pd.DataFrame:
    """Per (dataset, arch, kind, layer, role, rank): the score of each seed's rank-th head
    (by mean score), its mean and 95% t interval across seeds, and the share of seeds in
    which that head is significant (after the correction)."""
    cols = ["dataset", "arch", "kind", "layer", "role", "rank", "mean_score", "ci_low", "ci_high", "n_seeds",
            "share_significant"]
    if roles.empty:
        return pd.DataFrame(columns=cols)
    site = ["dataset", "arch", "kind", "layer", "role"]
    ranked = roles.assign(rank=roles.groupby([*site, "run"])["mean_score"].rank(ascending=False, method="first"))
    rows = []
    for key, g in ranked.groupby([*site, "rank"]):
        mean, low, high, n = t_interval(g["mean_score"])
        rows.append({**dict(zip(cols[:6], key)), "mean_score": mean, "ci_low": low, "ci_high": high, "n_seeds": n,
                     "share_significant": float(g["significant"].mean())})
    return pd.DataFrame(rows, columns=cols).astype({"rank": int})
