"""The header split (analyses/headers.py) as Markdown: the per-replicate table and its summary
over the replicates, each mean with its 95% t interval and the paired differences' p values."""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.agreement.readable import interval, points
from attnlearn.agreement.readings import CENTRAL, split_summary
from attnlearn.statistics import correlation, t_intervals, t_test


def _pct(v: float) -> str:
    return "-" if pd.isna(v) else f"{100 * v:.1f}"


def r_interval(r) -> str:
    """r with its Fisher interval; three replicates leave none (1 / sqrt(n - 3)) and two no r, said in words."""
    if np.isnan(r["r"]):
        return "undefined (too few replicates)"
    if np.isnan(r["r_low"]):
        return f"{r['r']:+.2f} (too few replicates for an interval)"
    return f"{r['r']:+.2f} [{r['r_low']:+.2f}, {r['r_high']:+.2f}]"


def markdown(table: pd.DataFrame, label: str) -> str:
    """The per-replicate table and its summary, opened by ``label`` (what the summary is: one
    block of a plan's replicates, or exploratory)."""
    lines = ["| A run | U run | A(α\\*, ξ^uf) | header first: α\\*, ξ^uf | A(α\\*, ξ^uf) where α\\* puts a header "
             "word first, a body word first | A(α\\*, ξ^uf) without the header |", "|---" * 6 + "|"]
    lines += [f"| {r.a_run} | {r.u_run} | {_pct(getattr(r, CENTRAL))} | {_pct(r.alpha_header_share)}, "
              f"{_pct(r.xi_header_share)} | {_pct(r.agr_header_rows)}, {_pct(r.agr_body_rows)} | "
              f"{_pct(r.agr_without_header)} |" for r in table.itertuples()]
    b = split_summary(table, "alpha_header_share", "agr_header_rows", "agr_body_rows", "agr_without_header")
    g = table[table["independent"].astype(bool)]
    # the null for alpha*'s header share: the uniform probe's share on the same posts (paired), a
    # measure as peaked as alpha*; a random position's share (header_positions) any peaked
    # attention exceeds, so it is described, not tested
    over_xi = (g["alpha_header_share"] - g["xi_header_share"]).to_numpy(dtype=float)
    t, xi = t_intervals(over_xi), t_intervals(g["xi_header_share"].to_numpy(dtype=float))
    r = correlation(g["alpha_header_share"], g[CENTRAL])
    r_p = "" if np.isnan(r["p_value"]) else f" (p = {r['p_value']:.2g})"  # two replicates: no r, no p
    lines += ["", f"{label} Over the {b['share_n']} replicates (mean [95% CI]): the header holds {100 * g['header_positions'].mean():.1f}% "
              f"of the probed positions; α\\* puts a header word first in "
              f"{interval(b['share'], b['share_low'], b['share_high'])} percent of posts and ξ^uf in "
              f"{interval(xi['mean'], xi['ci_low'], xi['ci_high'])} of the same posts: α\\* minus ξ^uf, paired, "
              f"{points(t['mean'], t['ci_low'], t['ci_high'])} points (p = {t_test(over_xi, 0.0, tie=1.0).p:.2g}). "
              f"A(α\\*, ξ^uf) on the posts where α\\* puts a header word first minus on the posts where it puts a body "
              f"word first: {points(b['gap'], b['gap_low'], b['gap_high'])} points (paired t, p = {b['gap_p']:.2g}). With "
              f"the header's positions left out of both measures A(α\\*, ξ^uf) is "
              f"{interval(b['without'], b['without_low'], b['without_high'])}; the column minus it: "
              f"{points(b['loss'], b['loss_low'], b['loss_high'])} points (paired t, p = {b['loss_p']:.2g}). The column "
              f"against α\\*'s header share over the replicates: r = {r_interval(r)}{r_p}."]
    return "\n".join(lines)
