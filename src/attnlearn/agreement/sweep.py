"""A sweep pooled: each value's Table 2 over its replicates, and the trend over the values.

A sweep (src/attnlearn/sweeps.py) runs one dataset per value of one setting, each with Table 2's
replicates. Per value and column: the mean, its 95% t interval and the 95% prediction interval
of one more replicate (replicates.interval_table, over the replicates that share no A, U or
proxy run). The trend of each column on the value is read over the replicates, not over the
means (a mean hides its n and its spread): the OLS slope with its t interval, Pearson's r with
scipy's (Fisher) interval, whose t test is the slope's, and Spearman's rank correlation, which
asks only that the column moves one way; a column that does not vary, or only by rounding, has
no trend to read (``constant``: "constant: no trend" where the others print numbers). Beside Table 2's columns, alpha*'s agreement with the
gold alignment (synthetic data), per replicate: the agreement rule reads it for run A alone.
"""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.agreement.compare import best_step
from attnlearn.agreement.metric import Measure, summarize
from attnlearn.agreement.paper import TABLE2_VALUE_COLUMNS
from attnlearn.agreement.readable import SHARED, UNDEFINED, interval, percent, points, signed, to_markdown
from attnlearn.agreement.replicates import interval_table
from attnlearn.statistics import constant, t_intervals

GOLD_COLUMNS = ["agr_alpha_gold", "gold_hit_alpha", "gold_baseline"]
COLUMNS = [*TABLE2_VALUE_COLUMNS, *GOLD_COLUMNS]  # what the sweep pools, in the order it prints
LABELS = {"agr_alpha_xi_uniform": "A(α*, ξ^uf)", "agr_xi_proxy_xi_uniform": "A(ξ^px, ξ^uf)",
          "agr_grad_xi_uniform": "A(g*, ξ^uf)", "agr_alpha_xi_standard": "A(α*, ξ^B)",
          "random_baseline": "random baseline", "ctx_perf_xi_uniform": "contextualized A(α*, ξ^uf)",
          "ctx_perf_xi_standard": "contextualized A(α*, ξ^B)", "best_perf": "best performance",
          "agr_alpha_gold": "A(α*, gold)", "gold_hit_alpha": "α*'s argmax on a gold link",
          "gold_baseline": "gold: random baseline"}
REPLICATE_KEYS = ["sweep", "key", "value", "value_index", "dataset", "replicate", "a_run", "u_run", "p_run"]
TABLE_COLUMNS = ["sweep", "key", "value", "value_index", "dataset", "column", "n", "n_replicates", "mean", "sd",
                 "ci_low", "ci_high", "pi_low", "pi_high", "pi_low_fresh", "pi_high_fresh", "boot_sd", "b_shared"]
TREND_COLUMNS = ["sweep", "key", "column", "n", "slope", "slope_ci_low", "slope_ci_high", "intercept", "r",
                 "r_ci_low", "r_ci_high", "p_value", "spearman_rho", "spearman_p", "constant"]
NO_TREND = "constant: no trend"


def alpha_gold(alpha: Measure, gold: Measure) -> dict:
    """alpha*'s agreement with the gold links (A, the metric of Table 2), how often its argmax is
    a gold link, and A's random baseline against the gold links."""
    agr, hit = summarize(alpha, gold, ("agreement", "gold_hit"))
    return {"agr_alpha_gold": agr["value"], "gold_hit_alpha": hit["value"], "gold_baseline": agr["baseline"]}


def star(perf: pd.DataFrame) -> int:
    """alpha*'s checkpoint: run A's best validation step (compare.best_step)."""
    return best_step(perf)


def as_number(value) -> float:
    """A swept value as the trend reads it (NaN for a value that is no number: a word, a list)."""
    if isinstance(value, bool):
        return float(value)
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def sweep_replicates(replicates: pd.DataFrame, sweep: dict, gold: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per independent replicate of every value: the sweep, key and value, the Table 2
    row (table2_replicates.parquet) and, where given, alpha*'s gold columns (``gold``: dataset,
    replicate and GOLD_COLUMNS)."""
    frames = []
    for i, (dataset, value) in enumerate(zip(sweep["datasets"], sweep["values"])):
        rows = replicates[(replicates["dataset"] == dataset) & replicates["independent"].astype(bool)]
        frames.append(rows.assign(sweep=sweep["name"], key=sweep["key"], value=as_number(value),
                                  value_index=i, value_text=str(value)))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=REPLICATE_KEYS)
    if gold is not None and len(gold):
        out = out.merge(gold[["dataset", "replicate", *GOLD_COLUMNS]], on=["dataset", "replicate"], how="left")
    for col in GOLD_COLUMNS:
        if col not in out:
            out[col] = np.nan
    rest = [c for c in out.columns if c not in REPLICATE_KEYS]
    return out[REPLICATE_KEYS + rest]


def pooled(reps: pd.DataFrame) -> pd.DataFrame:
    """Per value and column: n, mean, sd, the 95% t interval of the mean, the 95% prediction
    interval of one more replicate on the same examples (``pi_low``, ``pi_high``: the seeds'
    spread) and on fresh ones (``pi_*_fresh``: the examples' sampling error added as
    replicates.interval_table adds it, twice the bootstrap variance; the same where a column has
    no bootstrap). ``b_shared``: the column reads B, and the rotate replicates share their B runs."""
    ivs = interval_table(reps).set_index(["dataset", "column"])
    rows = []
    for (dataset, g) in reps.groupby("dataset", sort=False):
        first = g.iloc[0]
        for col in COLUMNS:
            if (dataset, col) in ivs.index:
                iv = ivs.loc[(dataset, col)]
                cells = {k: iv[k] for k in ("n", "n_replicates", "mean", "sd", "ci_low", "ci_high", "boot_sd",
                                            "b_shared")}
                cells.update(pi_low=iv["pi_low_seed"], pi_high=iv["pi_high_seed"], pi_low_fresh=iv["pi_low"],
                             pi_high_fresh=iv["pi_high"])
            else:  # the gold columns: no bootstrap, no B
                iv = t_intervals(g[col])
                cells = {**{k: iv[k] for k in ("n", "mean", "sd", "ci_low", "ci_high", "pi_low", "pi_high")},
                         "n_replicates": len(g), "pi_low_fresh": iv["pi_low"], "pi_high_fresh": iv["pi_high"],
                         "boot_sd": float("nan"), "b_shared": False}
            rows.append({"sweep": first["sweep"], "key": first["key"], "value": first["value"],
                         "value_index": int(first["value_index"]), "dataset": dataset, "column": col, **cells})
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def trend_row(x, y, level: float = 0.95) -> dict:
    """The trend of y on x over the replicates (pairs with a NaN left out): OLS slope with its t
    interval (n - 2 degrees of freedom), Pearson's r with scipy's interval, the two-sided p of
    their common t test, and Spearman's rho with its p. Where y does not vary, or only by
    rounding (statistics.constant), ``constant`` and no statistic: a fit to rounding noise read
    r = -1.00 [-1.00, -1.00], p = 1e-20."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y))
    x, y = x[ok], y[ok]
    nan = float("nan")
    out = {"n": int(len(x)), "slope": nan, "slope_ci_low": nan, "slope_ci_high": nan, "intercept": nan, "r": nan,
           "r_ci_low": nan, "r_ci_high": nan, "p_value": nan, "spearman_rho": nan, "spearman_p": nan,
           "constant": False}
    if len(x) < 3 or constant(x):
        return out
    if constant(y):
        out.update(constant=True, intercept=float(np.mean(y)))
        return out
    fit = stats.linregress(x, y)
    half = stats.t.ppf(0.5 + level / 2, len(x) - 2) * fit.stderr
    pearson = stats.pearsonr(x, y)
    ci = pearson.confidence_interval(level) if len(x) > 3 else (nan, nan)
    rho = stats.spearmanr(x, y)
    out.update(slope=float(fit.slope), slope_ci_low=float(fit.slope - half), slope_ci_high=float(fit.slope + half),
               intercept=float(fit.intercept), r=float(pearson.statistic), r_ci_low=float(ci[0]),
               r_ci_high=float(ci[1]), p_value=float(fit.pvalue), spearman_rho=float(rho.statistic),
               spearman_p=float(rho.pvalue))
    return out


def trend(reps: pd.DataFrame) -> pd.DataFrame:
    """Each column's trend on the swept value, over the independent replicates of all values."""
    if reps.empty:
        return pd.DataFrame(columns=TREND_COLUMNS)
    first = reps.iloc[0]
    rows = [{"sweep": first["sweep"], "key": first["key"], "column": col, **trend_row(reps["value"], reps[col])}
            for col in COLUMNS if col in reps]
    return pd.DataFrame(rows, columns=TREND_COLUMNS)


def plan_status(committed_at: datetime | None, first_training: datetime | None, changed: bool) -> tuple[str, str]:
    """Whether the plan's tests are confirmatory on this sweep's replicates (docs/methods.md 5.5):
    only if git shows the plan, with the bytes it has now, committed before the sweep's first
    training began. Returns (status, why)."""
    if changed:
        return "exploratory", "the plan differs from its committed version"
    if committed_at is None:
        return "exploratory", "git shows no commit of the plan with its present bytes"
    if first_training is None:
        return "exploratory", "the sweep's first training time is unknown"
    when = f"plan committed {committed_at.isoformat()}, first training began {first_training.isoformat()}"
    if committed_at < first_training:
        return "confirmatory", when
    return "exploratory", f"{when}: the plan came after the replicates"


def slope_cell(slope, low, high) -> str:
    """A slope in points per unit with its interval, to the decimals that give the interval's
    half-width two significant digits: a key in the hundreds (a hidden size) moves the agreement
    by hundredths of a point per unit, which one decimal would print as +0.0 [-0.1, +0.2]."""
    if pd.isna(slope):
        return UNDEFINED
    half = 100 * (high - low) / 2
    places = 1 if not half > 0 else int(min(6, max(1, 1 - np.floor(np.log10(half)))))
    return f"{100 * slope:+.{places}f} [{100 * low:+.{places}f}, {100 * high:+.{places}f}]"


def trend_cells(trend_frame: pd.DataFrame) -> pd.DataFrame:
    """The trend table as people read it: labelled columns, slope, r, p and Spearman's rho as
    text; a column that does not vary says so in place of a slope, "-" in the others (no r to
    speak of)."""
    def pair(r, lo, hi):
        return UNDEFINED if pd.isna(r) else f"{r:+.2f} [{lo:+.2f}, {hi:+.2f}]"

    t = trend_frame
    flat = t["constant"].fillna(False).astype(bool) if "constant" in t else pd.Series(False, index=t.index)
    return pd.DataFrame({
        "column": t["column"].map(LABELS), "n": t["n"],
        "slope (points per unit) [95% CI]": [NO_TREND if f else slope_cell(s, lo, hi) for f, s, lo, hi in
                                             zip(flat, t["slope"], t["slope_ci_low"], t["slope_ci_high"])],
        "r [95% CI]": list(map(pair, t["r"], t["r_ci_low"], t["r_ci_high"])),
        "p": t["p_value"].map(lambda p: UNDEFINED if pd.isna(p) else f"{p:.2g}"),
        "Spearman rho (p)": [UNDEFINED if pd.isna(r) else f"{r:+.2f} ({p:.2g})"
                             for r, p in zip(t["spearman_rho"], t["spearman_p"])]})


def plan_cell(kind: str, n: int, estimate, low, high, null_value=None) -> str:
    """A plan test's estimate [95% CI] as the findings print it: r to two decimals, a share in
    percent, a signed quantity (readable.signed) in points. A correlation over three or more
    replicates is undefined only where a column does not vary (statistics.correlation), which
    is said in words."""
    if pd.isna(estimate):
        return NO_TREND if kind == "correlation" and n >= 3 else UNDEFINED
    if kind != "correlation":
        if pd.isna(low):
            return f"{100 * estimate:+.1f}" if signed(kind, null_value) else percent(estimate)
        return (points if signed(kind, null_value) else interval)(estimate, low, high)
    return f"{estimate:+.2f} [{low:+.2f}, {high:+.2f}]" if not pd.isna(low) else f"{estimate:+.2f}"


def plan_lines(plan: pd.DataFrame, status: str) -> list[str]:
    """A plan's tests (plans.evaluate's rows) as a Markdown section, its status in the heading."""
    return [f"## The plan's tests ({status})", "",
            to_markdown(plan.assign(**{"estimate [95% CI]": [
                plan_cell(kind, n, e, lo, hi, null) for kind, n, e, lo, hi, null in
                zip(plan["kind"], plan["n"], plan["estimate"], plan["ci_low"], plan["ci_high"],
                    plan.get("null_value", [None] * len(plan)))],
                "p": plan["p_value"].map(lambda p: UNDEFINED if pd.isna(p) else f"{p:.2g}"),
                "p (Holm)": plan["p_holm"].map(lambda p: UNDEFINED if pd.isna(p) else f"{p:.2g}")})[
                ["test", "says", "n", "estimate [95% CI]", "p", "p (Holm)", "verdict"]]), ""]


def _percent_cell(mean, low, high) -> str:
    return UNDEFINED if pd.isna(mean) else interval(mean, low, high) if not pd.isna(low) else percent(mean)


def markdown(sweep: dict, table: pd.DataFrame, trend_frame: pd.DataFrame, plan: pd.DataFrame | None = None,
             status: str = "") -> str:
    """The sweep for people: the trend of every column, the plan's tests, then per column a
    table of the values (mean [95% CI], the 95% prediction interval of one more replicate, n)."""
    lines = [f"# Sweep {sweep['name']}: {sweep['key']} of {sweep['base']}", "",
             f"Values {', '.join(map(str, sweep['values']))}; {sweep['replicates']} Table 2 replicates each "
             "(docs/sweeps.md). Agreement in percent. Intervals over the replicates that share no A, U or proxy "
             "run; the trend is read over those replicates, not over the values' means.", ""]
    shown = trend_cells(trend_frame)
    lines += ["## Trend over the replicates", "",
              to_markdown(shown), ""]
    if plan is not None and len(plan):
        lines += plan_lines(plan, status)
    lines += ["## Each column per value", "",
              "mean [95% CI of the mean]; PI: the 95% prediction interval of one more replicate on these "
              "examples; n: the replicates where the column is defined (‡: it reads B, which the rotate "
              "replicates share, so its interval is too narrow by an amount the design cannot measure).", ""]
    for col in COLUMNS:
        t = table[table["column"] == col]
        if t.empty or t["n"].sum() == 0:
            continue
        lines += [f"### {LABELS[col]} (`{col}`)", "", to_markdown(pd.DataFrame({
            sweep["key"]: [str(v) for v in sweep["values"][:len(t)]] if len(t) == len(sweep["values"])
            else t["value"].astype(str),
            "dataset": t["dataset"],
            "mean [95% CI]": [_percent_cell(m, lo, hi) for m, lo, hi in zip(t["mean"], t["ci_low"], t["ci_high"])],
            "95% PI": [UNDEFINED if pd.isna(lo) else f"[{percent(lo, True)}, {percent(hi, True)}]"
                       for lo, hi in zip(t["pi_low"], t["pi_high"])],
            "n": [f"{n}/{m}{' ' + SHARED if b else ''}"
                  for n, m, b in zip(t["n"], t["n_replicates"], t["b_shared"])]})),
            ""]
    return "\n".join(lines)


def wide(sweep: dict, table: pd.DataFrame, columns: list[str], cell: str = "ci") -> pd.DataFrame:
    """A row per value, a column per Table 2 column: mean [95% CI] (``cell`` "ci"), or the 95%
    prediction interval of one more replicate ("pi"), in percent; n where it is not every
    replicate (the ‡ of a column that reads the shared B runs)."""
    out = {sweep["key"]: [str(v) for v in sweep["values"]]}
    for col in columns:
        cells = []
        for i in range(len(sweep["values"])):
            r = table[(table["value_index"] == i) & (table["column"] == col)]
            if r.empty or pd.isna(r["mean"].iloc[0]):
                cells.append(UNDEFINED)
                continue
            r = r.iloc[0]
            pi = f"[{percent(r['pi_low'], True)}, {percent(r['pi_high'], True)}]"
            text = (_percent_cell(r["mean"], r["ci_low"], r["ci_high"]) if cell == "ci" else
                    UNDEFINED if pd.isna(r["pi_low"]) else pi)
            if r["n"] != r["n_replicates"] or r["b_shared"]:
                text += f" (n = {r['n']}/{r['n_replicates']}{' ' + SHARED if r['b_shared'] else ''})"
            cells.append(text)
        out[LABELS[col]] = cells
    return pd.DataFrame(out)
