"""The controlled experiments' numbers with 95% intervals (docs/experiments.md).

Every summary is a long frame, one row per (group, quantity): ``value``, ``low``,
``high``, ``n`` and ``interval``, the kind of interval:

- ``wilson``: a share of runs (converged seeds or trials), k of n, with the Wilson
  score interval. The shares here are often 0 or 1 of a few runs, where the normal
  (Wald) interval shrinks to a point; Wilson's does not.
- ``t``: a mean over runs (steps to converge over the converged runs, final
  accuracies, log-odds) with the t interval of the mean, NaN below two runs. Where the
  quantity is bounded (an accuracy in [0, 1], steps within the run) the interval is cut
  to the bounds, which the mean cannot leave: with a few runs split between
  converging and failing, the t interval of an accuracy would reach past 1.
- ``heads`` (a share: ``heads_share``): a multi-head scenario whose trials draw their heads
  from one pool of found heads (all_bad, one_good): the mean over its trials with the
  interval whose unit is the head (``head_inference``: trials that share a head are not
  independent), cut to the bounds like ``t``. The random scenario's trials share no head and
  keep ``wilson`` and ``t``.

The library is apart from the experiments' training code, so that the rules that only
summarise rerun when it changes, not the trainings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.experiments.head_inference import head_level
from attnlearn.statistics import holm, t_interval, wilson

COLUMNS = ["quantity", "value", "low", "high", "n", "interval"]
KEYWORD_QUANTITIES = ("accuracy", "keyword", "after", "uniform", "last")  # keyword.py's log-odds and accuracy


def share_row(quantity: str, k: int, n: int) -> dict:
    low, high = wilson(k, n)
    return {"quantity": quantity, "value": k / n if n else float("nan"), "low": low, "high": high, "n": n,
            "interval": "wilson"}


def mean_row(quantity: str, values, bounds=(-np.inf, np.inf)) -> dict:
    """The mean of ``values`` with its t interval, cut to ``bounds``."""
    mean, low, high, n = t_interval(values)
    low, high = (float(np.clip(v, *bounds)) for v in (low, high))
    return {"quantity": quantity, "value": mean, "low": low, "high": high, "n": n, "interval": "t"}


def last_evaluations(table: pd.DataFrame, keys: list) -> pd.DataFrame:
    """Each run's final evaluation."""
    return table.sort_values("step", kind="stable").groupby(keys, sort=False).tail(1)


def run_intervals(table: pd.DataFrame, group: str, member: str) -> pd.DataFrame:
    """Per ``group`` (copy distribution, multi-head scenario) over its runs (``member``: seed,
    trial): the converged share, steps to converge over the converged runs, and the final
    token and attention accuracies."""
    rows = []
    for name, runs in last_evaluations(table, [group, member]).groupby(group, sort=False):
        done = runs[runs["converged"].astype(bool)]
        rows += [{group: name, **r} for r in (
            share_row("converged", len(done), len(runs)),
            mean_row("steps_to_converge", done["steps_to_converge"], (0, runs["step"].max())),
            mean_row("final_token_acc", runs["token_acc"], (0, 1)),
            mean_row("final_attn_acc", runs["attn_acc"], (0, 1)))]
    return pd.DataFrame(rows, columns=[group, *COLUMNS])


def copying_intervals(table: pd.DataFrame) -> pd.DataFrame:
    return run_intervals(table, "task", "seed")


FOUND = ("all_bad", "one_good")  # multi-head scenarios whose heads come from the found pools


def multihead_trials(table: pd.DataFrame) -> pd.DataFrame:
    """One row per trial of a multihead table (its last evaluation), with ``good_head``: the
    table's own column, or for a table written before that column existed the one-good trial's last
    head, where the draw put it."""
    last = last_evaluations(table, ["scenario", "trial"]).reset_index(drop=True)
    if "good_head" not in last:
        # a table with no heads column (the random scenario alone) has no one-good trial to read
        heads = last["heads"] if "heads" in last else [None] * len(last)
        good = [int(str(h).split()[-1]) if s == "one_good" and h is not None else None
                for s, h in zip(last["scenario"], heads)]
        last = last.assign(good_head=pd.array(good, dtype="Int64"))
    return last


def head_row(quantity: str, trials: pd.DataFrame, column: str, weights: dict, bounds=(-np.inf, np.inf)) -> dict:
    est = head_level(trials, column, weights)
    low, high = (float(np.clip(v, *bounds)) for v in (est.low, est.high))
    return {"quantity": quantity, "value": est.value, "low": low, "high": high, "n": est.trials,
            "interval": "heads_share" if quantity == "converged" else "heads"}


def multihead_intervals(table: pd.DataFrame) -> pd.DataFrame:
    """Per scenario: as ``run_intervals`` for the random one (fresh heads: independent trials);
    for all_bad and one_good, whose trials share the found heads, each number's interval has
    the head as its unit (``head_level``)."""
    trials = multihead_trials(table)
    trials = trials.assign(converged=trials["converged"].astype(float),
                           done_steps=trials["steps_to_converge"].where(trials["converged"] == 1))
    rows = []
    for scenario, runs in trials.groupby("scenario", sort=False):
        if scenario not in FOUND:
            rows += run_intervals(table[table["scenario"] == scenario], "scenario", "trial").to_dict("records")
            continue
        at = {scenario: 1.0}
        rows += [{"scenario": scenario, **r} for r in (
            head_row("converged", trials, "converged", at, (0, 1)),
            head_row("steps_to_converge", trials, "done_steps", at, (0, runs["step"].max())),
            head_row("final_token_acc", trials, "token_acc", at, (0, 1)),
            head_row("final_attn_acc", trials, "attn_acc", at, (0, 1)))]
    return pd.DataFrame(rows, columns=["scenario", *COLUMNS])


# the paper's multi-head contrasts (5.2): one good head rescues a model of bad heads; so do
# random heads. One family: Holm over both.
CONTRASTS = (("one_good", "all_bad"), ("random", "all_bad"))
TEST_COLUMNS = ["contrast", "converged_a", "trials_a", "converged_b", "trials_b", "difference", "low", "high", "se",
                "df", "heads", "p_value", "p_holm", "test"]


def multihead_tests(table: pd.DataFrame) -> pd.DataFrame:
    """Each contrast's converged shares and their difference with its 95% interval and
    two-sided p, the head as the unit (``head_level``: the all-bad and one-good trials share
    the found heads, within and between the two scenarios), and the p values Holm-adjusted
    over the family of contrasts run."""
    trials = multihead_trials(table)
    trials = trials.assign(converged=trials["converged"].astype(float))
    rows = []
    for a, b in CONTRASTS:
        runs = {s: trials.loc[trials["scenario"] == s, "converged"] for s in (a, b)}
        if runs[a].empty or runs[b].empty:
            continue
        est = head_level(trials, "converged", {a: 1.0, b: -1.0})
        rows.append({"contrast": f"{a} - {b}", "converged_a": int(runs[a].sum()), "trials_a": len(runs[a]),
                     "converged_b": int(runs[b].sum()), "trials_b": len(runs[b]), "difference": est.value,
                     "low": max(est.low, -1.0), "high": min(est.high, 1.0), "se": est.se, "df": est.df,
                     "heads": est.heads, "p_value": est.p_value, "test": "head_level_t"})
    out = pd.DataFrame(rows, columns=[c for c in TEST_COLUMNS if c != "p_holm"])
    return out.assign(p_holm=holm(out["p_value"]))[TEST_COLUMNS]


def head_sharing(table: pd.DataFrame) -> pd.DataFrame:
    """Per scenario of found heads: its trials, the distinct heads they drew, and the fewest and
    most trials one head served (trials that share heads are not independent draws of heads)."""
    rows = []
    for scenario, runs in table.drop_duplicates(["scenario", "trial"]).groupby("scenario", sort=False):
        if scenario == "random":  # fresh heads each trial: nothing shared
            continue
        uses = pd.Series([h for heads in runs["heads"] for h in str(heads).split()]).value_counts()
        rows.append({"scenario": scenario, "trials": len(runs), "heads": len(uses), "fewest_uses": int(uses.min()),
                     "most_uses": int(uses.max())})
    return pd.DataFrame(rows, columns=["scenario", "trials", "heads", "fewest_uses", "most_uses"])


def tests_markdown(tests: pd.DataFrame, sharing: pd.DataFrame) -> str:
    """The contrasts as a Markdown table, and how often the trials reused each found head."""
    lines = ["| contrast | converged | difference [95% interval, heads as units] | df | p | Holm p |",
             "|---|---|---|---|---|---|"]
    for r in tests.itertuples(index=False):
        if pd.isna(r.low):  # too few trials or heads for the design to give an interval
            interval, df, p, p_holm = "", "-", "-", "-"
        else:
            interval, df, p, p_holm = f" [{r.low:+.3f}, {r.high:+.3f}]", f"{r.df:.0f}", f"{r.p_value:.3g}", f"{r.p_holm:.3g}"
        lines.append(f"| {r.contrast} | {r.converged_a}/{r.trials_a} vs {r.converged_b}/{r.trials_b} | "
                     f"{r.difference:+.3f}{interval} | {df} | {p} | {p_holm} |")
    notes = [f"{r.scenario}: {count(r.trials, 'trial')} drew {count(r.heads, 'distinct head')}, each in "
             + (f"{r.fewest_uses}" if r.fewest_uses == r.most_uses else f"{r.fewest_uses}-{r.most_uses}")
             + (" trial" if r.most_uses == 1 else " trials") for r in sharing.itertuples(index=False)]
    return "\n".join(lines) + "\n" + ("\nHeads shared between trials: " + "; ".join(notes) + ".\n" if notes else "")


def count(n: int, noun: str) -> str:
    """"1 trial", "3 trials"."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def keyword_steps(steps) -> list:
    """The steps the keyword summary shows: the first few, the middle and the last."""
    steps = sorted(set(steps))
    return sorted({steps[min(i, len(steps) - 1)] for i in (0, 1, 2, 4, len(steps) // 2, len(steps) - 1)})


def keyword_intervals(keyword: pd.DataFrame) -> pd.DataFrame:
    """Accuracy and the four log-odds on positives at ``keyword_steps``, over seeds, and the
    paired gap last - keyword (the paper: the last position's log-odds ends the largest)."""
    picked = keyword[keyword["step"].isin(keyword_steps(keyword["step"]))]
    rows = []
    for step, at in picked.groupby("step"):
        rows += [{"step": step, **mean_row(q, at[q], (0, 1) if q == "accuracy" else (-np.inf, np.inf))}
                 for q in KEYWORD_QUANTITIES]
        rows.append({"step": step, **mean_row("last_minus_keyword", at["last"] - at["keyword"])})
    return pd.DataFrame(rows, columns=["step", *COLUMNS])


def wide(long: pd.DataFrame, group: str) -> pd.DataFrame:
    """One row per group: ``q``, ``q_low``, ``q_high`` per quantity, and ``n`` of the first
    quantity (the runs: seeds or trials)."""
    out = long.drop_duplicates(group)[[group, "n"]].set_index(group)
    for q, rows in long.groupby("quantity", sort=False):
        r = rows.set_index(group)
        out = out.assign(**{q: r["value"], f"{q}_low": r["low"], f"{q}_high": r["high"]})
    return out.reset_index()


def band(table: pd.DataFrame, group: str, metric: str, bounds=(-np.inf, np.inf)) -> pd.DataFrame:
    """Per group and step, the mean of ``metric`` over runs with its t interval cut to
    ``bounds`` (a figure's band)."""
    rows = [{group: name, "step": step, **mean_row(metric, at[metric], bounds)}
            for (name, step), at in table.groupby([group, "step"], sort=False)]
    return pd.DataFrame(rows, columns=[group, "step", *COLUMNS])


def cell(row, digits: int = 3) -> str:
    """``value [low, high]``; the value alone where there is no interval."""
    if pd.isna(row["value"]):
        return "-"
    text = f"{row['value']:.{digits}f}"
    if row["interval"] in ("wilson", "heads_share"):
        text = f"{round(row['value'] * row['n'])}/{row['n']} = {text}"
    return text if pd.isna(row["low"]) else f"{text} [{row['low']:.{digits}f}, {row['high']:.{digits}f}]"


DIGITS = {"steps_to_converge": 0, "keyword": 2, "after": 2, "uniform": 2, "last": 2, "last_minus_keyword": 2}


def markdown(long: pd.DataFrame, group: str) -> str:
    """A Markdown table, one row per group: its runs, then each quantity as ``value [95%
    interval]`` (shares as k/n = share)."""
    quantities = list(dict.fromkeys(long["quantity"]))
    lines = ["| " + " | ".join([group, "n", *quantities]) + " |", "|" + "---|" * (len(quantities) + 2)]
    for name, rows in long.groupby(group, sort=False):
        by_q = rows.set_index("quantity")
        cells = [cell(by_q.loc[q], DIGITS.get(q, 3)) for q in quantities]
        lines.append("| " + " | ".join([str(name), str(rows["n"].iloc[0]), *cells]) + " |")
    return "\n".join(lines) + "\n"
