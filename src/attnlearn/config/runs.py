"""A dataset's runs by name (``{variant}-s{seed}``), the groups that ``train.stack`` trains
together, and the probe settings each run's variant gets: what the rules' targets and params
are made of."""

from __future__ import annotations

from attnlearn.training.variants import VARIANTS


def run_names(dataset: dict) -> list[str]:
    """Run names in role order: standard seeds first (A, then B...), then uniform, frozen, tanhmax,
    additive."""
    return [f"{variant}-s{seed}" for variant in VARIANTS for seed in dataset["runs"].get(variant, [])]


def run_init(dataset: dict, run: str) -> dict | None:
    """Where run ``run`` starts (the dataset's ``init``; standard runs only): standard-sN from the
    checkpoint of ``{init.from}-sN`` at ``init.step``, the parts ``init.params``. None: from its
    own seed's initial weights, as every run without ``init``."""
    variant, seed = run.rsplit("-s", 1)
    init = dataset.get("init")
    if variant != "standard" or not init:
        return None
    return {"run": f"{init['from']}-s{seed}", "step": init["step"], "params": init.get("params", "all")}


def stack_groups(dataset: dict) -> list[list[str]]:
    """The runs that ``train.stack: K`` trains together, one job per group: each variant's
    runs in run order, K at a time (a run left alone trains alone).
    Adding a seed at the end of a list adds a group or a member to the last one."""
    k = dataset["train"].get("stack", 1)
    if k < 2:
        return []
    groups = []
    for variant in VARIANTS:
        names = [f"{variant}-s{seed}" for seed in dataset["runs"].get(variant, [])]
        groups += [names[i:i + k] for i in range(0, len(names), k) if len(names[i:i + k]) > 1]
    return groups


ADDITIVE_MEASURES = ("alpha", "xi", "optimal")
# read of run A alone (compare.py: g* at alpha*'s step, the norm-based attention against alpha*,
# xi^uf and the gold links); a standard seed is A in some replicate, the other variants never
STANDARD_ONLY_MEASURES = ("grad", "norm")


# the probe settings only BLEU reads (probe.bleu)
BLEU_KEYS = ("beam", "max_decode_len", "beam_rank", "bleu_references")


def run_probe_settings(probe: dict, variant: str) -> dict:
    """A run's probe settings: additive runs measure only what the optimal-attention comparisons
    read (alpha, xi and 'optimal'; they take no Table 2 role); uniform, frozen and tanhmax runs
    skip the measures only run A's are read of (a translation probe's gradient saliency is half
    its time); all but the additive drop the solver's settings, so that changing them reruns
    the additive runs' probes only; all but the standard runs drop probe.at_best (they probe none
    of its measures; the proxy's probe has measures of its own), so that changing it reruns the
    standard runs' probes only. Without probe.bleu the decoding settings (BLEU_KEYS) go too:
    changing them reruns only the probes that decode."""
    unused = set() if probe.get("bleu") else set(BLEU_KEYS)
    if variant == "additive":
        return {**{k: v for k, v in probe.items() if k not in unused | {"at_best"}}, "measures": list(ADDITIVE_MEASURES)}
    drop = unused | ({"optimal"} if variant == "standard" else {"optimal", "at_best"})
    settings = {k: v for k, v in probe.items() if k not in drop}
    if variant in ("uniform", "frozen", "tanhmax") and "measures" in settings:
        settings["measures"] = [m for m in settings["measures"] if m not in STANDARD_ONLY_MEASURES]
    return settings
