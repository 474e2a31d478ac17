"""The transfer test (docs/methods.md, "Transfer"): a standard run started from a donor's weights,
the donor a uniform-attention run taken at step k, so that the run starts knowing as many of its
words' translations (KTIW) as the donor learned in k steps, while its attention starts fresh. The
paper's account predicts that its attention then agrees sooner with the uniform model's lexical
probe xi^uf the larger k; a control that copies the parts without the words' translations
(init.params naming some parts only) should not do as much.

Per independent replicate of every value of the transfer sweep: run A's attention at each of its
checkpoints against its replicate's U run's xi at U's best validation step (one fixed reference
for the curve, where Table 2 takes the best of U's checkpoints), and against the gold links where
the data have them (``curves``). The response is the curve's time-average over steps 0..window
(trapezoids: checkpoints need not be evenly spaced; ``responses``). Per seed (the design's block:
seed r's run starts from donor-sr at every dose, reads its batches in one order and starts its
attention from one draw), the OLS slope of the response on the dose's rank, and the response at
the control's dose with and without the parts the control leaves out (``seed_table``): what the
plan's tests read, with the seed as the unit.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from attnlearn.agreement.metric import load_measure, summarize
from attnlearn.probing.best import best_step
from attnlearn.statistics import t_intervals

AGAINST = {"xi_uniform": "A(α_t, ξ^uf)", "gold": "A(α_t, gold)"}
CURVE_COLUMNS = ["dataset", "arm", "dose", "parts", "replicate", "seed", "a_run", "u_run", "u_step", "step",
                 "against", "value", "baseline"]
RESPONSE_COLUMNS = ["dataset", "arm", "dose", "parts", "replicate", "seed", "against", "early", "last"]
REFERENCE_COLUMNS = ["dataset", "arm", "dose", "parts", "seed", "a_run", "a_step", "u_run", "u_step", "u_best",
                     "value", "baseline"]


def arm(init: dict) -> str:
    """"transfer" where the run copies every part but the attention, "control" where it names some."""
    return "transfer" if init.get("params", "all") == "all" else "control"


def curves(dataset: str, init: dict, design: list[dict], probes: dict[str, pa.Table],
           perf: dict[str, pd.DataFrame], gold: pa.Table | None) -> pd.DataFrame:
    """Every checkpoint of each independent replicate's run A against its U run's xi at U's best
    step and against the gold links (``gold`` None: no gold rows)."""
    rows = []
    base = {"dataset": dataset, "arm": arm(init), "dose": int(init["step"]),
            "parts": ",".join(init["params"]) if arm(init) == "control" else "all"}
    for rep in (r for r in design if r["independent"]):
        a, u = rep["a_run"], rep["u_run"]
        u_step = best_step(perf[u])
        xi = load_measure(probes[u], "xi", u_step)
        against = [("xi_uniform", xi)] + ([("gold", load_measure(gold, "gold", 0))] if gold is not None else [])
        for step in sorted(set(probes[a]["step"].to_pylist())):
            alpha = load_measure(probes[a], "alpha", step)
            for name, ref in against:
                (row,) = summarize(alpha, ref, ("agreement",))
                rows.append({**base, "replicate": rep["replicate"], "seed": int(a.rsplit("-s", 1)[1]), "a_run": a,
                             "u_run": u, "u_step": u_step, "step": step, "against": name,
                             "value": row["value"], "baseline": row["baseline"]})
    return pd.DataFrame(rows, columns=CURVE_COLUMNS)


def time_average(steps: np.ndarray, values: np.ndarray, window: int) -> float:
    """The mean of a curve over steps 0..window by trapezoids between its checkpoints."""
    keep = steps <= window
    s, v = steps[keep], values[keep]
    if len(s) < 2 or s[0] != 0 or s[-1] != window:
        raise ValueError(f"transfer.window: {window} needs checkpoints at step 0 and at step {window} "
                         f"(the runs save {sorted(steps.tolist())})")
    return float(np.sum((v[1:] + v[:-1]) / 2 * np.diff(s)) / window)


def responses(curve: pd.DataFrame, window: int) -> pd.DataFrame:
    """Per replicate and reference: the early response (time-average over 0..window) and the last
    checkpoint's value."""
    keys = ["dataset", "arm", "dose", "parts", "replicate", "seed", "against"]
    rows = []
    for key, g in curve.sort_values("step").groupby(keys, sort=False):
        steps, values = g["step"].to_numpy(), g["value"].to_numpy(dtype=float)
        rows.append({**dict(zip(keys, key)), "early": time_average(steps, values, window), "last": float(values[-1])})
    return pd.DataFrame(rows, columns=RESPONSE_COLUMNS)


def _slope(doses: np.ndarray, values: np.ndarray) -> float:
    """OLS slope of the values on the doses' ranks (0, 1, ...): per dose level, whatever the spacing."""
    ranks = np.searchsorted(np.unique(doses), doses)
    return float(np.polyfit(ranks, values, 1)[0]) if len(np.unique(ranks)) > 1 else float("nan")


def seed_table(resp: pd.DataFrame) -> pd.DataFrame:
    """One row per seed: per reference, the slope of the early response over the transfer doses
    (``slope_xi``, ``slope_gold``), and at the control's dose the transfer's and the control's
    early responses (``top_xi``, ``control_xi``; NaN where the seed lacks one)."""
    out = []
    for seed, g in resp.groupby("seed"):
        row = {"seed": int(seed)}
        for against, short in (("xi_uniform", "xi"), ("gold", "gold")):
            r = g[g["against"] == against]
            full, control = r[r["arm"] == "transfer"], r[r["arm"] == "control"]
            row[f"slope_{short}"] = _slope(full["dose"].to_numpy(), full["early"].to_numpy()) if len(full) else np.nan
            at = control["dose"].max() if len(control) else None
            row[f"top_{short}"] = float(full.loc[full["dose"] == at, "early"].mean()) if at is not None else np.nan
            row[f"control_{short}"] = float(control.loc[control["dose"] == at, "early"].mean()) if at is not None \
                else np.nan
        out.append(row)
    return pd.DataFrame(out)


def pooled(resp: pd.DataFrame) -> pd.DataFrame:
    """Per arm, dose and reference: the early and last responses' mean with the 95% t interval
    over the seeds."""
    rows = []
    for (arm_, dose, parts, against), g in resp.groupby(["arm", "dose", "parts", "against"], sort=True):
        for what in ("early", "last"):
            iv = t_intervals(g[what].to_numpy(dtype=float))
            rows.append({"arm": arm_, "dose": dose, "parts": parts, "against": against, "what": what,
                         **{k: iv[k] for k in ("n", "mean", "sd", "ci_low", "ci_high")}})
    return pd.DataFrame(rows)


def against_k0(resp: pd.DataFrame) -> pd.DataFrame:
    """Exploratory: each start's responses minus the k = 0 start's, seed by seed (the design's
    block), with the 95% t interval of the mean difference over the seeds."""
    base = resp[(resp["arm"] == "transfer") & (resp["dose"] == 0)].set_index(["seed", "against"])
    rows = []
    for (arm_, dose, parts, against), g in resp.groupby(["arm", "dose", "parts", "against"], sort=True):
        if arm_ == "transfer" and dose == 0:
            continue
        g = g.set_index(["seed", "against"])
        for what in ("early", "last"):
            diff = (g[what] - base[what].reindex(g.index)).to_numpy(dtype=float)
            iv = t_intervals(diff)
            rows.append({"arm": arm_, "dose": dose, "parts": parts, "against": against, "what": what,
                         **{k: iv[k] for k in ("n", "mean", "ci_low", "ci_high")}})
    return pd.DataFrame(rows)


def against_u_steps(base: dict, a_probe: pa.Table, a_perf: pd.DataFrame, u_probe: pa.Table,
                    u_perf: pd.DataFrame) -> pd.DataFrame:
    """Exploratory, the response's reference: run A's attention at its best step against its U
    run's xi at every checkpoint of U (``u_best`` marks U's best validation step, the reference
    the curves take; Table 2 takes the best of U's checkpoints). ``base``: the rows' dataset,
    arm, dose, parts, seed, a_run and u_run."""
    a_step, u_best = best_step(a_perf), best_step(u_perf)
    alpha = load_measure(a_probe, "alpha", a_step)
    rows = []
    for step in sorted(set(u_probe["step"].to_pylist())):
        (row,) = summarize(alpha, load_measure(u_probe, "xi", step), ("agreement",))
        rows.append({**base, "a_step": a_step, "u_step": step, "u_best": step == u_best,
                     "value": row["value"], "baseline": row["baseline"]})
    return pd.DataFrame(rows, columns=REFERENCE_COLUMNS)
