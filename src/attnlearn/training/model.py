"""A run's model as its training starts: built from its settings and initialised from its
seed. The probes and analyses build the same model to load each checkpoint into.
"""

from __future__ import annotations

import hashlib

import numpy as np
import torch

from attnlearn.training.variants import SEEDING, VARIANT_MODEL, VARIANTS


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
    model = task.build(model_cfg, "uniform" if variant == "uniform" else "standard")
    if embeddings is not None:
        known = torch.from_numpy(~np.isnan(embeddings).any(1))
        with torch.no_grad():
            model.embed.weight[known] = torch.from_numpy(embeddings[known.numpy()])
    if variant == "frozen":
        for name, p in model.named_parameters():  # any module on the path is an attention module
            p.requires_grad = not model.attention_params.isdisjoint(name.split("."))
    return model
