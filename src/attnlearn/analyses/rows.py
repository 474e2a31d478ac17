"""The analyses over a trained run's checkpoints, as long-form tables.

Each function takes the task adapter, a model with a checkpoint loaded, the
probed validation examples and the analysis settings (config ``analyses``),
and returns pandas frames; workflow/scripts/analysis_*.py are thin wrappers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from attnlearn.data.tokenize import BOS, EOS
from attnlearn.analyses import effective as E
from attnlearn.analyses import head_roles as R
from attnlearn.analyses import norms as N
from attnlearn.models.sites import attention_sites, gold_logprobs, head_norm_weights, layer_norm_weights
from attnlearn.statistics import t_interval, t_test

SPECIALS = {"bos": BOS, "eos": EOS}


def batches(task, table: pd.DataFrame, batch_size: int, device="cpu"):
    for start in range(0, len(table), batch_size):
        idx = np.arange(start, min(start + batch_size, len(table)))
        yield idx, task.batch(table, idx, device)


def sure_links(table: pd.DataFrame, idx: np.ndarray, shape, device="cpu") -> torch.Tensor:
    """Gold token links of examples ``idx`` as bool [B, T, S] (T = decoder outputs), on ``device``."""
    out = torch.zeros(shape, dtype=torch.bool, device="cpu")  # filled from numpy indices, then moved
    ts, ss = table["gold_t"].iloc[idx], table["gold_s"].iloc[idx]
    ex = np.repeat(np.arange(len(idx)), ts.map(len).to_numpy())
    out[ex, np.concatenate([np.asarray(t, dtype=np.int64) for t in ts]),
        np.concatenate([np.asarray(s, dtype=np.int64) for s in ss])] = True
    return out.to(device)


def alignment_masks(b, sure, exclude_special: bool):
    """(allowed source positions [B, 1, S], evaluated target rows [B, T]): rows with a gold link;
    with ``exclude_special`` the final </s> row and the source <s>, </s> are left out."""
    allowed = b["src"] != 0
    rows = sure.any(-1) & (b["tgt_out"] != 0)
    if exclude_special:
        allowed = allowed & (b["src"] != BOS) & (b["src"] != EOS)
        rows = rows & (b["tgt_out"] != EOS)
    return allowed[:, None, :], rows


class PieceAlignment:
    """AER mode ``pieces`` (ours): a link per target piece with a gold link, the argmax over
    source pieces (source words only with ``exclude_special``), scored against piece links."""

    def __init__(self, b, sure, exclude_special: bool):
        self.allowed, self.rows = alignment_masks(b, sure, exclude_special)
        self.gold = sure[self.rows]

    def links(self, scores):
        return N.hard_alignment(scores, self.allowed)[self.rows]


class WordAlignment:
    """AER mode ``kobayashi`` (Kobayashi et al.'s code): piece scores merged into words (sum over
    a source word's pieces, mean over a target word's), the argmax over the source words, <s>
    and </s> included, a link landing on <s> or </s> dropped; every target word but </s> is
    scored against the word links."""

    def __init__(self, b, sure, starts_word):
        self.src = N.members(N.word_index(b["src"], starts_word))
        self.tgt = N.members(N.word_index(b["tgt_out"], starts_word).masked_fill(b["tgt_out"] == EOS, -1))
        special = ((b["src"] == BOS) | (b["src"] == EOS)).float()
        self.null = (special[:, None, :] @ self.src)[:, 0] > 0  # [B, Ws]: the <s> and </s> words
        self.words = self.src.sum(1, keepdim=True) > 0  # [B, 1, Ws]: the sentence's words
        self.rows = self.tgt.sum(1) > 0  # [B, Wt]
        self.gold = self._kept(N.word_scores(sure.float(), self.tgt, self.src) > 0)

    def _kept(self, links):
        return (links & ~self.null[:, None, :])[self.rows]

    def links(self, scores):
        return self._kept(N.hard_alignment(N.word_scores(scores, self.tgt, self.src), self.words))


def alignment_views(b, sure, settings, starts_word) -> dict:
    """A batch's view in each AER mode: its gold links and how it turns scores into links."""
    return {"kobayashi": WordAlignment(b, sure, starts_word),
            "pieces": PieceAlignment(b, sure, settings["exclude_special"])}


def _layer_weight(site):
    return site.alpha.abs().mean(1)  # head-averaged weight (signed TanhMax weights count by size)


def _alignment_scores(site) -> dict:
    """(head or "all", measure) -> [B, T, S] scores whose argmax is the hard alignment."""
    scores = {("all", "weight"): _layer_weight(site), ("all", "norm"): layer_norm_weights(site.alpha, site.values)}
    if site.heads > 1:
        per_head = head_norm_weights(site.alpha, site.values)
        for h in range(site.heads):
            scores[(h, "weight")] = site.alpha[:, h].abs()
            scores[(h, "norm")] = per_head[:, h]
    return scores


def alignment_rows(task, model, table, settings, batch_size, device, starts_word) -> list[dict]:
    """AER of hard alignments from weights vs norms, per cross-attention layer (head-level too),
    in both AER modes (``starts_word``: bool [V] of the pieces that start a word)."""
    pred: dict = {}
    gold: dict = {}
    starts_word = torch.as_tensor(starts_word, device=device)
    for idx, b in batches(task, table, batch_size, device):
        with torch.no_grad():
            out = task.run(model, b)
            sites = attention_sites(model, b, out, ("cross",))
        sure = sure_links(table, idx, out["alpha"].shape, out["alpha"].device)
        views = alignment_views(b, sure, settings, starts_word)
        for mode, view in views.items():
            gold.setdefault(mode, []).append(view.gold)
        for site in sites:
            for (head, measure), s in _alignment_scores(site).items():
                for mode, view in views.items():
                    pred.setdefault((mode, site.layer, head, measure), []).append(view.links(s))
    gold = {mode: _stack(parts) for mode, parts in gold.items()}
    out = []
    for (mode, layer, head, measure), parts in pred.items():
        links, sure = _stack(parts, gold[mode].shape[-1]), gold[mode]
        out.append({"aer_mode": mode, "layer": layer, "head": -1 if head == "all" else head, "measure": measure,
                    "aer": N.alignment_error_rate(links, sure),
                    "precision": float((links & sure).sum() / links.sum()) if links.any() else float("nan"),
                    "n_rows": int(len(links)), "n_sure": int(sure.sum())})
    return out


def _stack(parts, width: int | None = None):
    """Row blocks of different widths as one bool array [N, width] (zero-padded), on the CPU."""
    width = width or max(x.shape[-1] for x in parts)
    return torch.cat([_pad_s(x, width) for x in parts]).cpu().numpy()


def _pad_s(x: torch.Tensor, width: int | None = None) -> torch.Tensor:
    width = width or x.shape[-1]
    return torch.nn.functional.pad(x, (0, width - x.shape[-1]))


def norm_rows(task, model, table, batch_size, device) -> list[dict]:
    """Per site, head (-1 = layer) and key class (bos, eos, word): the mean share of each
    query row's weight and of its norm-based weight that the class receives, and mean ||f(x)||."""
    acc: dict = {}
    for _, b in batches(task, table, batch_size, device):
        with torch.no_grad():
            out = task.run(model, b)
            sites = attention_sites(model, b, out)
        key_ids = {"cross": b["src"], "enc_self": b["src"], "dec_self": b["tgt_in"]}
        for site in sites:
            classes = N.token_classes(key_ids[site.kind], SPECIALS)
            q = site.query_mask
            measures = {"weight": site.alpha.abs(), "norm": head_norm_weights(site.alpha, site.values)}
            layer = {"weight": _layer_weight(site).unsqueeze(1),
                     "norm": layer_norm_weights(site.alpha, site.values).unsqueeze(1)}
            fnorm = site.values.norm(dim=-1)  # [B, h, K]
            for name, cls in classes.items():
                for head_set, ms in (("heads", measures), ("layer", layer)):
                    shares = {m: (v * cls[:, None, None, :]).sum(-1) / v.sum(-1).clamp(min=1e-12)
                              for m, v in ms.items()}  # [B, h', Q]
                    for h in range(shares["weight"].shape[1]):
                        head = -1 if head_set == "layer" else h
                        if head_set == "layer" and site.heads == 1:
                            continue
                        key = (site.kind, site.layer, head, name)
                        a = acc.setdefault(key, {"weight_share": 0.0, "norm_share": 0.0, "n_queries": 0,
                                                 "f_norm": 0.0, "n_keys": 0})
                        a["weight_share"] += float(shares["weight"][:, h][q].sum())
                        a["norm_share"] += float(shares["norm"][:, h][q].sum())
                        a["n_queries"] += int(q.sum())
                        if head >= 0:
                            a["f_norm"] += float(fnorm[:, h][cls].sum())
                        else:
                            a["f_norm"] += float(fnorm.mean(1)[cls].sum())
                        a["n_keys"] += int(cls.sum())
    return [{"kind": k[0], "layer": k[1], "head": k[2], "token_class": k[3],
             "weight_share": v["weight_share"] / max(1, v["n_queries"]),
             "norm_share": v["norm_share"] / max(1, v["n_queries"]),
             "mean_f_norm": v["f_norm"] / v["n_keys"] if v["n_keys"] else float("nan"),
             "n_keys": v["n_keys"]} for k, v in acc.items()]


def site_effective(site, rtol):
    """(alpha, values, A_eff, rank per query) of a site in float64: each query projected on the
    value rows of the keys it may see (docs/methods.md 10)."""
    alpha, values = site.alpha.double(), site.values.double()
    a_eff, rank = E.effective_attention(alpha, values, site.key_mask[:, None], rtol)
    return alpha, values, a_eff, rank


def effective_rows(task, model, table, settings, batch_size, device) -> list[dict]:
    """Per site and head: properties of effective attention (rank, output identity, negativity)
    and erasure tests (necessity: drop the top-k; sufficiency: keep only them) for positions
    ranked by raw weights, norm-based weights, effective and renormalised effective attention,
    and at random; effect = drop in mean log p(gold) and relative change of the head output."""
    gen = torch.Generator("cpu").manual_seed(settings["seed"])
    sums: dict = {}

    def add(key, value, count):
        s = sums.setdefault(key, [0.0, 0])
        s[0] += float(value)
        s[1] += int(count)

    for _, b in batches(task, table, batch_size, device):
        with torch.no_grad():
            out = task.run(model, b)
            base = gold_logprobs(task, model, b)
            n_tok = int((b["tgt_out"] != 0).sum())
            for site in attention_sites(model, b, out, settings["kinds"]):
                alpha, values, a_eff, rank = site_effective(site, settings["rank_rtol"])
                key_mask = site.key_mask[:, None]  # [B, 1, Q, K]
                q = site.query_mask[:, None].expand(-1, site.heads, -1)  # [B, h, Q]
                ren = E.renormalised(a_eff, key_mask)
                n_keys = site.key_mask.sum(-1)[:, None].expand_as(q)  # [B, h, Q]
                neg = (a_eff.clamp(max=0).abs() * key_mask).sum(-1) / (a_eff.abs() * key_mask).sum(-1).clamp(
                    min=1e-12)
                props = {"rank": rank.double(),
                         "non_identifiable": (n_keys > rank).double(),
                         "max_abs_diff_eff_vs_raw": (a_eff - alpha).abs().amax(-1),
                         "output_gap_effective": E.output_gap(alpha, a_eff, values),
                         "output_gap_renormalised": E.output_gap(alpha, ren, values),
                         "negative_mass_effective": neg,
                         "row_sum_effective": (a_eff * key_mask).sum(-1)}
                rankers = {"raw": alpha.abs(), "norm": head_norm_weights(alpha, values),
                           "effective": a_eff, "renormalised": ren,
                           "random": E.random_ranking(alpha.shape, gen, alpha.dtype, alpha.device)}
                for h in range(site.heads):
                    key = (site.kind, site.layer, h)
                    for name, v in props.items():
                        add((*key, "-", "property", 0, name), v[:, h][q[:, h]].sum(), q[:, h].sum())
                    for rname, ranking in rankers.items():
                        for k in settings["erasure_k"]:
                            chosen = E.top_k_mask(ranking[:, h], key_mask[:, 0], k)
                            for test, keep in (("necessity", False), ("sufficiency", True)):
                                new = E.erase(alpha[:, h], chosen, keep)
                                gap = E.output_gap(alpha[:, h], new, values[:, h])[q[:, h]]
                                add((*key, rname, test, k, "output_change"), gap.sum(), len(gap))
                                replaced = site.alpha.clone()
                                replaced[:, h] = new.to(site.alpha.dtype)
                                drop = (base - gold_logprobs(task, model, b, site, replaced)).sum()
                                add((*key, rname, test, k, "logp_drop"), drop, n_tok)
    return [{"kind": k[0], "layer": k[1], "head": k[2], "ranker": k[3], "test": k[4], "k": k[5], "metric": k[6],
             "value": s[0] / max(1, s[1]), "n": s[1]} for k, s in sums.items()]


def role_sieves(site, b, sure, settings) -> dict[str, torch.Tensor]:
    """Sieves [B, Q, K] of the roles tested at a site (docs/methods.md 12)."""
    Q, K = site.alpha.shape[-2:]
    if site.kind == "cross":
        q_len, k_len = (b["tgt_out"] != 0).sum(1), (b["src"] != 0).sum(1)
        return {"diagonal": R.diagonal_sieve(q_len, k_len, Q, K, settings["diagonal_width"]),
                "delimiter": R.token_sieve(b["src"] == EOS, Q),
                "gold_alignment": sure if sure is not None else None}
    keys = b["src"] if site.kind == "enc_self" else b["tgt_in"]
    special = (keys == BOS) | (keys == EOS)
    return {"local": R.local_sieve(Q, K, settings["local_width"], keys.device).expand(len(keys), Q, K),
            "delimiter": R.token_sieve(special, Q)}


def head_role_rows(task, model, table, settings, batch_size, device, has_gold: bool) -> pd.DataFrame:
    """Sentence scores per head and role, one-sided t-tests against tau, corrected p-values."""
    scores: dict = {}
    for idx, b in batches(task, table, batch_size, device):
        with torch.no_grad():
            out = task.run(model, b)
            sure = sure_links(table, idx, out["alpha"].shape, out["alpha"].device) if has_gold else None
            for site in attention_sites(model, b, out):
                for role, sieve in role_sieves(site, b, sure, settings).items():
                    if sieve is None:
                        continue
                    s = R.sieve_scores(site.alpha.double(), sieve.to(site.alpha.device), site.key_mask,
                                       site.query_mask)
                    for h in range(site.heads):
                        scores.setdefault((site.kind, site.layer, h, role), []).append(s[:, h].cpu().numpy())
    rows = []
    for (kind, layer, head, role), parts in scores.items():
        x = np.concatenate(parts)
        t, p, n = t_test(x, settings["tau"], alternative="greater")  # H0: mean score <= tau
        mean, low, high, _ = t_interval(x)  # 95% over sentences: compares heads, not only each with tau
        rows.append({"kind": kind, "layer": layer, "head": head, "role": role, "mean_score": mean,
                     "sd_score": float(np.nanstd(x, ddof=1)) if n > 1 else float("nan"), "ci_low": low,
                     "ci_high": high, "n_sentences": n, "t": t, "p": p})
    df = pd.DataFrame(rows)
    df["p_adjusted"] = R.CORRECTIONS[settings["correction"]](df["p"].to_numpy())
    df["significant"] = df["p_adjusted"] < settings["alpha"]
    df["significant_uncorrected"] = df["p"] < settings["alpha"]
    df["tau"], df["correction"] = settings["tau"], settings["correction"]
    return df


def with_meta(rows, **meta) -> pd.DataFrame:
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(rows)
    for k, v in reversed(meta.items()):
        df.insert(0, k, v)
    return df
