"""Attention sites: where a translation model attends, with what, over which keys.

A site is one attention layer of one kind (``cross``, ``enc_self``,
``dec_self``). It holds every head's weights alpha [B, h, Q, K], value vectors
f(x) [B, h, K, d] (the head output is alpha @ f), the allowed keys and the real
queries. The LSTM model has one site, ``cross`` layer 0, with its K heads (one
in the paper's model) and f^k(e_s) = W_p^k e_s (the context projection, bias
left out, 1/K in when head contexts are averaged); the Transformer has one site
per layer and kind.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch.nn.functional import log_softmax

from attnlearn.models import Transformer

KINDS = ("cross", "enc_self", "dec_self")


@dataclass
class Site:
    kind: str
    layer: int
    alpha: torch.Tensor  # [B, h, Q, K]
    values: torch.Tensor  # [B, h, K, d]
    key_mask: torch.Tensor  # [B, Q, K] allowed keys
    query_mask: torch.Tensor  # [B, Q] real queries

    @property
    def heads(self) -> int:
        return self.alpha.shape[1]


def arch(model) -> str:
    return "transformer" if isinstance(model, Transformer) else "lstm"


def attention_sites(model, b: dict, out: dict, kinds=KINDS) -> list[Site]:
    src_ok, tgt_ok = b["src"] != 0, b["tgt_in"] != 0
    T, S = b["tgt_in"].shape[1], b["src"].shape[1]
    cross_keys = src_ok[:, None, :].expand(-1, T, -1)
    if not isinstance(model, Transformer):
        values = model.head_values(out["enc"])
        return [Site("cross", 0, out["heads"], values, cross_keys, tgt_ok)] if "cross" in kinds else []
    causal = torch.ones(T, T, dtype=torch.bool, device=src_ok.device).tril()
    keys = {"cross": cross_keys, "enc_self": src_ok[:, None, :].expand(-1, S, -1),
            "dec_self": causal[None] & tgt_ok[:, None, :]}
    queries = {"cross": tgt_ok, "enc_self": src_ok, "dec_self": tgt_ok}
    sites = []
    for kind in kinds:
        for layer in range(model.layers):
            alpha = out["attention"][(kind, layer)][0]
            sites.append(Site(kind, layer, alpha, model.site_values(out["attention"], kind, layer), keys[kind],
                              queries[kind]))
    return sites


def gold_token_logprobs(logits: torch.Tensor, tgt_out: torch.Tensor) -> torch.Tensor:
    """log p(y_t) of the gold tokens [B, T] from logits [B, T, V], 0 at pads."""
    return log_softmax(logits, -1).gather(-1, tgt_out.unsqueeze(-1)).squeeze(-1) * (tgt_out != 0)


def gold_logprobs(task, model, b: dict, site: Site | None = None, alpha: torch.Tensor | None = None):
    """log p(y_t) of the gold tokens [B, T] (0 at pads), optionally with one site's weights
    replaced by ``alpha`` [B, h, Q, K]."""
    kw = {}
    if site is not None:
        kw = ({"override": {(site.kind, site.layer): alpha}} if isinstance(model, Transformer)
              else {"alpha": alpha})
    return gold_token_logprobs(task.run(model, b, **kw)["logits"], b["tgt_out"])


# -- norm-based attention (docs/methods.md 9; Kobayashi et al. 2020): a head's output is
# sum_s alpha_ts f(x_s), and the weight alpha_ts alone ignores the size of f(x_s). The norm-based
# weight is |alpha_ts| ||f(x_s)|| per head and ||sum_h alpha^h_ts f^h(x_s)|| per layer.

def head_norm_weights(alpha: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """||alpha_ts f(x_s)|| per head: alpha [B, h, T, S], f [B, h, S, d] -> [B, h, T, S]."""
    return alpha.abs() * f.norm(dim=-1).unsqueeze(-2)


def layer_norm_weights(alpha: torch.Tensor, f: torch.Tensor, chunk_elems: int = 1 << 24) -> torch.Tensor:
    """||sum_h alpha^h_ts f^h(x_s)|| per layer: [B, T, S], built in chunks of target steps."""
    B, h, T, S = alpha.shape
    step = max(1, chunk_elems // max(1, B * h * S * f.shape[-1]))
    parts = [torch.einsum("bhts,bhsd->btsd", alpha[:, :, t0:t0 + step], f).norm(dim=-1)
             for t0 in range(0, T, step)]
    return torch.cat(parts, dim=1)
