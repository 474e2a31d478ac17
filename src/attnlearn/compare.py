"""Which measures are compared with which (docs/methods.md section 5).

Run roles: A = the first standard seed (alpha*, g* at its best checkpoint),
B = the other standard seeds, U = the first uniform seed, F = the first
frozen seed, T = the first tanhmax seed (used by the TanhMax analysis only);
P = the proxy model (xi^px and the count-table alignment);
G = the gold links of synthetic data; M = IBM Model 1 fitted by EM (its
alignment posteriors, translation only).
"""

from __future__ import annotations

from functools import lru_cache

import pandas as pd
import pyarrow as pa

from .agreement import load_measure, summarize

ROLES = ("A", "B", "U", "F", "T", "P", "G", "M")


def run_roles(runs: list[str]) -> dict[str, str]:
    """Role of each run name ("standard-s1" etc.), from the order in config."""
    roles: dict[str, str] = {}
    for run in runs:
        variant = run.split("-s")[0]
        if variant == "standard":
            roles[run] = "B" if "A" in roles.values() else "A"
        elif (role := {"uniform": "U", "frozen": "F", "tanhmax": "T"}[variant]) not in roles.values():
            roles[run] = role  # later uniform/frozen seeds take no role
    return roles


def primary(perf: pd.DataFrame) -> pd.DataFrame:
    """The rows of the task's own metric (token accuracy or accuracy), without BLEU."""
    return perf[perf["metric"] != "bleu"]


def best_step(perf: pd.DataFrame) -> int:
    """Checkpoint with the best validation performance by the task's own metric (the earliest
    on ties): this picks alpha* in every table, the BLEU variant included."""
    perf = primary(perf)
    return int(perf.loc[perf["value"].idxmax(), "step"])


class Comparator:
    def __init__(self, dataset: str, probes: dict[str, pa.Table], perf: dict[str, pd.DataFrame],
                 proxy: pa.Table | None = None, gold: pa.Table | None = None, ibm1: pa.Table | None = None):
        self.dataset, self.probes, self.perf = dataset, dict(probes), perf
        self.roles = run_roles(list(probes))
        if proxy is not None:
            self.probes["proxy"], self.roles["proxy"] = proxy, "P"
        if gold is not None:
            self.probes["gold"], self.roles["gold"] = gold, "G"
        if ibm1 is not None:
            self.probes["ibm1"], self.roles["ibm1"] = ibm1, "M"
        self.rows: list[dict] = []
        self.load = lru_cache(maxsize=None)(self._load)

    def _load(self, name, run, step):
        return load_measure(self.probes[run], name, step)

    def runs(self, role):
        return [r for r, ro in self.roles.items() if ro == role]

    def steps(self, run):
        return sorted(set(self.probes[run]["step"].to_pylist()))

    def add(self, a: tuple, b: tuple, metrics=("agreement", "kendall_tau")):
        """a, b = (measure, run, step); one row per metric."""
        if a[0] not in self.probes[a[1]].column_names or b[0] not in self.probes[b[1]].column_names:
            return
        for row in summarize(self.load(*a), self.load(*b), metrics):
            self.rows.append({"dataset": self.dataset,
                              "a_measure": a[0], "a_run": a[1], "a_role": self.roles[a[1]], "a_step": a[2],
                              "b_measure": b[0], "b_run": b[1], "b_role": self.roles[b[1]], "b_step": b[2],
                              **row})

    def over(self, a: tuple, measure: str, run: str, **kw):
        for step in self.steps(run):
            self.add(a, (measure, run, step), **kw)

    def build(self) -> pd.DataFrame:
        (a_run,) = self.runs("A")
        star = best_step(self.perf[a_run])
        alpha_star, grad_star = ("alpha", a_run, star), ("grad", a_run, star)
        for u in self.runs("U"):
            self.over(alpha_star, "xi", u)
            self.over(grad_star, "xi", u)
            for p in self.runs("P"):
                self.over(("xi_px", p, self.steps(p)[0]), "xi", u)
                self.over(("count", p, self.steps(p)[0]), "xi", u)
                self.over(("xi_lr", p, self.steps(p)[0]), "xi", u)  # Table 11 (classification)
        for b in self.runs("B"):
            self.over(alpha_star, "xi", b)
            self.over(alpha_star, "alpha", b)
        # Table 10: what frozen attention and the uniform probe say about alpha*
        for f in self.runs("F"):
            for step in self.steps(f):
                self.add(("alpha", f, step), alpha_star)
        for u in self.runs("U"):
            for step in self.steps(u):
                self.add(("xi", u, step), alpha_star)
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
            for step in self.steps(a_run):
                self.add(("alpha", a_run, step), gold, metrics)
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


def performance_frame(dataset: str, perf: dict[str, pd.DataFrame]) -> pd.DataFrame:
    roles = run_roles(list(perf))
    frames = [df.assign(dataset=dataset, run=run, role=roles.get(run, "-")) for run, df in perf.items()]
    return pd.concat(frames, ignore_index=True)[["dataset", "run", "role", "step", "metric", "value"]]
