"""The count table beside what the models learn (paper section 4), drawn per dataset.

Translation (paper Figure 1, right): the count table c[x, y] (docs/methods.md 7) of the most
frequent source-target pairs beside the uniform run's learned p(y | x) on the same pairs at a
few checkpoints: exp(xi^uf[t, s]), the probability of target word y_t when all attention goes to
source word x_s, averaged over every probed row where x and y meet. A model that knows the
translation of individual words (KTIW) fills the diagonal, the frequent pairs first.

Classification (paper Figure 5): each word's count-table polarity, t(1 | x) - t(0 | x), beside
the proxy's word logit and the uniform model's per-word score beta (its output logit when it
attends to that word alone, averaged over the word's occurrences in the probed examples).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from scipy import stats  # noqa: E402

from attnlearn.agreement.metric import KEY_T, Measure  # noqa: E402
from attnlearn.agreement.words import id_matrix, row_tokens, source_column  # noqa: E402


def special_ids(names: np.ndarray) -> np.ndarray:
    """Ids of the markup tokens (<s>, </s>, <pad>, <unk>, <bos>, <eos>) and SentencePiece's bare
    word boundary '▁': no word to translate."""
    return np.flatnonzero([str(n).startswith("<") and str(n).endswith(">") or str(n) == "▁" for n in names])


def top_pairs(counts: pd.DataFrame, names: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` most frequent (source, target) pairs with no source or target used twice, so
    that each pair lands on the diagonal: (source ids, target ids), by count."""
    special = special_ids(names)
    cells = counts[~counts["src_id"].isin(special) & ~counts["tgt_id"].isin(special)]
    # the pairs come from the most frequent cells (a real count table has millions)
    cells = cells.nlargest(50 * k, "count", keep="first")
    # greedily: a pair whose source or target an earlier (more frequent) pair took is skipped
    src, tgt = [], []
    for s, t in zip(cells["src_id"].to_numpy(), cells["tgt_id"].to_numpy()):
        if s not in src and t not in tgt:
            src.append(s)
            tgt.append(t)
            if len(src) == k:
                break
    return np.array(src, dtype=np.int64), np.array(tgt, dtype=np.int64)


def count_grid(counts: pd.DataFrame, src: np.ndarray, tgt: np.ndarray) -> np.ndarray:
    """[len(src), len(tgt)] c[x, y] (0 where the pair never meets)."""
    grid = counts.pivot_table(index="src_id", columns="tgt_id", values="count", aggfunc="sum")
    return grid.reindex(index=src, columns=tgt).fillna(0.0).to_numpy()


def learned_grid(xi: Measure, sources: np.ndarray, targets: np.ndarray, src: np.ndarray,
                 tgt: np.ndarray) -> np.ndarray:
    """[len(src), len(tgt)] the mean of exp(xi[t, s]) over the probed rows and positions where
    source word x_s = src[i] meets target word y_t = tgt[j] (NaN where they never meet).
    ``sources``/``targets``: id arrays per example (targets from y_1 on, one per row t)."""
    tokens = row_tokens(sources, xi.keys)[:, : xi.values.shape[1]]
    words = targets[xi.keys // KEY_T, xi.keys % KEY_T]
    real = ~np.isnan(xi.values)
    i = np.searchsorted(np.sort(src), tokens)
    j = np.searchsorted(np.sort(tgt), words)
    i_ok = real & (np.sort(src)[np.minimum(i, len(src) - 1)] == tokens)
    j_ok = np.sort(tgt)[np.minimum(j, len(tgt) - 1)] == words
    keep = i_ok & j_ok[:, None]
    # cells in sorted-id order, then back to the pairs' order
    cell = i[keep] * len(tgt) + np.broadcast_to(j[:, None], keep.shape)[keep]
    size = len(src) * len(tgt)
    total = np.bincount(cell, weights=np.exp(xi.values[keep]), minlength=size)
    n = np.bincount(cell, minlength=size)
    with np.errstate(invalid="ignore"):
        grid = (total / n).reshape(len(src), len(tgt))
    return grid[np.ix_(np.argsort(np.argsort(src)), np.argsort(np.argsort(tgt)))]


def translation_count_figure(dataset: str, counts: pd.DataFrame, names: np.ndarray, learned: dict[int, np.ndarray],
                             src: np.ndarray, tgt: np.ndarray, path) -> None:
    """The count table of the pairs (src[i], tgt[i]) beside ``learned`` {U step: learned_grid}."""
    panels = [("count table c[x, y]", count_grid(counts, src, tgt), "Blues", None)]
    panels += [(f"uniform run, step {s}: p(y | x)", g, "Oranges", (0, 1)) for s, g in learned.items()]
    fig, axes = plt.subplots(1, len(panels), figsize=(3.3 * len(panels) + 0.6, 4.0), squeeze=False)
    for ax, (title, grid, cmap, limits) in zip(axes[0], panels):
        ax.imshow(np.nan_to_num(grid), cmap=cmap, vmin=limits[0] if limits else 0,
                  vmax=limits[1] if limits else max(grid.max(), 1e-9))
        for (r, c), v in np.ndenumerate(grid):  # per cell: a k x k grid, at most ~200 cells
            ax.text(c, r, "" if np.isnan(v) else f"{v:.2g}" if limits else f"{v:.0f}", ha="center",
                    va="center", fontsize=5)
        ax.set_xticks(range(len(tgt)), [str(names[t]) for t in tgt], rotation=90, fontsize=6)
        ax.set_yticks(range(len(src)), [str(names[s]) for s in src], fontsize=6)
        ax.set_xlabel("target word y", fontsize=7)
        ax.set_title(title, fontsize=8)
    axes[0, 0].set_ylabel("source word x", fontsize=7)
    _save(fig, f"{dataset}: the count table's most frequent pairs and the uniform model's learned "
          "translations (paper Fig. 1 right; blank: the pair never meets in the probed examples)", 8, path)


def count_polarity(counts: pd.DataFrame) -> pd.Series:
    """Per source word: t(1 | x) - t(0 | x) from the classification count table, in [-1, 1]."""
    by_label = counts.pivot_table(index="src_id", columns="tgt_id", values="count", aggfunc="sum").fillna(0.0)
    by_label = by_label.reindex(columns=[0, 1], fill_value=0.0)
    return (by_label[1] - by_label[0]) / (by_label[1] + by_label[0])


def word_means(m: Measure, sources: np.ndarray, values: np.ndarray) -> pd.Series:
    """Per token id: the mean of ``values`` ([rows, S], aligned with ``m``'s rows) over its
    occurrences in those rows."""
    tokens = row_tokens(sources, m.keys)[:, : values.shape[1]]
    keep = ~np.isnan(values) & np.isfinite(values)
    return pd.Series(values[keep]).groupby(tokens[keep]).mean()


def label_signs(m: Measure, labels: np.ndarray) -> np.ndarray:
    """[rows, 1] 2y - 1 of each row's example: undoes the gold-label sign of xi (methods 3)."""
    return (2.0 * labels[m.keys // KEY_T] - 1.0)[:, None]


def proxy_word_logit(xi_px: Measure, labels: np.ndarray) -> np.ndarray:
    """The proxy's logit of label 1 for each position's word alone, from xi^px = log sigma((2y - 1) z)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        signed = xi_px.values - np.log(-np.expm1(xi_px.values))  # logit of exp(xi^px)
    return signed * label_signs(xi_px, labels)


def polarity_figure(dataset: str, polarity: pd.Series, scores: dict[str, pd.Series], frequency: pd.Series,
                    names: np.ndarray, path, labelled: int = 10) -> None:
    """Per word (in the probed examples): count-table polarity against each model's score."""
    words = polarity.index.difference(special_ids(names))
    fig, axes = plt.subplots(1, len(scores), figsize=(4.2 * len(scores), 4), squeeze=False)
    for ax, (title, score) in zip(axes[0], scores.items()):
        ids = words.intersection(score.index)
        x, y = polarity.reindex(ids).to_numpy(), score.reindex(ids).to_numpy()
        size = 4 + 10 * np.log1p(frequency.reindex(ids).fillna(0).to_numpy())
        ax.scatter(x, y, s=size, alpha=0.5, lw=0)
        # the words the count table calls most polar among the frequent ones
        weight = np.abs(x) * np.log1p(frequency.reindex(ids).fillna(0).to_numpy())
        for idx in np.argsort(-weight)[:labelled]:
            ax.annotate(str(names[ids[idx]]), (x[idx], y[idx]), fontsize=6)
        rho = stats.spearmanr(x, y).statistic if len(ids) > 2 else float("nan")
        ax.set_title(f"{title}\nSpearman rho = {rho:.2f} over {len(ids)} words", fontsize=8)
        ax.set_xlabel("count table: t(1 | x) - t(0 | x)", fontsize=8)
        ax.axhline(0, color="gray", lw=0.5)
        ax.axvline(0, color="gray", lw=0.5)
    axes[0, 0].set_ylabel("per-word score (logit of label 1)", fontsize=8)
    _save(fig, f"{dataset}: word polarity, count table against the models (paper Fig. 5; "
          "marker size: the word's count-table total)", 9, path)


def _save(fig, title: str, fontsize: int, path) -> None:
    fig.suptitle(title, fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def count_figure(dataset: str, task: str, counts: pd.DataFrame, names: np.ndarray, valid: pd.DataFrame,
                 xi_at, xi_px: Measure, steps: list[int], pairs: int, path) -> None:
    """The dataset's count-table figure: ``xi_at(step)`` gives the uniform run's xi^uf at each
    of ``steps``; ``xi_px`` the proxy's probe (classification)."""
    sources = id_matrix(valid[source_column(task)])
    if task == "translation":
        src, tgt = top_pairs(counts, names, pairs)
        targets = id_matrix(valid["tgt_ids"].map(lambda ids: ids[1:]))  # y_1 .. y_T </s>: one per row t
        learned = {s: learned_grid(xi_at(s), sources, targets, src, tgt) for s in steps}
        translation_count_figure(dataset, counts, names, learned, src, tgt, path)
        return
    labels = valid["label"].to_numpy()
    scores = {"proxy: word logit": word_means(xi_px, sources, proxy_word_logit(xi_px, labels))}
    for s in steps:
        xi = xi_at(s)
        scores[f"uniform run, step {s}: beta"] = word_means(xi, sources, xi.values * label_signs(xi, labels))
    frequency = counts.groupby("src_id")["count"].sum()
    polarity_figure(dataset, count_polarity(counts), scores, frequency, names, path)
