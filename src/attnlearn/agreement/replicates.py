"""Table 2 once per replicate, and its columns as means with intervals (docs/methods.md 5).

A replicate is one draw of Table 2's runs (A, B, U, proxy; compare.replicate_design). Each
replicate takes its own maxima over checkpoints (table2_row). Over the independent replicates
each column gets a 95% t interval of the mean and a 95% prediction interval for one more draw,
which is what the paper's single value is compared with. Beside the seed spread, a bootstrap
over validation examples (the same resample for every run) gives the sampling error of the
examples themselves, and the crossed design splits the variance into A seed, U seed and rest.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.agreement.compare import best_step, primary, replicate_roles, shares_b, without_shared_b
from attnlearn.agreement.paper import (PAPER_EXAMPLES, TABLE2, TABLE2_APPENDIX_CTX, TABLE2_APPENDIX_CTX_COLUMNS,
                                       TABLE2_VALUE_COLUMNS)
from attnlearn.agreement.tables import agreement_rows, each_replicate, select_rows, table2_row
from attnlearn.statistics import t_intervals

CTX_COLUMNS = ["ctx_perf_xi_uniform", "ctx_perf_xi_standard"]
# The paper's convention where no B checkpoint reaches the agreement: the best performance, starred
CONV = {c: f"{c}_conv" for c in CTX_COLUMNS}
AGREEMENT_COLUMNS = ["agr_alpha_xi_uniform", "agr_xi_proxy_xi_uniform", "agr_grad_xi_uniform", "agr_alpha_xi_standard"]
APPENDIX_CTX = ["ctx_perf_xi_proxy_xi_uniform", "ctx_perf_grad_xi_uniform"]
VALUE_COLUMNS = [*TABLE2_VALUE_COLUMNS, *CONV.values(), *APPENDIX_CTX]
# The columns that read run B (its xi, or its alpha and performance curves: compare.agreement_rows,
# tables.table2_row): not independent over replicates whose B runs are each other's A runs
B_COLUMNS = ["agr_alpha_xi_standard", "agr_alpha_xi_standard_boot_sd", *CTX_COLUMNS, *CONV.values(), *APPENDIX_CTX,
             "b_perf_step0"]
RUN_COLUMNS = ["a_run", "u_run", "p_run", "b_runs", "xi_b_run", "independent"]
REPLICATE_COLUMNS = ["dataset", "replicate", *RUN_COLUMNS, "task", "perf_metric", *VALUE_COLUMNS,
                     "b_perf_step0", *(f"{c}_boot_sd" for c in AGREEMENT_COLUMNS)]
INTERVAL_COLUMNS = ["dataset", "column", "n", "n_replicates", "mean", "sd", "ci_low", "ci_high", "pi_low", "pi_high",
                    "pi_low_seed", "pi_high_seed", "boot_sd", "examples_sd", "pi_holds", "paper", "paper_in_pi",
                    "b_shared"]
FACTORS = {"a_run": "a", "u_run": "u", "p_run": "p"}  # the roles whose seeds a design crosses
VARIANCE_COLUMNS = ["dataset", "column", "reads", "n_a", "n_u", "n_p", "var_a", "var_u", "var_p", "var_residual",
                    "share_a", "share_u", "share_p", "share_residual",
                    *(f"share_{f}_{end}" for f in ("a", "u", "p", "residual") for end in ("low", "high")),
                    "p_a", "p_u", "p_p"]
VARIANCE_RESAMPLES = 2000


def replicate_perf(perf: pd.DataFrame, rep: dict) -> pd.DataFrame:
    """The performance rows of one replicate's runs, with that replicate's roles."""
    roles = replicate_roles(rep)
    return perf[perf["run"].isin(roles)].assign(role=lambda p: p["run"].map(roles))


def replicate_row(dataset: str, task: str, agr: pd.DataFrame, perf: pd.DataFrame, rep: dict) -> dict:
    """One replicate's Table 2 row, its run names, the contextualized columns under the paper's
    convention and the bootstrap spread of its agreement columns (when ``agr`` has ``boot``)."""
    perf = replicate_perf(perf, rep)
    row = table2_row(dataset, task, agr, perf, xi_b_run=rep["xi_b_run"])
    b_perf = primary(perf[perf["role"] == "B"]).groupby("step")["value"].mean().sort_index()
    out = {"dataset": dataset, "replicate": rep["replicate"], **{c: rep[c] for c in RUN_COLUMNS}, **row,
           "b_perf_step0": float(b_perf.iloc[0]) if len(b_perf) else float("nan")}
    best_b = float(b_perf.max()) if len(b_perf) else float("nan")
    for col, conv in CONV.items():
        out[conv] = row[col] if not np.isnan(row[col]) else best_b
    boot = bootstrap_columns(agr, perf, rep) if "boot" in agr.columns else {}
    for col in AGREEMENT_COLUMNS:
        out[f"{col}_boot_sd"] = float(np.std(boot[col], ddof=1)) if col in boot else float("nan")
    return out


def bootstrap_columns(agr: pd.DataFrame, perf: pd.DataFrame, rep: dict) -> dict:
    """Each agreement column of the replicate under every example resample, as table2_row
    computes it (its own maximum over checkpoints) from the resampled agreement values: the
    rows it reads do not depend on the values, so every resample is one column of a matrix
    (a loop over table2_row took 40 s of a slow core for synthetic_cls' 200 resamples)."""
    agr = agr.reset_index(drop=True)
    boot = np.stack(agr["boot"].to_numpy())  # [rows, B]
    star = best_step(perf[perf["role"] == "A"])
    out = {}
    for column, where in agreement_rows(star, rep["xi_b_run"]).items():
        rows = select_rows(agr, **where)
        if not len(rows):
            continue
        values = boot[rows.index.to_numpy()]
        if column != "agr_alpha_xi_uniform":  # a curve (agreement_rows): the mean over runs at each b_step
            values = _mean_by(rows["b_step"].to_numpy(), values)
        out[column] = np.fmax.reduce(values, axis=0)  # NaN skipped, as pandas' max
    return out


def _mean_by(keys: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Rows of ``values`` [n, B] averaged within equal ``keys``, NaN skipped (pandas' groupby mean)."""
    uniq, group = np.unique(keys, return_inverse=True)
    ok = ~np.isnan(values)
    sums, counts = np.zeros((len(uniq), values.shape[1])), np.zeros((len(uniq), values.shape[1]))
    np.add.at(sums, group, np.where(ok, values, 0.0))
    np.add.at(counts, group, ok)
    with np.errstate(invalid="ignore"):
        return sums / counts


def replicate_table(rep_agr: pd.DataFrame, perf: pd.DataFrame, tasks: dict[str, str],
                    designs: dict[str, list[dict]]) -> pd.DataFrame:
    """table2_replicates: one row per (dataset, replicate)."""
    rows = [replicate_row(dataset, tasks[dataset], sel, perf[perf["dataset"] == dataset], rep)
            for dataset, rep, sel in each_replicate(rep_agr, designs)]
    return pd.DataFrame(rows, columns=REPLICATE_COLUMNS)


KENDALL_REPLICATE_COLUMNS = ["dataset", "replicate", *RUN_COLUMNS, "task", "perf_metric", *TABLE2_VALUE_COLUMNS]


def kendall_replicate_table(rep_kendall: pd.DataFrame, perf: pd.DataFrame, tasks: dict[str, str],
                            designs: dict[str, list[dict]]) -> pd.DataFrame:
    """table2_kendall_replicates: the appendix's Table 2 with Kendall's tau, one row per (dataset,
    replicate), each replicate read as table2_replicates reads it (its own runs and roles, its
    own alpha*), from the replicates' Kendall rows (compare.replicate_frame with
    ``metrics=("kendall_tau",)``, on compare.without_shared_b's design: the columns that read B
    are NaN where a replicate's B runs are other replicates' A runs). Replicate 1 is
    table2_kendall's row but for those columns."""
    rows = [{"dataset": dataset, "replicate": rep["replicate"], **{c: rep[c] for c in RUN_COLUMNS},
             **table2_row(dataset, tasks[dataset], sel, replicate_perf(perf[perf["dataset"] == dataset], rep),
                          "kendall_tau", xi_b_run=rep["xi_b_run"])}
            for dataset, rep, sel in each_replicate(rep_kendall, {d: without_shared_b(g) for d, g in designs.items()})]
    return pd.DataFrame(rows, columns=KENDALL_REPLICATE_COLUMNS)


def paper_value(dataset: str, column: str) -> float:
    """The paper's Table 2 value as a fraction, at the appendix's two decimals (the
    contextualized columns under its convention)."""
    base = next((c for c, conv in CONV.items() if conv == column), column)
    if base in TABLE2_VALUE_COLUMNS and dataset in TABLE2:
        return TABLE2[dataset][TABLE2_VALUE_COLUMNS.index(base)] / 100
    if base in TABLE2_APPENDIX_CTX_COLUMNS and dataset in TABLE2_APPENDIX_CTX:
        return TABLE2_APPENDIX_CTX[dataset][TABLE2_APPENDIX_CTX_COLUMNS.index(base)] / 100
    return float("nan")


def examples_variance(dataset: str, boot_var: float, probed: int | None) -> float:
    """The examples' share of the variance of (the paper's value - our mean) (docs/methods.md 5.1).
    Every replicate probes the same examples, so their sampling error does not average out over
    replicates. Where the paper probed the whole validation split that we probe part of
    (``PAPER_EXAMPLES``), only the part we leave out differs: our m examples' variance times
    1 - m/N (none when we probe all N). Elsewhere the paper's value rests on other examples,
    whose error is taken as ours: twice our variance. NaN where ``boot_var`` is."""
    if np.isnan(boot_var):
        return float("nan")
    total = PAPER_EXAMPLES.get(dataset)
    if total is None:
        return 2 * boot_var
    if probed is None:
        return boot_var
    return boot_var * max(0.0, 1 - min(probed, total) / total)


def bounded_variance(mean: float, probed: int | None, low: float = 0.0, high: float = 1.0) -> float:
    """An upper bound on the sampling variance of a mean over ``probed`` examples of a value per
    example in [low, high] whose mean is ``mean`` (Bhatia and Davis: the variance of such a value
    is at most (high - mean)(mean - low)); exact for an accuracy (0 or 1 per example). For the
    columns with no bootstrap over the examples (performance, the baseline, the appendix's
    columns): their intervals are then conservative, never too narrow. NaN where ``probed`` is
    not known. A translation's per-token mean is read per sentence pair (its ``probed``), whose
    mean over its tokens lies in the same range."""
    if not probed or np.isnan(mean):
        return float("nan")
    return max(0.0, (high - mean) * (mean - low)) / probed


def boot_variance(g: pd.DataFrame, col: str) -> float:
    """The mean over replicates ``g`` of column ``col``'s bootstrap variance over the examples
    (its ``_boot_sd`` column); NaN where the column has none."""
    boot = g.get(f"{col}_boot_sd")
    return float((boot ** 2).mean()) if boot is not None else float("nan")


def column_interval(dataset: str, values, boot_var: float, probed: int | None, paper: float,
                    low: float = 0.0, high: float = 1.0) -> dict:
    """One column over the independent replicates ``values``: t_intervals, then the prediction
    interval with the examples' error (``boot_var``, the bootstrap's, or where NaN the bound of
    ``bounded_variance``), and whether the paper's value lies inside it (None where the interval
    cannot hold the examples' error: no verdict)."""
    iv = t_intervals(values)
    holds = "seeds+examples"
    if np.isnan(boot_var):
        boot_var, holds = bounded_variance(iv["mean"], probed, low, high), "seeds+examples (bound)"
    ex_var = examples_variance(dataset, boot_var, probed)
    # without the examples' error the seeds' interval is still shown, but reads no paper value
    pi = _with_examples(iv, ex_var) if not np.isnan(ex_var) else (iv["pi_low"], iv["pi_high"])
    inside = None if np.isnan(paper) or np.isnan(ex_var) or np.isnan(pi[0]) else bool(pi[0] <= paper <= pi[1])
    return {**iv, "pi_low": pi[0], "pi_high": pi[1], "pi_low_seed": iv["pi_low"], "pi_high_seed": iv["pi_high"],
            "boot_sd": float(np.sqrt(boot_var)), "examples_sd": float(np.sqrt(ex_var)),
            "pi_holds": holds if not np.isnan(ex_var) else "seeds (examples unknown: no verdict)",
            "paper": paper, "paper_in_pi": inside}


def shared_b(g: pd.DataFrame) -> pd.Series:
    """compare.shares_b for each replicate (row) of one dataset's replicate table."""
    return pd.Series(shares_b(g["a_run"], g["b_runs"]), index=g.index)


def interval_table(replicates: pd.DataFrame, probed: dict[str, int] | None = None) -> pd.DataFrame:
    """table2_intervals: one row per (dataset, column), over the independent replicates. ``n``
    counts the replicates where the column is defined (a contextualized value is not where no
    B checkpoint reaches the agreement), ``n_replicates`` all of them. ``pi_low``/``pi_high``:
    the 95% prediction interval of one more value with the examples' sampling error
    (column_interval; ``probed``: the examples each dataset's probes read), which the paper's
    value is read against; ``pi_low_seed``/``pi_high_seed``: the seeds' spread alone.
    ``b_shared``: the column reads run B and the replicates it is defined on share B runs (a
    replicate's B is another's A), so its intervals read dependent values as independent and
    are too narrow, by an amount the design cannot measure."""
    rows = []
    for dataset, g in replicates[replicates["independent"].astype(bool)].groupby("dataset", sort=False):
        for col in VALUE_COLUMNS:
            iv = column_interval(dataset, g[col], boot_variance(g, col), (probed or {}).get(dataset), paper_value(dataset, col))
            rows.append({"dataset": dataset, "column": col, **iv, "n_replicates": len(g),
                         "b_shared": col in B_COLUMNS and bool(shared_b(g[g[col].notna()]).any())})
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def _with_examples(iv: dict, ex_var: float) -> tuple[float, float]:
    """The prediction interval of ``t_intervals`` widened by the examples' variance:
    mean +- t(n-1) sqrt(sd^2 (1 + 1/n) + ex_var)."""
    n = iv["n"]
    if n < 2:
        return float("nan"), float("nan")
    t = stats.t.ppf(0.975, n - 1)
    half = t * np.sqrt(iv["sd"] ** 2 * (1 + 1 / n) + ex_var)
    return iv["mean"] - half, iv["mean"] + half


def variance_shares(values, names: str = "aup") -> dict:
    """Random-effects variance components of a fully crossed grid without replication (``values``:
    one axis per factor, 1 to 3 of them, named by ``names``' letters: a, u, p), main effects and
    a residual that holds the interactions, by the method of moments; negative estimates are set
    to 0. Keys var_<f>, share_<f>, n_<f> and p_<f> for each factor, and var_residual,
    share_residual. p_<f>: the F test of the factor's main effect against the residual (exact
    for two factors, where the residual is their interaction; with three, against the pooled
    interactions, an approximation); NaN with one factor, where nothing is left to test against."""
    y = np.asarray(values, dtype=float)
    names = names[:y.ndim]
    total_n, grand = y.size, y.mean()
    ms, df, fitted = {}, {}, np.full_like(y, grand)
    for axis, f in enumerate(names):
        others = tuple(a for a in range(y.ndim) if a != axis)
        effect = y.mean(axis=others, keepdims=True) - grand
        df[f] = y.shape[axis] - 1
        ms[f] = (total_n // y.shape[axis]) * (effect ** 2).sum() / df[f]
        fitted = fitted + effect
    df_e = total_n - 1 - sum(df.values())
    ms_e = ((y - fitted) ** 2).sum() / df_e if df_e > 0 else 0.0  # the interactions and the rest
    var = {f"var_{f}": max(0.0, (ms[f] - ms_e) / (total_n // y.shape[axis])) for axis, f in enumerate(names)}
    var["var_residual"] = max(0.0, ms_e)
    total = sum(var.values())
    shares = {f"share_{k[4:]}": (v / total if total > 0 else float("nan")) for k, v in var.items()}
    tests = {f"p_{f}": (float(stats.f.sf(ms[f] / ms_e, df[f], df_e)) if df_e > 0 and ms_e > 0 else float("nan"))
             for f in names}
    return {**{f"n_{f}": y.shape[axis] for axis, f in enumerate(names)}, **var, **shares, **tests}


def read_axes(values) -> list[int]:
    """The axes of a grid along which its values change: the roles the column reads. A column
    that does not read a role (A(alpha*, xi^uf) and the proxy; A(alpha*, xi^B) and U) repeats
    its values along that role's axis, and counting the copies as replicates would inflate the
    residual's degrees of freedom."""
    y = np.asarray(values, dtype=float)
    return [axis for axis in range(y.ndim) if np.ptp(y, axis=axis).max() > 0]


def share_intervals(values, resamples: int = VARIANCE_RESAMPLES, seed: int = 0, level: float = 0.95,
                    names: str = "aup") -> dict:
    """95% intervals of each share of ``variance_shares`` by the pigeonhole bootstrap (Owen 2007):
    each factor's levels (the seeds of a role) resampled with replacement, independently, and the
    grid recomputed. With two or three seeds per role they are wide: they say how little such a
    grid can tell."""
    y = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    keys = [k for k in variance_shares(y, names) if k.startswith("share_")]
    draws = {k: [] for k in keys}
    for _ in range(resamples):
        grid = y
        for axis, size in enumerate(y.shape):
            grid = np.take(grid, rng.integers(0, size, size), axis=axis)
        shares = variance_shares(grid, names)
        for k in keys:
            draws[k].append(shares[k])
    tail = 100 * (1 - level) / 2
    out = {}
    for k, v in draws.items():
        v = np.asarray(v)
        v = v[~np.isnan(v)]
        low, high = np.percentile(v, [tail, 100 - tail]) if len(v) else (np.nan, np.nan)
        out[f"{k}_low"], out[f"{k}_high"] = float(low), float(high)
    return out


def _read_roles(values) -> dict:
    """variance_shares and share_intervals over the roles the column reads (``read_axes``); the
    others get no row (NaN); a column constant over the whole grid gets none at all."""
    axes = read_axes(values)
    if not axes:
        return {"reads": ""}
    names = "".join("aup"[a] for a in axes)
    y = np.asarray(values, dtype=float)[tuple(slice(None) if a in axes else 0 for a in range(np.ndim(values)))]
    return {"reads": names, **variance_shares(y, names), **share_intervals(y, names=names)}


def _grid_factors(g: pd.DataFrame) -> list[str] | None:
    """The role columns a dataset's replicates cross fully (A, U and P; else A and U), or None."""
    for factors in (list(FACTORS), ["a_run", "u_run"]):
        if not set(factors) <= set(g.columns):
            continue
        levels = [g[f].nunique() for f in factors]
        if min(levels) >= 2 and len(g) == np.prod(levels) and not g.duplicated(factors).any():
            return factors
    return None


def variance_table(replicates: pd.DataFrame) -> pd.DataFrame:
    """table2_variance: for crossed designs (every A with every U, at least 2 x 2) the share of
    each agreement column's variance that is A seed, U seed and residual; for factorial ones
    (every A x U x P) also the proxy seed's; each share with its 95% pigeonhole-bootstrap
    interval and each role's F test (``p_<f>``). Over the roles the column reads (``reads``:
    A(alpha*, xi^uf) does not read the proxy); empty for rotate."""
    rows = []
    for dataset, g in replicates.groupby("dataset", sort=False):
        factors = _grid_factors(g)
        if factors is None:
            continue
        for col in AGREEMENT_COLUMNS:
            grid = g.set_index(factors)[col].unstack(factors[1:]).sort_index()
            if grid.isna().any().any():
                continue
            values = grid.to_numpy(dtype=float).reshape([g[f].nunique() for f in factors])
            rows.append({"dataset": dataset, "column": col, **_read_roles(values)})
    return pd.DataFrame(rows, columns=VARIANCE_COLUMNS)
