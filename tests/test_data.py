"""Synthetic generators and tokenization keep the gold truth intact."""

from collections import defaultdict

import numpy as np
import pandas as pd
import pytest

from attnlearn.data.prepare import prepare
from attnlearn.data.synthetic import synthetic_cls, synthetic_mt
from attnlearn.data.tokenize import BOS, EOS, UNK, load_sentencepiece, tokenize_classification, tokenize_translation
from conftest import CLS_OPTIONS, MT_OPTIONS


def test_synthetic_mt_links_follow_one_lexicon():
    data = synthetic_mt(n_sentences=300, seed=3, **MT_OPTIONS)
    translation = defaultdict(set)
    for src, tgt, at, as_ in data[["src", "tgt", "align_tgt", "align_src"]].itertuples(index=False):
        s, t = src.split(), tgt.split()
        for ti, si in zip(at, as_):
            translation[s[si]].add(t[ti])
    assert all(len(v) == 1 for v in translation.values())
    unlinked = sum(len(t.split()) - len(a) for t, a in zip(data["tgt"], data["align_tgt"]))
    assert unlinked > 0  # insertions exist and carry no link


def test_synthetic_is_seeded():
    a = synthetic_mt(n_sentences=20, seed=1, **MT_OPTIONS)
    assert a.equals(synthetic_mt(n_sentences=20, seed=1, **MT_OPTIONS))
    assert not a.equals(synthetic_mt(n_sentences=20, seed=2, **MT_OPTIONS))


def test_synthetic_cls_keywords_decide_the_label():
    data = synthetic_cls(n_sentences=400, seed=0, **CLS_OPTIONS)
    words_by_label = [set(), set()]
    for text, label, pos in data[["text", "label", "keyword_pos"]].itertuples(index=False):
        words = text.split()
        assert len(pos) >= 1
        words_by_label[label].update(words[p] for p in pos)
    assert not words_by_label[0] & words_by_label[1]
    assert len(words_by_label[0]) == len(words_by_label[1]) == CLS_OPTIONS["keywords_per_class"]


def test_prepare_cuts_one_corpus_into_splits():
    source = {"kind": "synthetic_mt", "splits": {"train": 30, "valid": 5, "test": 4}, "seed": 0,
              "options": MT_OPTIONS}
    splits = prepare(source, {})
    assert [len(splits[s]) for s in ("train", "valid", "test")] == [30, 5, 4]


def test_token_links_project_word_links(mt_data):
    task, tables = mt_data
    data = synthetic_mt(n_sentences=260, seed=0, **MT_OPTIONS)[200:].reset_index(drop=True)
    model, again = tokenize_translation({"train": synthetic_mt(n_sentences=260, seed=0, **MT_OPTIONS)[:200],
                                         "valid": data}, 120, 0)
    sp = load_sentencepiece(model)
    for i in range(len(data)):
        row = again["valid"].iloc[i]
        src_ids, tgt_ids = row["src_ids"], row["tgt_ids"]
        assert src_ids[0] == BOS and src_ids[-1] == EOS and tgt_ids[0] == BOS and tgt_ids[-1] == EOS
        src_pieces = [sp.id_to_piece(int(x)) for x in src_ids[1:-1]]
        tgt_pieces = [sp.id_to_piece(int(x)) for x in tgt_ids[1:-1]]
        src_word = np.cumsum([p.startswith("\u2581") for p in src_pieces]) - 1
        tgt_word = np.cumsum([p.startswith("\u2581") for p in tgt_pieces]) - 1
        word_links = set(zip(data["align_tgt"][i], data["align_src"][i]))
        token_links = set(zip(row["gold_t"], row["gold_s"]))
        expected = {(t, s + 1) for t in range(len(tgt_pieces)) for s in range(len(src_pieces))
                    if (tgt_word[t], src_word[s]) in word_links}
        expected.add((len(tgt_pieces), len(src_ids) - 1))  # </s> -> </s>
        assert token_links == expected


def test_word_vocab_keeps_frequent_words_and_maps_rest_to_unk():
    import pandas as pd
    train = pd.DataFrame({"text": ["a a a b b c", "a b b"], "label": [0, 1]})
    vocab, tables = tokenize_classification({"train": train, "valid": train}, min_count=3)
    assert vocab[4:] == ["a", "b"]
    assert tables["train"]["ids"][0] == [BOS, 4, 4, 4, 5, 5, UNK, EOS]


def test_unknown_source_kind_is_refused():
    with pytest.raises(ValueError, match="unknown source kind"):
        prepare({"kind": "nope"}, {})


def test_classification_max_tokens_cuts_texts_and_their_gold():
    splits = {"train": pd.DataFrame({"text": ["a b c d e", "a b"], "label": [1, 0], "keyword_pos": [[0, 4], [1]]})}
    vocab, full = tokenize_classification(splits, 1)
    _, cut = tokenize_classification(splits, 1, max_tokens=4)
    assert cut["train"]["ids"][0] == full["train"]["ids"][0][:3] + [EOS]
    assert cut["train"]["ids"][1] == full["train"]["ids"][1]
    assert cut["train"]["gold_s"].tolist() == [[1], [2]]
