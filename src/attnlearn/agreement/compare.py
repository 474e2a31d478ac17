"""Which measures are compared with which (docs/methods.md section 5).

Run roles: A = the first standard seed (alpha*, g* at its best checkpoint),
B = the other standard seeds, U = the first uniform seed, F = the first
frozen seed, T = the first tanhmax seed (used by the TanhMax analysis only);
P = the proxy model (xi^px and the count-table alignment);
G = the gold links of synthetic data; M = IBM Model 1 fitted by EM (its
alignment posteriors, translation only).

Table 2's replicates (docs/methods.md 5) give these roles to other seeds in turn:
replicate r takes A_r, U_r and proxy P_r from the config's seed lists
(``replicate_design``), and only Table 2's comparisons are made for it, with Table 10's
where the replicate has a frozen run F_r of its own.
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd
import pyarrow as pa

from attnlearn.agreement.metric import Resample, computed_steps, load_measure, summarize
from attnlearn.probing.best import best_step, primary  # noqa: F401  (the scripts import them from here)

ROLES = ("A", "B", "U", "F", "T", "P", "G", "M")


def run_roles(runs: list[str]) -> dict[str, str]:
    """Role of each run name ("standard-s1" etc.), from the order in config."""
    roles: dict[str, str] = {}
    for run in runs:
        variant = run.split("-s")[0]
        if variant == "standard":
            roles[run] = "B" if "A" in roles.values() else "A"
        elif variant in ("additive", "donor"):
            continue  # additive: compared with its own optimal attention only (optimal_table.py); donor: never probed
        elif (role := {"uniform": "U", "frozen": "F", "tanhmax": "T"}[variant]) not in roles.values():
            roles[run] = role  # later uniform/frozen seeds take no role
    return roles


class Measures:
    """Probe tables by run name, each measure at each step loaded once, and each comparison
    summarised once: the replicates of a dataset share runs (crossed: every A with every U)."""

    def __init__(self, probes: dict[str, pa.Table], resample: Resample | None = None):
        self.probes, self.resample = probes, resample
        self.load = lru_cache(maxsize=None)(lambda name, run, step: load_measure(self.probes[run], name, step))
        self.summary = lru_cache(maxsize=None)(
            lambda a, b, metrics: summarize(self.load(*a), self.load(*b), metrics, self.resample))
        self.steps = lru_cache(maxsize=None)(lambda run: sorted(set(self.probes[run]["step"].to_pylist())))
        self.computed = lru_cache(maxsize=None)(lambda run, name: computed_steps(self.probes[run], name))


class Comparator:
    def __init__(self, dataset: str, probes: dict[str, pa.Table], perf: dict[str, pd.DataFrame],
                 proxy: pa.Table | None = None, gold: pa.Table | None = None, ibm1: pa.Table | None = None,
                 roles: dict[str, str] | None = None, measures: Measures | None = None):
        """``roles``: run name -> role, for runs (proxies included) outside the default order;
        ``measures``: a cache shared with other comparators of the same probe tables."""
        self.dataset, self.probes, self.perf = dataset, dict(probes), perf
        self.roles = dict(roles) if roles is not None else run_roles(list(probes))
        if proxy is not None:
            self.probes["proxy"], self.roles["proxy"] = proxy, "P"
        if gold is not None:
            self.probes["gold"], self.roles["gold"] = gold, "G"
        if ibm1 is not None:
            self.probes["ibm1"], self.roles["ibm1"] = ibm1, "M"
        self.rows: list[dict] = []
        self.measures = measures or Measures(self.probes)
        self.load = self.measures.load

    def runs(self, role):
        return [r for r, ro in self.roles.items() if ro == role]

    def steps(self, run):
        return self.measures.steps(run)

    def add(self, a: tuple, b: tuple, metrics=("agreement", "kendall_tau")):
        """a, b = (measure, run, step); one row per metric."""
        if a[0] not in self.probes[a[1]].column_names or b[0] not in self.probes[b[1]].column_names:
            return
        for row in self.measures.summary(a, b, tuple(metrics)):
            self.rows.append({"dataset": self.dataset,
                              "a_measure": a[0], "a_run": a[1], "a_role": self.roles[a[1]], "a_step": a[2],
                              "b_measure": b[0], "b_run": b[1], "b_role": self.roles[b[1]], "b_step": b[2],
                              **row})

    def over(self, a: tuple, measure: str, run: str, **kw):
        for step in self.steps(run):
            self.add(a, (measure, run, step), **kw)

    def logreg(self) -> str | None:
        """The run whose probe holds xi_lr: the dataset's one L2 logistic regression (Table 11),
        deterministic, fitted by the first proxy seed's job (workflow/scripts/proxy.py). A proxy
        run (P) or, in a replicate with another proxy, the same run in role L (replicate_frame)."""
        return next((r for r in self.runs("P") + self.runs("L") if "xi_lr" in self.probes[r].column_names), None)

    def star(self, metric: str | None = None) -> tuple[str, int]:
        """Run A and alpha*'s step (its best validation checkpoint, by ``metric`` if given)."""
        (a_run,) = self.runs("A")
        return a_run, best_step(self.perf[a_run], metric)

    def table2(self, metrics=("agreement", "kendall_tau"), star_metric: str | None = None) -> pd.DataFrame:
        """The comparisons Table 2 (and Table 11) read: alpha* and g* against every uniform
        checkpoint, the proxy's measures against them, alpha* against the B runs. With
        ``star_metric`` alpha* is picked by that metric (the BLEU variant)."""
        a_run, star = self.star(star_metric)
        alpha_star, grad_star = ("alpha", a_run, star), ("grad", a_run, star)
        lr = self.logreg()
        for u in self.runs("U"):
            self.over(alpha_star, "xi", u, metrics=metrics)
            self.over(grad_star, "xi", u, metrics=metrics)
            for p in self.runs("P"):
                self.over(("xi_px", p, self.steps(p)[0]), "xi", u, metrics=metrics)
                self.over(("count", p, self.steps(p)[0]), "xi", u, metrics=metrics)
                if p == lr:
                    self.over(("xi_lr", p, self.steps(p)[0]), "xi", u, metrics=metrics)  # Table 11 (classification)
            if lr is not None and self.roles[lr] == "L":  # a replicate whose own proxy did not fit it
                self.over(("xi_lr", lr, self.steps(lr)[0]), "xi", u, metrics=metrics)
        for b in self.runs("B"):
            self.over(alpha_star, "xi", b, metrics=metrics)
            self.over(alpha_star, "alpha", b, metrics=metrics)
        return pd.DataFrame(self.rows)

    def table10(self, metrics=("agreement", "kendall_tau")) -> pd.DataFrame:
        """The comparisons Table 10 reads: what frozen attention and the uniform probe say
        about alpha*, every checkpoint of the F and U runs against alpha*."""
        a_run, star = self.star()
        alpha_star = ("alpha", a_run, star)
        for f in self.runs("F"):
            for step in self.steps(f):
                self.add(("alpha", f, step), alpha_star, metrics)
        for u in self.runs("U"):
            for step in self.steps(u):
                self.add(("xi", u, step), alpha_star, metrics)
        return pd.DataFrame(self.rows)

    def build(self) -> pd.DataFrame:
        self.table2()
        a_perf = self.perf[self.star()[0]]
        if (a_perf["metric"] == "bleu").any() and self.star("bleu") != self.star():
            self.table2(star_metric="bleu")  # the BLEU variant's alpha*, at run A's best-BLEU step
        self.table10()
        a_run, star = self.star()
        alpha_star = ("alpha", a_run, star)
        # IBM Model 1 (docs/methods.md 7): its alignments against alpha* (both orders) and xi^uf
        for m in self.runs("M"):
            ibm1 = ("ibm1", m, self.steps(m)[0])
            self.add(alpha_star, ibm1)
            self.add(ibm1, alpha_star)
            for u in self.runs("U"):
                self.over(ibm1, "xi", u)
        # norm-based attention of run A (docs/methods.md 9) against alpha*, xi^uf and (below) the gold links
        norm_star = ("norm", a_run, star)
        self.add(norm_star, alpha_star)
        for u in self.runs("U"):
            self.over(norm_star, "xi", u)
        for g in self.runs("G"):
            gold = ("gold", g, 0)
            metrics = ("agreement", "gold_hit")
            norm_at = self.measures.computed(a_run, "norm")  # where the probe computed it (probe.at_best)
            for step in self.steps(a_run):
                self.add(("alpha", a_run, step), gold, metrics)
                if step in norm_at:
                    self.add(("norm", a_run, step), gold, metrics)
            for u in self.runs("U"):
                for step in self.steps(u):
                    self.add(("xi", u, step), gold, metrics)
            for p in self.runs("P"):
                for m in ("xi_px", "count"):
                    self.add((m, p, self.steps(p)[0]), gold, metrics)
            for m in self.runs("M"):
                self.add(("ibm1", m, self.steps(m)[0]), gold, metrics)
        return pd.DataFrame(self.rows)


DESIGNS = ("rotate", "crossed", "factorial")


def replicate_design(standard: list[str], uniform: list[str], proxies: list[str], design: str = "rotate",
                     xi_standard: str = "first", frozen: list[str] = ()) -> list[dict]:
    """Table 2's replicates from the seed lists, in config order.

    rotate: replicate r has A = standard[r], U = uniform[r], P = proxies[r], for r below the
    shortest list; crossed: every standard run as A with every uniform run as U (P follows U's
    index, cycling); factorial: every A with every U with every P, each role an index of its
    own, so that the variance splits into A's, U's and P's shares (replicates.variance_table).
    B is every other standard run, from the one after A on (cyclically); ``xi_b_run`` the one
    A(alpha*, xi^B) reads (None: their mean). ``independent`` marks the replicates that share
    no A, U or P run with each other (all of rotate, the diagonal of crossed and factorial):
    the intervals of the mean are computed over those. ``f_run``: the replicate's frozen run
    (Table 10's F, compared with its own alpha*), frozen[i] for the replicate whose A is
    standard[i] (rotate: the r-th frozen run is replicate r's); None past the frozen list, and
    the frozen list never limits the replicates."""
    if design not in DESIGNS:
        raise ValueError(f"tables.design: {design!r} is not one of {DESIGNS}")
    n = min(len(standard), len(uniform), len(proxies))
    if design == "rotate":
        cells = [(r, r, r) for r in range(n)]
    elif design == "crossed":
        cells = [(i, j, j % len(proxies)) for i in range(len(standard)) for j in range(len(uniform))]
    else:
        cells = [(i, j, k) for i in range(len(standard)) for j in range(len(uniform)) for k in range(len(proxies))]
    out = []
    for number, (i, j, k) in enumerate(cells, 1):
        b_runs = standard[i + 1:] + standard[:i]
        out.append({"replicate": number, "a_run": standard[i], "u_run": uniform[j], "p_run": proxies[k],
                    "b_runs": b_runs, "xi_b_run": b_runs[0] if xi_standard == "first" and b_runs else None,
                    "f_run": frozen[i] if i < len(frozen) else None, "independent": i == j == k and i < n})
    return out


def shares_b(a_runs, b_runs) -> list[bool]:
    """Whether each replicate (its A run, its B runs) reads as B a run that is another
    replicate's A (the rotate design; a paper_row.py --parts block): its B columns are then not
    independent of the others'."""
    a_all = set(a_runs)
    return [bool(set(b) & (a_all - {a})) for a, b in zip(a_runs, b_runs)]


def without_shared_b(design: list[dict]) -> list[dict]:
    """The design with no B run in a replicate whose B runs are other replicates' A runs
    (``shares_b``): a pool leaves their B columns out (replicates.shared_b). The Kendall
    replicates use it: their B comparisons, every B run at every checkpoint, were about 80% of
    an SMS spam block's agreement job (1 min 46 s -> 14 min 7 s with them)."""
    shared = shares_b([r["a_run"] for r in design], [r["b_runs"] for r in design])
    return [{**r, "b_runs": [], "xi_b_run": None} if s else r for r, s in zip(design, shared)]


def replicate_roles(rep: dict) -> dict[str, str]:
    """Run name -> role within one replicate (F where it has a frozen run)."""
    frozen = {rep["f_run"]: "F"} if rep.get("f_run") else {}
    return {rep["a_run"]: "A", **{b: "B" for b in rep["b_runs"]}, rep["u_run"]: "U", rep["p_run"]: "P", **frozen}


def replicate_frame(dataset: str, probes: dict[str, pa.Table], perf: dict[str, pd.DataFrame],
                    design: list[dict], resample: Resample | None = None,
                    metrics: tuple[str, ...] = ("agreement",)) -> pd.DataFrame:
    """Table 2's comparisons once per replicate (agreement; ``metrics=("kendall_tau",)`` the
    appendix's Kendall's tau), with a ``replicate`` column and the roles of that replicate, and
    Table 10's where the replicate has a frozen run (``f_run``) and Table 11's (the dataset's one
    logistic regression, role L where the replicate's proxy is another); ``boot`` holds each
    agreement value under the example resamples."""
    measures = Measures(probes, resample)
    logreg = next((r for r, t in probes.items() if "xi_lr" in t.column_names), None)
    frames = []
    for rep in design:
        roles = replicate_roles(rep)
        if logreg is not None:  # Table 11 in every replicate: the one logistic regression against its own U
            roles.setdefault(logreg, "L")
        comp = Comparator(dataset, {r: probes[r] for r in roles}, {r: perf[r] for r in roles if r in perf},
                          roles=roles, measures=measures)
        comp.table2(metrics=metrics)
        if rep.get("f_run"):
            comp.table10(metrics=metrics)
        frames.append(pd.DataFrame(comp.rows).assign(replicate=rep["replicate"]))
    return pd.concat(frames, ignore_index=True)


def performance_frame(dataset: str, perf: dict[str, pd.DataFrame]) -> pd.DataFrame:
    roles = run_roles(list(perf))
    frames = [df.assign(dataset=dataset, run=run, role=roles.get(run, "-")) for run, df in perf.items()]
    return pd.concat(frames, ignore_index=True)[["dataset", "run", "role", "step", "metric", "value"]]
