"""Generated datasets with known ground truth (no download needed).

``synthetic_mt``: a parallel corpus from a word-to-word lexicon. Source words
are Zipf distributed; the target is each word's translation with local
reordering, deletions and insertions, so the gold word alignment is known.

``synthetic_cls``: binary classification where a few class keywords among
distractor words decide the label; the keyword positions are the gold.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

_CONSONANTS = list("bcdfghjklmnprstvwz")
_VOWELS = list("aeiou")


def pseudo_words(n: int, rng: np.random.Generator, min_syll: int = 1, max_syll: int = 3) -> list[str]:
    """``n`` distinct pronounceable words (so SentencePiece sees word-like text)."""
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < n:
        k = rng.integers(min_syll, max_syll + 1)
        w = "".join(rng.choice(_CONSONANTS) + rng.choice(_VOWELS) for _ in range(k))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_probs(n: int, exponent: float) -> np.ndarray:
    p = 1.0 / np.arange(1, n + 1) ** exponent
    return p / p.sum()


def _lengths(rng, n, lo, hi):
    return rng.integers(lo, hi + 1, size=n)


def synthetic_mt(n_sentences: int, src_vocab: int, tgt_vocab: int, min_len: int, max_len: int,
                 zipf: float, p_swap: float, p_delete: float, p_insert: float, n_fillers: int,
                 seed: int, p_lexical: float = 1.0) -> pd.DataFrame:
    """Parallel sentences with gold alignments.

    Columns: ``src``, ``tgt`` (space-separated words), ``align_tgt`` and
    ``align_src`` (parallel lists of 0-based word indices of each gold link).
    ``tgt_vocab`` < ``src_vocab`` makes the lexicon many-to-one, as in real data.

    ``p_lexical``: the lexical signal, the probability that a source word's target word is its
    lexicon entry. Otherwise the target word is the entry of a source word drawn afresh from the
    source distribution: its position and gold link stay, its frequency stays, and it says
    nothing of the word it stands for (0: no target word depends on its source word; 1, the
    default: every one does, the corpus as it was before the knob). The draws come from a
    stream of their own, so every value shares the sentences, the edits and the links, and a
    lower value replaces a superset of the words a higher one replaces: a sweep over
    ``p_lexical`` changes nothing but the lexical signal.
    """
    rng = np.random.default_rng(seed)
    src_words = pseudo_words(src_vocab, rng)
    tgt_words = [w.upper() for w in pseudo_words(tgt_vocab + n_fillers, rng)]
    fillers, tgt_words = tgt_words[:n_fillers], tgt_words[n_fillers:]
    # every target word is used; the rest of the source words map at random
    if src_vocab < tgt_vocab:
        raise ValueError(f"synthetic_mt: src_vocab ({src_vocab}) must be >= tgt_vocab ({tgt_vocab})")
    lexicon = rng.permutation(np.concatenate([np.arange(tgt_vocab), rng.integers(0, tgt_vocab, src_vocab - tgt_vocab)]))
    probs = zipf_probs(src_vocab, zipf)
    if not 0 <= p_lexical <= 1:
        raise ValueError(f"synthetic_mt: p_lexical ({p_lexical}) must be between 0 and 1")
    # at p_lexical 1 nothing is drawn from it: today's corpora stay byte-identical
    noise = np.random.default_rng([seed, 1]) if p_lexical < 1 else None
    rows = []
    for length in _lengths(rng, n_sentences, min_len, max_len):
        src = rng.choice(src_vocab, size=length, p=probs)
        said = src  # the source word whose lexicon entry each position's target word is
        if noise is not None:  # drawn for every word whatever the value: the values share the draws
            keep, other = noise.random(length) < p_lexical, noise.choice(src_vocab, size=length, p=probs)
            said = np.where(keep, src, other)
        # (target word, source index or -1) in source order, then edited
        tgt = [(tgt_words[lexicon[said[i]]], i) for i in range(length) if rng.random() >= p_delete]
        for j in range(len(tgt) - 1):  # local reordering: swap neighbours
            if rng.random() < p_swap:
                tgt[j], tgt[j + 1] = tgt[j + 1], tgt[j]
        for j in sorted(np.nonzero(rng.random(len(tgt) + 1) < p_insert)[0], reverse=True):
            tgt.insert(j, (fillers[rng.integers(n_fillers)], -1))
        if not tgt:  # never emit an empty target
            tgt = [(tgt_words[lexicon[said[0]]], 0)]
        links = [(t, s) for t, (_, s) in enumerate(tgt) if s >= 0]
        rows.append({
            "src": " ".join(src_words[w] for w in src),
            "tgt": " ".join(w for w, _ in tgt),
            "align_tgt": [t for t, _ in links],
            "align_src": [s for _, s in links],
        })
    return pd.DataFrame(rows)


def synthetic_cls(n_sentences: int, vocab: int, keywords_per_class: int, min_len: int, max_len: int,
                  zipf: float, min_keywords: int, max_keywords: int, p_opposite: float,
                  seed: int) -> pd.DataFrame:
    """Keyword classification: the label is the class of the inserted keywords.

    With probability ``p_opposite`` one keyword of the other class is added as
    noise (the label's class always has more keywords). Columns: ``text``,
    ``label`` (0/1), ``keyword_pos`` (0-based word positions of the label's
    keywords: the gold).
    """
    rng = np.random.default_rng(seed)
    words = pseudo_words(vocab + 2 * keywords_per_class, rng)
    keywords = [words[:keywords_per_class], words[keywords_per_class: 2 * keywords_per_class]]
    distractors = words[2 * keywords_per_class:]
    probs = zipf_probs(vocab, zipf)
    labels = rng.integers(0, 2, size=n_sentences)
    rows = []
    for length, label in zip(_lengths(rng, n_sentences, min_len, max_len), labels):
        text = [distractors[i] for i in rng.choice(vocab, size=length, p=probs)]
        n_kw = int(rng.integers(min_keywords, max_keywords + 1))
        n_opp = int(n_kw >= 2 and rng.random() < p_opposite)
        kinds = [label] * n_kw + [1 - label] * n_opp
        positions = np.sort(rng.choice(length + len(kinds), size=len(kinds), replace=False))
        # inserting at ascending final positions leaves each word where it was put
        for pos, kind in zip(positions, rng.permutation(kinds)):
            text.insert(int(pos), keywords[kind][rng.integers(keywords_per_class)])
        gold = [p for p in positions if text[p] in keywords[label]]
        rows.append({"text": " ".join(text), "label": int(label), "keyword_pos": [int(p) for p in gold]})
    return pd.DataFrame(rows)


GENERATORS = {"synthetic_mt": synthetic_mt, "synthetic_cls": synthetic_cls}
