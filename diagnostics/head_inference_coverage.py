"""How often the multi-head intervals hold the truth, on simulated pools at the paper's counts.

    python diagnostics/head_inference_coverage.py --pools 40        # about 25 CPU-minutes

Each simulated pool is the multi-head experiment's design with outcomes whose answer is known:
20 bad and 20 good heads, each with an effect z ~ N(0, 1); 50 all-bad trials of 8 bad heads and
50 one-good trials of 7 bad heads and a good one, drawn as the experiment draws them
(``head_sets``, balanced); a trial converges iff c + lam * (its bad heads' z summed) / sqrt(8)
+ lam_g * (its good head's z) + noise > 0, with c = 0.2 (all bad) and 1.5 (one good), noise
N(0, 1). The true shares over new pools are then normal probabilities (printed). For each head
effect lam (= lam_g) it prints the share of pools whose interval holds the truth: the head-level
interval (attnlearn.experiments.head_inference) and the binomial ones that take the trials as
independent (Wilson for the all-bad share, Newcombe for the difference), and the mean
head-level SE against the estimate's spread over pools. The numbers in head_inference's
docstring came from this with --pools 40 (exploratory: a check of the method, not a result).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
from scipy import stats

from attnlearn.experiments import multihead as M
from attnlearn.experiments.head_inference import head_level
from attnlearn.statistics import newcombe, wilson

K, BAD, GOOD, TRIALS, C_AB, C_OG = 8, 20, 20, 50, 0.2, 1.5


def simulate(rng, lam: float) -> pd.DataFrame:
    z = dict(enumerate(rng.normal(size=BAD + GOOD)))
    bad, good = [(h, None) for h in range(BAD)], [(h, None) for h in range(BAD, BAD + GOOD)]
    rows = []
    for scenario, c in (("all_bad", C_AB), ("one_good", C_OG)):
        for t, heads in enumerate(M.head_sets(scenario, good, bad, K, TRIALS, int(rng.integers(1 << 30)))):
            seeds = [h for h, _ in heads]
            g = next((h for h in seeds if h >= BAD), None)
            score = c + lam * sum(z[h] for h in seeds if h < BAD) / np.sqrt(K) + (lam * z[g] if g is not None else 0)
            rows.append({"scenario": scenario, "trial": t, "heads": " ".join(map(str, seeds)), "good_head": g,
                         "converged": float(score + rng.normal() > 0)})
    return pd.DataFrame(rows).astype({"good_head": "Int64"})


def truth(lam: float) -> tuple[float, float]:
    return (stats.norm.cdf(C_AB / np.sqrt(lam**2 + 1)),
            stats.norm.cdf(C_OG / np.sqrt(lam**2 * (K - 1) / K + lam**2 + 1)))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pools", type=int, default=40)
    ap.add_argument("--effects", type=float, nargs="+", default=[0.0, 0.5, 1.5])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    print("| head effect | true all-bad / one-good | all-bad share: head-level / Wilson | SE / spread "
          "| difference: head-level / Newcombe | SE / spread |")
    print("|---|---|---|---|---|---|")
    for lam in args.effects:
        ab, og = truth(lam)
        rng = np.random.default_rng([args.seed, int(lam * 1000)])
        out = []
        for _ in range(args.pools):
            trials = simulate(rng, lam)
            k = {s: int(trials.loc[trials["scenario"] == s, "converged"].sum()) for s in ("all_bad", "one_good")}
            share = head_level(trials, "converged", {"all_bad": 1.0})
            diff = head_level(trials, "converged", {"one_good": 1.0, "all_bad": -1.0})
            w, n = wilson(k["all_bad"], TRIALS), newcombe(k["one_good"], TRIALS, k["all_bad"], TRIALS)
            out.append((share.low <= ab <= share.high, w[0] <= ab <= w[1], share.value, share.se,
                        diff.low <= og - ab <= diff.high, n[0] <= og - ab <= n[1], diff.value, diff.se))
        v = np.array(out, dtype=float)
        print(f"| {lam} | {ab:.3f} / {og:.3f} | {v[:, 0].mean():.2f} / {v[:, 1].mean():.2f} | "
              f"{np.nanmean(v[:, 3]):.3f} / {v[:, 2].std():.3f} | {v[:, 4].mean():.2f} / {v[:, 5].mean():.2f} | "
              f"{np.nanmean(v[:, 7]):.3f} / {v[:, 6].std():.3f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
