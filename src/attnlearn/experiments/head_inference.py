"""Inference over the multi-head trials with the head as the unit (docs/experiments.md).

The paper's design (5.2; the reference code's ``SequenceCopying/multihead.py``) fixes one
base model and one data stream and draws every K-head model's heads from one pool of found
heads (20 bad and 20 good): 50 all-bad trials of 8 heads from 20 bad heads put each head in
about 20 of them. The trials are then not independent draws: a bad head that helps (or
hinders) convergence does so in every trial it serves, and the next pool of 20 bad heads
would move every such trial together. A share's variance over new pools has a part from the
heads, about (m_h / N)^2 per head (m_h of the N trials hold head h), that the binomial
variance of N independent trials leaves out.

The model (a linear mixed model with multiple membership, on the outcome's own scale: a
converged flag, a final accuracy, steps to converge): trial i of scenario s has

    y_i = mu_s + sum_{h in pool heads of i} a_h^s + sum_{pairs {h, h'} of i} b_hh'^s
          + g_{good head of i} + e_i

with a pool head's effects a_h = (a_h^s)_s drawn once per head (variance sigma_s^2 in
scenario s, covariance tau_st between two scenarios that draw from the same pool), a pair of
heads' joint effect b (what two heads do together beyond the sum of each alone: two trials
that share c heads share c(c-1)/2 pairs, and in the simulations below leaving pairs out
made the SE too small where heads matter much), the good heads' g, and each trial's own
part e_i (variance per scenario: what is left, and for the random scenario its fresh heads,
which no other trial shares). The components are estimated by REML, as iterated MINQUE
(Rao 1971): at the last step's V, tr(P V_l P V_k) theta_k = y' P V_l P y for every pair of
components, P the REML projection off the scenario means, each step cut to a valid
covariance (variances at least 0, a covariance within the Cauchy-Schwarz bound). A
component is fitted only where the design can tell it apart (a head or a pair shared by two
or more trials). The estimate of a scenario's share (or of a contrast of two) is the plain
mean over its trials, as before; its variance is w' V w at the estimated V, and the interval
is estimate +- t * SE on one less than the pool's heads degrees of freedom
(``degrees_of_freedom``).

How well it holds (exploratory: ``python diagnostics/head_inference_coverage.py --pools 40``,
the paper's counts: 20 bad and 20 good heads, 8 a trial, 50 balanced trials a scenario, a
trial converging where its heads' summed effects and noise pass a threshold, 40 pools for
each head effect, nil, moderate or dominant): the head-level interval held the difference
one_good - all_bad in every pool and the all-bad share in 93-100% of them; Newcombe's interval
held the difference in 82-93%, Wilson's the share in 35-90%. It is conservative: its SE was
1.2-3.1 times the estimate's spread over pools (3 where heads do nothing), the price of
estimating the head and pair variances from one pool. Checked by hand the same way and not
kept: without the pairs the interval was narrower but held the share in as few as 80% of
pools where heads dominate; a model-free bound (Efron-Stein: the sum over heads of the
squared change when a head's trials are left out) held always but was about 1 wide: one pool
of 20 heads cannot say more without a model.

Why not a bootstrap or permutation over heads: a resample of the 20 bad heads keeps all 8
heads of a trial in about 3% of draws (product of multiplicities), so the resampled
statistic rests on one or two trials; a permutation of the good/bad labels would need the
outcomes of sets that were never trained. The estimand is the scenario's share over new
pools of heads on the same base model and data stream: the paper holds those two fixed (the
reference code trains every K-head model on one base and data seed 0) and so does this
inference (another base or stream is not in the design).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

LEVEL = 0.95
FOUND = ("all_bad", "one_good")  # scenarios whose heads come from the found pools


@dataclass(frozen=True)
class HeadEstimate:
    value: float
    se: float
    df: float
    low: float
    high: float
    trials: int
    heads: int  # distinct heads that two or more trials share: the units the interval rests on
    p_value: float  # two-sided, of value = 0 (t with df)


def _split(trials: pd.DataFrame) -> tuple[list[set], list]:
    """Per trial, its pool heads (not its good head) and its good head (None if none)."""
    pool, good = [], []
    for heads, g, scenario in zip(trials["heads"], trials["good_head"], trials["scenario"]):
        seeds = {int(h) for h in str(heads).split()}
        g = None if pd.isna(g) else int(g)
        pool.append(seeds - {g} if scenario != "random" else seeds)
        good.append(g)
    return pool, good


def _incidence(rows: list[set], mask: np.ndarray) -> dict:
    """head -> 0/1 column over all trials: the trials of ``mask`` that hold it, for the heads
    that two or more of those trials share (a head in one trial is part of that trial's own
    variance: the design cannot tell the two apart)."""
    cols: dict = {}
    for i in np.flatnonzero(mask):
        for h in rows[i]:
            cols.setdefault(h, np.zeros(len(rows)))[i] = 1.0
    return {h: c for h, c in sorted(cols.items()) if c.sum() >= 2}


def components(trials: pd.DataFrame) -> tuple[dict, dict]:
    """name -> V of every variance component the design can estimate ('heads:s' a scenario's
    pool heads, 'cov:s|t' the covariance of a head's effects in two scenarios, 'heads:good'
    the good heads, 'trial:s' a trial's own part); and the shared heads of each pool ('pool':
    the heads the scenarios draw from one pool, 'good': the good heads)."""
    scen = trials["scenario"].to_numpy()
    pool, good = _split(trials)
    out, shared, cols = {}, {"pool": set(), "good": set()}, {}
    for s in dict.fromkeys(scen):
        cols[s] = _incidence(pool, scen == s)
        if cols[s]:
            z = np.column_stack(list(cols[s].values()))
            out[f"heads:{s}"] = zz = z @ z.T
            shared["pool"] |= set(cols[s])
            # two trials that share c heads share c(c-1)/2 pairs: what two heads do together
            # (an interaction) moves both, beyond the sum of what each does alone
            pairs = zz * (zz - 1) / 2 * (scen == s)[:, None] * (scen == s)[None, :]
            if not np.allclose(pairs, np.diag(np.diag(pairs))):  # two trials share a pair
                out[f"pairs:{s}"] = pairs
    # a pool head shared in two scenarios: its effects there may covary
    for s, t in combinations([s for s in cols if cols[s]], 2):
        common = sorted(set(cols[s]) & set(cols[t]))
        if common:
            zs = np.column_stack([cols[s][h] for h in common])
            zt = np.column_stack([cols[t][h] for h in common])
            out[f"cov:{s}|{t}"] = zs @ zt.T + zt @ zs.T
    gcols = _incidence([{g} if g is not None else set() for g in good], np.ones(len(good), bool))
    if gcols:
        z = np.column_stack(list(gcols.values()))
        out["heads:good"] = z @ z.T
        shared["good"] |= set(gcols)
    for s in dict.fromkeys(scen):
        out[f"trial:{s}"] = np.diag((scen == s).astype(float))
    return out, shared


def _cut(theta: dict) -> dict:
    """Variances below 0 set to 0; a covariance cut to +- the root of its two variances."""
    out = {k: max(v, 0.0) for k, v in theta.items() if not k.startswith("cov:")}
    for k, v in theta.items():
        if k.startswith("cov:"):
            s, t = k[4:].split("|")
            bound = np.sqrt(out.get(f"heads:{s}", 0.0) * out.get(f"heads:{t}", 0.0))
            out[k] = float(np.clip(v, -bound, bound))
    return out


def reml(y: np.ndarray, x: np.ndarray, comps: dict, iterations: int = 100, tol: float = 1e-6) -> dict:
    """REML estimates of the components' variances and covariances (iterated MINQUE: each
    step solves tr(P V_l P V_k) theta_k = y' P V_l P y at the last step's V, from MINQUE(0)'s
    identity), each step cut to a valid covariance (``_cut``)."""
    names = list(comps)
    scale = float(np.var(y)) or 1.0
    floor = 1e-6 * scale  # a trial part of exactly 0 (every trial alike) leaves V singular
    theta = {k: (scale if k.startswith("trial:") else 0.0) for k in names}
    for _ in range(iterations):
        v = sum(max(theta[k], floor) * comps[k] if k.startswith("trial:") else theta[k] * comps[k] for k in names)
        vi = np.linalg.inv(v)
        vix = vi @ x
        p = vi - vix @ np.linalg.solve(x.T @ vix, vix.T)
        pv = [p @ comps[k] for k in names]
        gram = np.array([[np.sum(a * b.T) for b in pv] for a in pv])
        py = p @ y
        q = np.array([py @ comps[k] @ py for k in names])
        new = _cut(dict(zip(names, np.linalg.lstsq(gram, q, rcond=None)[0])))
        if max(abs(new[k] - theta[k]) for k in names) < tol * scale:
            return new
        theta = new
    return theta


def head_level(trials: pd.DataFrame, value: str, weights: dict, level: float = LEVEL) -> HeadEstimate:
    """sum_s weights[s] * (mean of ``value`` over scenario s's trials), its SE under the
    multiple-membership model (module docstring) and its t interval on the heads' degrees of
    freedom (``degrees_of_freedom``). NaN interval where the design cannot estimate the
    components (too few trials or shared heads) or their variance is 0 (every trial alike)."""
    rows = trials[trials["scenario"].isin(list(weights)) & trials[value].notna()].reset_index(drop=True)
    y = rows[value].astype(float).to_numpy()
    scen = rows["scenario"].to_numpy()
    nan = float("nan")
    if not all((scen == s).any() for s in weights):
        return HeadEstimate(nan, nan, nan, nan, nan, len(rows), 0, nan)
    w = np.array([weights[s] / (scen == s).sum() for s in scen])
    estimate = float(sum(c * y[scen == s].mean() for s, c in weights.items()))
    comps, shared = components(rows)
    units = len(shared["pool"]) + len(shared["good"])
    df = degrees_of_freedom(shared, len(y) - len(weights))
    names = list(comps)
    x = (scen[:, None] == np.array(list(weights))[None, :]).astype(float)
    m = np.eye(len(y)) - x @ np.linalg.pinv(x)  # off the scenario means
    mv = [m @ comps[k] @ m for k in names]
    gram = np.array([[np.sum(a * b.T) for b in mv] for a in mv])
    if all(np.ptp(y[scen == s]) == 0 for s in weights):  # every trial alike: no spread to measure
        return HeadEstimate(estimate, 0.0, df, nan, nan, len(rows), units, nan)
    if not df >= 1 or len(y) - x.shape[1] < len(names) or np.linalg.matrix_rank(gram) < len(names):
        return HeadEstimate(estimate, nan, nan, nan, nan, len(rows), units, nan)
    theta = reml(y, x, comps)
    var = float(sum(theta[k] * (w @ comps[k] @ w) for k in names))
    if not var > 0:
        return HeadEstimate(estimate, 0.0, df, nan, nan, len(rows), units, nan)
    se = float(np.sqrt(var))
    half = stats.t.ppf(0.5 + level / 2, df) * se
    p = float(2 * stats.t.sf(abs(estimate) / se, df))
    return HeadEstimate(estimate, se, df, estimate - half, estimate + half, len(rows), units, p)


def degrees_of_freedom(shared: dict, residual: int) -> float:
    """The interval's degrees of freedom: one less than the fewest heads of a pool that trials
    share (20 bad heads: 19), as the head variance rests on that many heads; where no trials
    share a head, the trials' own (``residual``: trials less scenarios), the t interval's. A
    Satterthwaite count from REML's information was tried: it collapsed towards 1 where the
    head variance is estimated near 0 (a boundary), giving intervals wider than [-1, 1]."""
    sizes = [len(h) for h in shared.values() if h]
    return float(min(min(sizes) - 1, residual)) if sizes else float(residual)
