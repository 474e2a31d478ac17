"""Tokenization (docs/methods.md 1.1-1.2).

Translation: one joint SentencePiece model over source and target training
text (pad=0, bos=1, eos=2, unk=3). Classification: a word vocabulary of the
tokens seen more than ``min_count - 1`` times in training, by frequency.
Every sequence is wrapped as ``<bos> ids <eos>``.

Gold word alignments / keyword positions are carried over to token positions
(a subword inherits the links of its word), offset by the leading ``<bos>``.
"""

from __future__ import annotations

import io
from collections import Counter

import numpy as np
import pandas as pd

PAD, BOS, EOS, UNK = 0, 1, 2, 3
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]


# --- translation: SentencePiece ---------------------------------------------------------------

def train_sentencepiece(texts, vocab_size: int, seed: int, character_coverage: float = 1.0) -> bytes:
    """Train a unigram SentencePiece model and return its serialized bytes."""
    import sentencepiece as spm

    spm.set_random_generator_seed(seed)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(texts), model_writer=model, vocab_size=vocab_size,
        model_type="unigram", pad_id=PAD, bos_id=BOS, eos_id=EOS, unk_id=UNK,
        character_coverage=character_coverage, hard_vocab_limit=False,
        num_threads=1,  # one thread keeps the model identical from run to run
        minloglevel=2,
    )
    return model.getvalue()


def load_sentencepiece(model_bytes: bytes):
    import sentencepiece as spm

    return spm.SentencePieceProcessor(model_proto=model_bytes)


def _word_index(pieces: list[str]) -> np.ndarray:
    """Word number of each piece: a piece starting with U+2581 starts a word."""
    return np.cumsum([p.startswith("\u2581") for p in pieces]) - 1


def word_starts(sp) -> np.ndarray:
    """bool [V]: the pieces that start a word (U+2581 first, as ``_word_index`` reads them)
    and the control pieces <pad>, <s>, </s>, each a word of its own."""
    out = np.array([sp.id_to_piece(i).startswith("\u2581") for i in range(sp.get_piece_size())])
    out[[PAD, BOS, EOS]] = True
    return out


def encode_pieces(sp, texts):
    """Token ids and the word index of every token for each text."""
    ids = sp.encode(list(texts), out_type=int)
    pieces = [[sp.id_to_piece(i) for i in seq] for seq in ids]
    return ids, [_word_index(p) for p in pieces]


def _project_links(tgt_words, src_words, align_tgt, align_src):
    """Token-level links (t, s) from word links; +1 on the source for <bos>.

    Target position t indexes the decoder's outputs (``y_1 .. y_T, </s>``), so
    it has no <bos> offset. The final </s> is linked to the source </s>.
    """
    n_tw, n_sw = tgt_words.max() + 1, src_words.max() + 1
    words = np.zeros((n_tw, n_sw), dtype=bool)
    words[np.asarray(align_tgt, dtype=int), np.asarray(align_src, dtype=int)] = True
    ts, ss = np.nonzero(words[tgt_words][:, src_words])
    ss = ss + 1
    ts = np.append(ts, len(tgt_words))
    ss = np.append(ss, len(src_words) + 1)
    return ts.astype(np.int32).tolist(), ss.astype(np.int32).tolist()


def tokenize_translation(splits: dict[str, pd.DataFrame], vocab_size: int, seed: int):
    """Returns (model bytes, {split: token table}).

    Token table columns: ``src_ids``, ``tgt_ids`` (wrapped), and when the data
    has gold alignments, ``gold_t``/``gold_s`` token-level links.
    """
    train = splits["train"]
    model = train_sentencepiece(pd.concat([train["src"], train["tgt"]]).tolist(), vocab_size, seed)
    sp = load_sentencepiece(model)
    out = {}
    for name, df in splits.items():
        src, src_w = encode_pieces(sp, df["src"])
        tgt, tgt_w = encode_pieces(sp, df["tgt"])
        table = pd.DataFrame({
            "src_ids": [[BOS, *s, EOS] for s in src],
            "tgt_ids": [[BOS, *t, EOS] for t in tgt],
        })
        if "align_tgt" in df:
            links = [_project_links(tw, sw, at, as_) for tw, sw, at, as_ in
                     zip(tgt_w, src_w, df["align_tgt"], df["align_src"])]
            table["gold_t"] = [t for t, _ in links]
            table["gold_s"] = [s for _, s in links]
        out[name] = table
    return model, out


# --- classification: word vocabulary ----------------------------------------------------------

def build_word_vocab(texts, min_count: int, known: set[str] | None = None) -> list[str]:
    """Specials, then training words seen at least ``min_count`` times or in ``known``
    (GloVe's words with ``tokenizer.glove_vocab``), by frequency (ties by word)."""
    counts = Counter(w for t in texts for w in t.split())
    known = known or set()
    words = sorted((w for w, c in counts.items() if c >= min_count or w in known), key=lambda w: (-counts[w], w))
    return SPECIALS + [w for w in words if w not in SPECIALS]


def tokenize_classification(splits: dict[str, pd.DataFrame], min_count: int, known: set[str] | None = None,
                            max_tokens: int | None = None):
    """Returns (vocab, {split: token table}) with ``ids``, ``label`` and optional ``gold_s``.

    ``max_tokens`` (not the paper's: a CPU budget) keeps the first ``max_tokens - 2`` words
    of each text between <bos> and <eos>; gold positions past the cut are dropped."""
    vocab = build_word_vocab(splits["train"]["text"], min_count, known)
    index = {w: i for i, w in enumerate(vocab)}
    keep = None if max_tokens is None else max_tokens - 2
    out = {}
    for name, df in splits.items():
        table = pd.DataFrame({
            "ids": [[BOS, *(index.get(w, UNK) for w in t.split()[:keep]), EOS] for t in df["text"]],
            "label": df["label"].astype("int8").to_numpy(),
        })
        if "keyword_pos" in df:
            table["gold_s"] = [[p + 1 for p in pos if keep is None or p < keep] for pos in df["keyword_pos"]]
        out[name] = table
    return vocab, out
