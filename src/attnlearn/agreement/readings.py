"""What each replicate's central column reads, and whether its spread follows any of it.

A(alpha*, xi^uf) moves by 30 points with the A seed on SMS spam and 20 Newsgroups
(docs/reproduction.md). Per replicate (rule ``readings``): run A's best step and performance
(alpha*'s checkpoint), alpha*'s attention entropy (each row's entropy over its n source positions,
divided by log n, averaged over rows), the word alpha* puts first most often and its share of
rows, the same for xi^uf at the uniform checkpoint A(alpha*, xi^uf) reads, how often each puts
a text boundary token (<s>, </s>) first, and the agreement itself, whole, split by whether
alpha* puts a boundary or a word first, and with the boundary tokens left out of both measures
(each then puts a word first). Over the independent replicates (``readings_tests``): each reading's Pearson
correlation with A(alpha*, xi^uf), with its Fisher-z 95% interval and p value, Holm's
correction over the dataset's readings; and whether the column's values are one mode or two
(a parametric-bootstrap likelihood ratio of a two-component normal mixture against one
normal; docs/methods.md 5.4).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from attnlearn.agreement.metric import Measure, agreement_rows
from attnlearn.agreement.tables import select_rows
from attnlearn.agreement.words import attended_rows
from attnlearn.statistics import correlation, holm, t_intervals, t_test

CENTRAL = "agr_alpha_xi_uniform"
WORDS = 5  # the top words listed per measure
# the tokens that mark a text's ends (tokenize: <s>/</s> of a word vocabulary, SentencePiece's
# too): not words of the text, yet a measure may put them first
BOUNDARY = {"<s>", "</s>", "<bos>", "<eos>"}
READING_COLUMNS = ["dataset", "replicate", "a_run", "u_run", "independent", "a_step", "u_step", "best_perf", CENTRAL,
                   "alpha_entropy", "alpha_top_word", "alpha_top_share", "alpha_words", "xi_top_word",
                   "xi_top_share", "xi_words", "same_top_word", "alpha_boundary_share", "xi_boundary_share",
                   "agr_boundary_rows", "agr_word_rows", "agr_without_boundary"]
# the readings correlated with the central column, with how a page names them
READINGS = {"alpha_entropy": "alpha*'s entropy / log n", "alpha_top_share": "alpha*'s top word's share",
            "xi_top_share": "xi^uf's top word's share", "same_top_word": "alpha* and xi^uf put the same word first",
            "alpha_boundary_share": "share of rows where alpha* puts a boundary token first",
            "xi_boundary_share": "share of rows where xi^uf puts a boundary token first",
            "a_step": "A's best step", "best_perf": "A's best performance"}
TEST_COLUMNS = ["dataset", "reading", "label", "n", "r", "r_low", "r_high", "p_value", "p_holm"]
MODES_COLUMNS = ["dataset", "column", "n", "lr", "p_value", "resamples"]
MODE_RESAMPLES = 199


def entropy(alpha: np.ndarray) -> float:
    """Mean over rows of each row's entropy over its real positions / log(n); rows with one
    position (no choice to make) are left out."""
    n = (~np.isnan(alpha)).sum(1)
    p = np.nan_to_num(alpha[n > 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        h = -np.where(p > 0, p * np.log(p), 0.0).sum(1) / np.log(n[n > 1])
    return float(h.mean()) if len(h) else float("nan")


def top_words(words: pd.Series) -> tuple[str, float, str]:
    """The most frequent word, its share of rows, and the first ``WORDS`` as 'word 12.3%, ...'."""
    share = words.value_counts(normalize=True, sort=True)
    listed = ", ".join(f"{w} {100 * s:.1f}%" for w, s in share.head(WORDS).items())
    return str(share.index[0]), float(share.iloc[0]), listed


def central_row(agr: pd.DataFrame) -> pd.Series:
    """The replicate's A(alpha*, xi^uf) row: alpha* (its a_step) against the uniform checkpoint
    it agrees with most (the earliest on ties), as tables.table2_row reads it."""
    rows = select_rows(agr, a_measure="alpha", a_role="A", b_measure="xi", b_role="U")
    return rows.loc[rows["value"].idxmax()]


def replicate_reading(names: np.ndarray, sources: np.ndarray, alpha: Measure, xi: Measure, best_perf: float,
                      central: pd.Series) -> dict:
    """One replicate's readings (``alpha``: A's attention at its best step, ``xi``: U's probe at
    the step ``central`` reads)."""
    rows, arrays = attended_rows(names, sources, alpha, xi)
    a_word, a_share, a_words = top_words(rows["alpha_word"])
    x_word, x_share, x_words = top_words(rows["xi_word"])
    # the column split by whether alpha* puts a boundary token first:
    # agreement = share * the boundary rows' + (1 - share) * the word rows'
    split = position_split(rows, arrays, boundary_mask(names, arrays))
    return {"a_step": int(central["a_step"]), "u_step": int(central["b_step"]), "best_perf": best_perf,
            CENTRAL: float(central["value"]), "alpha_entropy": entropy(arrays["alpha"]),
            "alpha_top_word": a_word, "alpha_top_share": a_share, "alpha_words": a_words,
            "xi_top_word": x_word, "xi_top_share": x_share, "xi_words": x_words,
            "same_top_word": float(a_word == x_word), "alpha_boundary_share": split["alpha_share"],
            "xi_boundary_share": split["xi_share"], "agr_boundary_rows": split["agr_in"],
            "agr_word_rows": split["agr_out"], "agr_without_boundary": split["agr_without"]}


def boundary_mask(names: np.ndarray, arrays: dict) -> np.ndarray:
    """[rows, S] True where a row's token is a boundary token. Left out of both measures (NaN,
    as past a text's end), each then puts a word first and xi's top k is of the words (k of
    the n words)."""
    boundary_ids = np.flatnonzero(np.isin(names, list(BOUNDARY)))  # the vocabulary's, not each position's text
    return np.isin(arrays["tokens"][:, :arrays["alpha"].shape[1]], boundary_ids)


def without_positions(arrays: dict, mask: np.ndarray) -> float:
    """A(alpha, xi) with the positions ``mask`` marks left out of both measures; rows left with
    no position are dropped."""
    a, x = np.where(mask, np.nan, arrays["alpha"]), np.where(mask, np.nan, arrays["xi"])
    kept = ~np.isnan(a).all(1)
    return _mean(agreement_rows(a[kept], x[kept]))


def position_split(rows: pd.DataFrame, arrays: dict, mask: np.ndarray) -> dict:
    """Where the positions ``mask`` marks ([rows, S]: a post's header, say) take the first
    place: the share of rows where alpha puts one first (``alpha_share``), xi likewise
    (``xi_share``), A(alpha, xi) on alpha's such rows and on the rest (``agr_in``,
    ``agr_out``), and A(alpha, xi) with those positions left out of both (``agr_without``)."""
    a_in = _first_in(arrays["alpha"], mask)
    hit = rows["hit"].to_numpy()
    return {"alpha_share": float(a_in.mean()), "xi_share": float(_first_in(arrays["xi"], mask).mean()),
            "agr_in": _mean(hit[a_in]), "agr_out": _mean(hit[~a_in]), "agr_without": without_positions(arrays, mask)}


def _first_in(values: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return mask[np.arange(len(values)), np.nanargmax(values, axis=1)]


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def boundary_split(readings: pd.DataFrame) -> dict:
    """Over a dataset's independent replicates, each mean with its 95% t interval (``_low``,
    ``_high``): the share of rows where alpha* puts a boundary token first (``share``);
    A(alpha*, xi^uf) on those rows minus on the rows where it puts a word first (``gap``, paired
    within the replicate); A(alpha*, xi^uf) with the boundary tokens left out of both measures
    (``without``) and what leaving them out takes from the column (``loss``: the column minus
    ``without``, paired). The paired differences carry their t test's p (``gap_p``, ``loss_p``);
    each its number of replicates (``_n``: a reading kept before it existed is NaN), ``n``
    the gap's."""
    return split_summary(readings, "alpha_boundary_share", "agr_boundary_rows", "agr_word_rows",
                         "agr_without_boundary")


def split_summary(readings: pd.DataFrame, share: str, inside: str, outside: str, without: str) -> dict:
    """boundary_split for any split of the rows: ``share`` the share of rows alpha* puts first
    inside, ``inside``/``outside`` the column on those rows and on the rest, ``without`` the
    column with the inside positions left out (columns of ``readings``)."""
    g = readings[readings["independent"].astype(bool)]
    out = {}
    for name, values in (("share", g[share]), ("gap", g[inside] - g[outside]), ("without", g[without]),
                         ("loss", g[CENTRAL] - g[without])):
        v = values.to_numpy(dtype=float)
        t = t_intervals(v)
        out.update({f"{name}_n": t["n"], name: t["mean"], f"{name}_low": t["ci_low"], f"{name}_high": t["ci_high"]})
        if name in ("gap", "loss"):
            out[f"{name}_p"] = t_test(v, 0.0, tie=1.0).p  # as the claims read a tie
    return {"n": out["gap_n"], **out}


def _tested(replicates: pd.DataFrame, least: int):
    """Each dataset's independent replicates, where it has at least ``least`` of them."""
    independent = replicates[replicates["independent"].astype(bool)]
    return [(d, g) for d, g in independent.groupby("dataset", sort=False) if len(g) >= least]


def readings_tests(readings: pd.DataFrame) -> pd.DataFrame:
    """Each reading's correlation with A(alpha*, xi^uf) over a dataset's independent replicates
    (three or more), Holm-adjusted over that dataset's readings (the family: one dataset's
    question, 'does the central column follow any of these?')."""
    rows = []
    for dataset, g in _tested(readings, 3):
        tests = [{"dataset": dataset, "reading": col, "label": label, **correlation(g[col], g[CENTRAL])}
                 for col, label in READINGS.items()]
        for t, adjusted in zip(tests, holm([t["p_value"] for t in tests])):
            t["p_holm"] = float(adjusted)
        rows += tests
    return pd.DataFrame(rows, columns=TEST_COLUMNS)


def _normal_loglik(x: np.ndarray, mean: np.ndarray, var: np.ndarray) -> np.ndarray:
    return -0.5 * (np.log(2 * np.pi * var) + (x - mean) ** 2 / var)


def _mixture_lr(x: np.ndarray, iterations: int = 300) -> float:
    """2 x (the log likelihood of a two-component normal mixture with one shared variance - that
    of one normal), by EM from every split of the sorted values into a low and a high group
    (all n - 1 starts at once, the best kept): deterministic, and no start is left untried."""
    x = np.sort(x)
    n = len(x)
    var1 = x.var()
    one = n * -0.5 * (np.log(2 * np.pi * var1) + 1)
    low = np.arange(n)[None, :] < np.arange(1, n)[:, None]  # [starts, n]: start s puts x[:s+1] low
    r = low.astype(float)  # responsibility of the low component
    for _ in range(iterations):
        w = r.sum(1, keepdims=True)
        pi = w / n
        m1 = (r * x).sum(1, keepdims=True) / w
        m2 = ((1 - r) * x).sum(1, keepdims=True) / np.maximum(n - w, 1e-12)
        var = np.maximum((r * (x - m1) ** 2 + (1 - r) * (x - m2) ** 2).sum(1, keepdims=True) / n, 1e-9 * var1)
        a = np.log(np.maximum(pi, 1e-300)) + _normal_loglik(x, m1, var)
        b = np.log(np.maximum(1 - pi, 1e-300)) + _normal_loglik(x, m2, var)
        top = np.maximum(a, b)
        total = top + np.log(np.exp(a - top) + np.exp(b - top))
        r = np.exp(a - total)
    two = total.sum(1).max()
    return float(2 * max(two - one, 0.0))


def modes_test(values, resamples: int = MODE_RESAMPLES, seed: int = 0) -> dict:
    """One mode or two: the mixture's likelihood ratio against one normal, its p value from
    ``resamples`` normal samples of the same size, mean and sd (a parametric bootstrap: the
    ratio has no chi-square law here). A small p: two modes fit better than chance allows."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if len(x) < 4 or np.ptp(x) == 0:
        return {"n": len(x), "lr": float("nan"), "p_value": float("nan"), "resamples": 0}
    lr = _mixture_lr(x)
    rng = np.random.default_rng(seed)
    null = [_mixture_lr(rng.normal(x.mean(), x.std(ddof=1), len(x))) for _ in range(resamples)]
    return {"n": len(x), "lr": lr, "p_value": (1 + sum(v >= lr for v in null)) / (resamples + 1),
            "resamples": resamples}


def modes_table(replicates: pd.DataFrame, columns=(CENTRAL,), resamples: int = MODE_RESAMPLES) -> pd.DataFrame:
    """modes_test of each column over each dataset's independent replicates (four or more)."""
    rows = [{"dataset": dataset, "column": col, **modes_test(g[col], resamples)}
            for dataset, g in _tested(replicates, 4) for col in columns]
    return pd.DataFrame(rows, columns=MODES_COLUMNS)
