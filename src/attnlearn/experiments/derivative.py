"""The proxy's first learning step against the count table (paper 4.1, eq. 15; appendix A.2).

The proxy (models.BagOfWords) gives word x's translation beta[x, y] = softmax(W E_x)_y.
With E and W drawn iid N(0, s^2/d) (d the embedding size, s the init scale; s = 1 is
the N(0, 1/d) of A.2), the output bias at 0 and the proxy's loss (mean over the M pairs of
the summed token NLL, proxy.batch_loss), gradient flow starts with

    d beta[x, y] / dt  ->  2 s^2 / |Y| * (c[x, y] - mean_y' c[x, y'])           (eq. 15)

where c = count table / M (counts.count_matrix: sum over pairs of n_x n_y / |source|) and |Y|
is the output size. Both W's and E's gradient contribute s^2 (c - mean) each: E_x . E_x -> s^2
and E_x . E_x' -> 0 for x != x' (CLT, error ~ s^2 / sqrt(d)), and the softmaxes are
uniform while the logits (std s^2 / sqrt(d)) are small. The check measures, at one
initialisation, the exact derivative (step 0: gradient flow) and the change made by one
gradient-descent step of size lr divided by lr, and correlates each with eq. 15 and with
deliberately wrong expressions.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import scipy.sparse as sp
import torch

from attnlearn.data import counts
from attnlearn.data.synthetic import synthetic_mt
from attnlearn.models import BagOfWords
from attnlearn.training.proxy import batch_loss

_TRANSLATION = SimpleNamespace(name="translation")  # what proxy.batch_loss asks of a task


def word_ids(sentences: pd.Series) -> tuple[np.ndarray, int]:
    """Space-separated sentences -> zero-padded ids [M, L] (1..n, 0 = padding), vocabulary size n."""
    words = sentences.str.split()
    lengths = words.str.len().to_numpy()
    ids, vocab = pd.factorize(words.explode().to_numpy())
    out = np.zeros((len(lengths), lengths.max()), dtype=np.int64)
    out[np.arange(lengths.max()) < lengths[:, None]] = ids + 1
    return out, len(vocab)


def corpus(options: dict, seed: int) -> dict:
    """A synthetic_mt corpus as padded ids with source and target in their own vocabularies."""
    frame = synthetic_mt(seed=seed, **options)
    src, n_src = word_ids(frame["src"])
    tgt, n_tgt = word_ids(frame["tgt"])
    return {"src": src, "tgt": tgt, "n_src": n_src, "n_tgt": n_tgt}


def _bags(ids: np.ndarray, n: int) -> sp.csr_matrix:
    """[M, n + 1] word counts per row of a padded id array."""
    rows, cols = np.nonzero(ids)
    return sp.csr_matrix((np.ones(len(rows)), (rows, ids[rows, cols])), shape=(len(ids), n + 1))


def count_rate(data: dict) -> np.ndarray:
    """The count table per pair, c[x, y] for real words x, y: [n_src, n_tgt]."""
    seqs = lambda ids: [row[row > 0] for row in ids]  # noqa: E731 (one array per sentence)
    table = counts.count_matrix(seqs(data["src"]), seqs(data["tgt"]), data["n_src"] + 1, data["n_tgt"] + 1)
    return table.toarray()[1:, 1:] / len(data["src"])


def _centred(c: np.ndarray, n_out: int) -> np.ndarray:
    # the mean over all |Y| outputs of the softmax, padding's (zero count) included
    return c - c.sum(1, keepdims=True) / n_out


def expressions(data: dict, scale: float, rng: np.random.Generator) -> dict:
    """Eq. 15's rate [n_src, n_tgt] and three wrong ones with the same constant: without the
    softmax's centring, without the 1/|source| weight, and with rows given to other words."""
    n_out, const = data["n_tgt"] + 1, 2 * scale**2 / (data["n_tgt"] + 1)
    c = count_rate(data)
    unweighted = (_bags(data["src"], data["n_src"]).T @ _bags(data["tgt"], data["n_tgt"])).toarray()[1:, 1:]
    unweighted = unweighted * c.sum() / unweighted.sum()  # same total, only the weighting differs
    return {
        "eq15": const * _centred(c, n_out),
        "uncentred": const * c,
        "unweighted": const * _centred(unweighted, n_out),
        "shuffled": const * _centred(c, n_out)[rng.permutation(len(c))],
    }


def init_proxy(data: dict, embed: int, scale: float, seed: int, device) -> BagOfWords:
    """The proxy at A.2's initialisation: E, W ~ N(0, scale^2 / embed), no output bias, float64."""
    model = BagOfWords(data["n_src"] + 1, embed, data["n_tgt"] + 1).to(device, torch.float64)
    gen = torch.Generator(device=device).manual_seed(seed)
    with torch.no_grad():
        for weight in (model.embed.weight, model.out.weight):
            weight.normal_(0.0, scale / embed**0.5, generator=gen)
        model.embed.weight[0] = 0.0  # padding
        model.out.bias.zero_()
    return model


def _logits(emb: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    return emb[1:] @ out.T  # every real source word alone (model.word_logits, no bias)


def gradient(model: BagOfWords, data: dict, chunk_elems: int = 2**24) -> tuple:
    """The full-batch gradient of the proxy's loss for (E, W), summed over chunks of pairs
    so that no [pairs, length, d] embedding tensor exceeds chunk_elems."""
    device, (n, length), d = model.embed.weight.device, data["src"].shape, model.embed.weight.shape[1]
    grads = [torch.zeros_like(model.embed.weight), torch.zeros_like(model.out.weight)]
    for idx in np.array_split(np.arange(n), max(1, n * length * d // chunk_elems)):
        batch = {"src": torch.as_tensor(data["src"][idx], device=device),
                 "tgt_out": torch.as_tensor(data["tgt"][idx], device=device)}
        loss = batch_loss(_TRANSLATION, model, batch) * (len(idx) / n)  # its share of the mean over pairs
        for total, g in zip(grads, torch.autograd.grad(loss, (model.embed.weight, model.out.weight))):
            total += g
    return tuple(grads)


def rates(model: BagOfWords, data: dict, steps: list) -> dict:
    """d beta / dt at initialisation (step 0) and, per step size lr > 0, the change one
    gradient-descent step makes, divided by lr; each [n_src, n_tgt] (padding column dropped)."""
    emb, out = model.embed.weight, model.out.weight
    g_emb, g_out = gradient(model, data)
    with torch.no_grad():
        beta = torch.softmax(_logits(emb, out), -1)
        d_logit = -(_logits(g_emb, out) + _logits(emb, g_out))  # the chain rule of W E_x
        result = {}
        for lr in steps:
            if lr == 0:
                change = beta * (d_logit - (beta * d_logit).sum(-1, keepdim=True))
            else:
                change = (torch.softmax(_logits(emb - lr * g_emb, out - lr * g_out), -1) - beta) / lr
            result[lr] = change[:, 1:].cpu().numpy()
    return result


def _weighted_r(m: np.ndarray, d: np.ndarray, w: np.ndarray) -> float:
    m, d = m - np.average(m, weights=w), d - np.average(d, weights=w)
    return float(np.average(m * d, weights=w) / np.sqrt(np.average(m * m, weights=w) * np.average(d * d, weights=w)))


def agreement(measured: np.ndarray, derived: np.ndarray, src_counts: np.ndarray) -> dict:
    """Pearson r over all word pairs; r with each pair weighted by its source word's token
    count (rare words' rows are the noisiest: their signal is small, the noise is not); and
    the least-squares slope of measured on derived (1 when eq. 15's constant is right too)."""
    m, d = measured.ravel(), derived.ravel()
    w = np.repeat(src_counts.astype(float), measured.shape[1])
    return {"pearson": float(np.corrcoef(m, d)[0, 1]), "pearson_tokens": _weighted_r(m, d, w),
            "slope": float(m @ d / (d @ d))}


def check(data: dict, embed: int, scale: float, steps: list, seed: int, device="cpu") -> pd.DataFrame:
    """Rows (step_size, expression, pearson, pearson_tokens, slope) for one initialisation."""
    model = init_proxy(data, embed, scale, seed, device)
    derived = expressions(data, scale, np.random.default_rng(seed))
    src_counts = np.bincount(data["src"].ravel(), minlength=data["n_src"] + 1)[1:]
    rows = [{"step_size": float(lr), "expression": name, **agreement(change, expr, src_counts)}
            for lr, change in rates(model, data, steps).items() for name, expr in derived.items()]
    return pd.DataFrame(rows).assign(seed=seed, embed=embed, init_scale=float(scale))


def sweep(params: dict, device="cpu") -> pd.DataFrame:
    """The check over seeds (data and initialisation), embedding sizes, init scales, step sizes."""
    steps = [0.0] + [float(s) for s in params["step_sizes"]]
    frames = []
    for seed in params["seeds"]:
        data = corpus(params["data"], seed)
        frames += [check(data, embed, scale, steps, seed, device)
                   for embed in params["embed"] for scale in params["init_scales"]]
    cols = ["seed", "embed", "init_scale", "step_size", "expression", "pearson", "pearson_tokens", "slope"]
    return pd.concat(frames, ignore_index=True)[cols]
