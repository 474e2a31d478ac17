"""A run's model as its training starts: built from its settings and initialised from its
seed. The probes and analyses build the same model to load each checkpoint into.
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from attnlearn.training.variants import SEEDING, UNIFORM_ATTENTION, VARIANT_MODEL, VARIANTS


def run_seed(params: dict) -> int:
    """The seed of a run's initial weights, batch order and dropout stream.

    Every role is its own model (docs/methods.md 2): standard runs use their seed as
    given, the other variants one derived from (variant, seed), so that uniform-s1
    never starts from standard-s1's weights or sees its batches. ``train.seeding:
    shared`` gives every variant the seed as given (the "same start" ablation).
    """
    variant, seed = params["variant"], int(params["seed"])
    seeding = params.get("train", {}).get("seeding", "independent")
    if seeding not in SEEDING:
        raise ValueError(f"train.seeding: unknown value {seeding!r}; expected one of {SEEDING}")
    if variant == "standard" or seeding == "shared":
        return seed
    digest = hashlib.sha256(f"{variant}-s{seed}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def build_model(task, params: dict, embeddings: np.ndarray | None = None):
    """Model initialised from the run's seed (``run_seed``); frozen trains attention only.

    ``embeddings`` [V, E] (NaN rows = unknown) replaces the initial embedding rows it has.
    """
    torch.manual_seed(run_seed(params))
    variant = params["variant"]
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    model_cfg = {**params["model"], **VARIANT_MODEL.get(variant, {})}
    model = task.build(model_cfg, "uniform" if variant in UNIFORM_ATTENTION else "standard")
    if embeddings is not None:
        known = torch.from_numpy(~np.isnan(embeddings).any(1))
        with torch.no_grad():
            model.embed.weight[known] = torch.from_numpy(embeddings[known.numpy()])
    if variant == "frozen":
        for name, p in model.named_parameters():  # any module on the path is an attention module
            p.requires_grad = not model.attention_params.isdisjoint(name.split("."))
    return model


def _is_attention(model, key: str) -> bool:
    """Whether a weight belongs to the attention (any module on its path is one, as for frozen)."""
    return not model.attention_params.isdisjoint(key.split("."))


def start_from(model, state: dict, parts, source: str) -> list[str]:
    """Overwrite ``model``'s weights with those of ``state`` (a checkpoint of run ``source``) in
    the top-level parts ``parts`` ("all": every part), the attention's own weights excepted: they
    keep the run's own initial values, since what the transfer tests is how attention learns
    when the rest of the model already knows its words. Returns the parts it copied. A part the
    model lacks, an attention part, or a checkpoint that does not fit is an error naming the key."""
    own = model.state_dict()
    names = list(dict.fromkeys(k.split(".")[0] for k in own))
    copyable = [n for n in names if any(k.split(".")[0] == n and not _is_attention(model, k) for k in own)]
    if parts == "all":
        chosen = copyable
    else:
        if unknown := [p for p in parts if p not in names]:
            raise ValueError(f"init.params: {unknown} not among the model's parts {names}")
        if fresh := [p for p in parts if p not in copyable]:
            raise ValueError(f"init.params: {fresh} hold(s) only the attention's own weights, which always "
                             f"start fresh; the parts that can be copied: {copyable}")
        chosen = list(parts)
    keys = [k for k in own if k.split(".")[0] in chosen and not _is_attention(model, k)]
    if bad := [k for k in keys if k not in state or tuple(state[k].shape) != tuple(own[k].shape)]:
        raise ValueError(f"init.from: the checkpoint of {source} does not fit this model: {bad[:3]} "
                         "missing or of another shape")
    with torch.no_grad():
        model.load_state_dict({**own, **{k: state[k] for k in keys}})
    return chosen
