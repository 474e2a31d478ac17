"""The multi-head rescue (paper 5.2, Figure 6; docs/methods.md 8).

Rejection sampling of single-head initialisations on one fixed base model (every
parameter but the head, seed ``base_seed``): a head is good if training from it
reaches ``good_acc`` within the steps for every data seed, bad if it ends below
``bad_acc`` for every one. K-head models are then built from K bad heads, K-1 bad
and 1 good head, and K fresh random heads, on the same base, and trained like the
single-head ones. As in the reference code, every K-head model trains on the same
data stream (``combo_data_seed``, by default the first data seed the heads were
classified on), so trials differ only in their heads; and as the heads' contexts are
summed, the trials of a scenario have distinct sets of heads, each head serving about as
many trials as the others (``head_sets``).
"""

from __future__ import annotations

import logging
from collections import Counter
from math import comb

import numpy as np
import pandas as pd
import torch

from attnlearn.experiments.data import CopyTask
from attnlearn.experiments.model import Head, ToySeq2Seq
from attnlearn.experiments.train import CURVE_COLUMNS, build, convergence, train_curve, train_kwargs

log = logging.getLogger(__name__)

MULTIHEAD_COLUMNS = ["scenario", "trial", "heads", "good_head", "step", "loss", "token_acc", "attn_acc",
                     "converged", "steps_to_converge"]
# One row per trial (``trial_table``): what the summary's head-level inference reads, kept as
# the rule's own output so that every multi-head number can be recomputed from it.
TRIAL_COLUMNS = ["scenario", "trial", "heads", "good_head", "base_seed", "data_seed", "steps", "final_loss",
                 "final_token_acc", "final_attn_acc", "converged", "steps_to_converge"]
SCENARIOS = ("all_bad", "one_good", "random")


def random_head(hidden: int, seed: int) -> dict:
    torch.manual_seed(seed)
    with torch.device("cpu"):  # the CPU generator, as build(): the same head on any device
        return Head(hidden).state_dict()


def _model_with_heads(task, model: dict, base: dict, heads: list[dict]) -> ToySeq2Seq:
    with torch.device("cpu"):  # assembled on the CPU; train_curve moves it to its device
        m = ToySeq2Seq(task.n_tokens, **{**model, "heads": len(heads)})
        m.load_state_dict(base, strict=False)
        m.set_heads(heads)
    return m


def classify_head(task, model: dict, base: dict, head: dict, train: dict, data_seeds, good_acc: float,
                  bad_acc: float, device="cpu") -> tuple[str | None, list[float]]:
    """'good' if training from this head reaches ``good_acc`` within the steps for every
    data seed, 'bad' if it ends below ``bad_acc`` for every one, else None (paper 5.2 and
    the reference code: stop at the first seed that disagrees)."""
    status, finals = None, []
    for seed in data_seeds:
        curve = train_curve(_model_with_heads(task, model, base, [head]), task, int(train["steps"]), seed,
                            stop_at=good_acc, device=device, **train_kwargs(train))
        final = float(curve["token_acc"].iloc[-1])
        finals.append(final)
        result = "good" if final >= good_acc else "bad" if final < bad_acc else None
        if result is None or (status is not None and result != status):
            return None, finals
        status = result
    return status, finals


def find_heads(spec: dict, model: dict, train: dict, mh: dict, device="cpu"):
    """Rejection sampling: candidate heads (seeds head_seed, head_seed + 1, ...) on the
    base model (seed base_seed) until ``bad_heads`` bad and ``good_heads`` good ones are
    found or ``max_candidates`` are tried. Returns (base state, good, bad, candidates frame)."""
    task = CopyTask.from_dict(spec)
    base = build(task, {**model, "heads": 1}, mh["base_seed"]).base_state()
    good, bad, rows = [], [], []
    for i in range(mh["max_candidates"]):
        if len(good) >= mh["good_heads"] and len(bad) >= mh["bad_heads"]:
            break
        seed = mh["head_seed"] + i
        head = random_head(model["hidden"], seed)
        label, finals = classify_head(task, model, base, head, train, mh["data_seeds"], mh["good_acc"],
                                      mh["bad_acc"], device)
        if label == "good" and len(good) < mh["good_heads"]:
            good.append((seed, head))
        elif label == "bad" and len(bad) < mh["bad_heads"]:
            bad.append((seed, head))
        rows.append({"head_seed": seed, "label": label or "neither", "final_token_acc": finals})
        log.info("candidate head %d: %s %s", seed, label, finals)
    return base, good, bad, pd.DataFrame(rows, columns=["head_seed", "label", "final_token_acc"])


def _draw(scenario: str, good: list, bad: list, K: int, rng) -> list:
    if scenario == "all_bad":
        return [bad[i] for i in rng.choice(len(bad), K, replace=False)]
    return [bad[i] for i in rng.choice(len(bad), K - 1, replace=False)] + [good[rng.integers(len(good))]]


CANDIDATES = 64  # random sets drawn per trial, of which the balanced draw keeps the least used


def least_used(key: frozenset, used: Counter, good_seeds: set) -> tuple:
    """How used a set's heads are so far: its good head's trials (one_good's few good heads
    spread over its trials), then its most used bad head's, then all its heads' together."""
    good = [used[s] for s in key if s in good_seeds]
    return max(good, default=0), max((used[s] for s in key if s not in good_seeds), default=0), sum(used[s] for s in key)


def head_sets(scenario: str, good: list, bad: list, K: int, trials: int, combo_seed: int,
              draw: str = "balanced") -> list[list]:
    """The found heads of ``trials`` trials of scenario all_bad or one_good: distinct sets,
    drawn from the stream (combo_seed, scenario). The heads' contexts are summed, so a set in
    another order is the same model on the same data: a repeat is drawn again, and a pool with
    fewer distinct sets than trials gives fewer trials (all_bad from K bad heads: one).

    ``draw``: ``random`` keeps each new set as drawn, so some heads serve many more trials than
    others; ``balanced`` (the default) keeps, of ``CANDIDATES`` new sets drawn, the one whose
    heads have served the fewest trials so far (``least_used``), so
    every head serves about trials x K / heads trials: trials share no more heads than the
    pool's size makes them (docs/experiments.md)."""
    if len(bad) < K - (scenario == "one_good") or (scenario == "one_good" and not good):
        return []
    n_sets = comb(len(bad), K) if scenario == "all_bad" else comb(len(bad), K - 1) * len(good)
    rng = np.random.default_rng([combo_seed, SCENARIOS.index(scenario)])
    sets, seen, used, good_seeds = [], set(), Counter(), {seed for seed, _ in good}
    while len(sets) < min(trials, n_sets):
        drawn = {}
        for _ in range(CANDIDATES if draw == "balanced" else 1):
            heads = _draw(scenario, good, bad, K, rng)
            key = frozenset(seed for seed, _ in heads)
            if key not in seen:
                drawn.setdefault(key, heads)
        if not drawn:
            continue
        key = min(drawn, key=lambda k: least_used(k, used, good_seeds))  # the first of ties
        seen.add(key)
        used.update(key)
        sets.append(drawn[key])
    return sets


def scenario_heads(model: dict, mh: dict, good: list, bad: list) -> dict:
    """Scenario -> the (seed, head) lists of its trials; random: K fresh heads a trial."""
    K, trials = mh["heads"], mh["trials"]
    out = {s: head_sets(s, good, bad, K, trials, mh["combo_seed"], mh.get("draw", "balanced"))
           for s in ("all_bad", "one_good")}
    fresh = mh["random_head_seed"] + np.arange(trials * K).reshape(trials, K)
    out["random"] = [[(int(s), random_head(model["hidden"], int(s))) for s in row] for row in fresh]
    for scenario, sets in out.items():
        if len(sets) < trials:
            log.warning("scenario %s: %d trials of %d (%d good and %d bad heads found)", scenario, len(sets), trials,
                        len(good), len(bad))
    return out


def multihead(spec: dict, model: dict, train: dict, mh: dict, base: dict, good: list, bad: list,
              threshold: float, device="cpu") -> pd.DataFrame:
    """Train the K-head models of each scenario, up to ``trials`` each (``scenario_heads``), all
    on the data stream ``combo_data_seed``."""
    task = CopyTask.from_dict(spec)
    sets, frames = scenario_heads(model, mh, good, bad), []
    good_seeds = {seed for seed, _ in good}
    for trial in range(mh["trials"]):
        for scenario in SCENARIOS:
            if trial >= len(sets[scenario]):
                continue
            seeds, heads = zip(*sets[scenario][trial])
            curve = train_curve(_model_with_heads(task, model, base, list(heads)), task, int(train["steps"]),
                                mh["combo_data_seed"], device=device, **train_kwargs(train))
            converged, first = convergence(curve, threshold)
            # the trial's good head by name: the head-level inference tells good heads from bad
            good_head = next((s for s in seeds if s in good_seeds), None) if scenario != "random" else None
            frames.append(curve[CURVE_COLUMNS].assign(
                scenario=scenario, trial=trial, heads=" ".join(map(str, seeds)),
                good_head=pd.array([good_head] * len(curve), dtype="Int64"), converged=converged,
                steps_to_converge=first))
            log.info("trial %d %s: final token accuracy %.3f", trial, scenario, curve["token_acc"].iloc[-1])
    return pd.concat(frames, ignore_index=True)[MULTIHEAD_COLUMNS] if frames else pd.DataFrame(
        columns=MULTIHEAD_COLUMNS)


def trial_table(table: pd.DataFrame, base_seed: int, data_seed: int) -> pd.DataFrame:
    """One row per trial of ``multihead``'s table: its heads (the good one by name), the base
    and data seeds it trained on, and its last evaluation."""
    last = table.sort_values("step", kind="stable").groupby(["scenario", "trial"], sort=False).tail(1)
    last = last.assign(order=last["scenario"].map(SCENARIOS.index)).sort_values(["trial", "order"], kind="stable")
    out = last.rename(columns={"step": "steps", "loss": "final_loss", "token_acc": "final_token_acc",
                               "attn_acc": "final_attn_acc"}).assign(base_seed=base_seed, data_seed=data_seed)
    return out.astype({"good_head": "Int64"})[TRIAL_COLUMNS].reset_index(drop=True)
