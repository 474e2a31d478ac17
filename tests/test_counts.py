"""The count table against a brute-force count, and the count-based alignment scores."""

from collections import Counter

import numpy as np
import pytest

from attnlearn.data import counts as C


def brute_force(src_seqs, tgt_seqs):
    table = Counter()
    for src, tgt in zip(src_seqs, tgt_seqs):
        for x in src:
            for y in tgt:
                table[x, y] += 1 / len(src)
    return table


def test_count_table_matches_brute_force(mt_data):
    task, tables = mt_data
    src, tgt = C.translation_sides(tables["train"])
    matrix = C.count_matrix(src, tgt, task.vocab_size, task.vocab_size)
    expected = brute_force(src, tgt)
    frame = C.count_frame(matrix)
    assert len(frame) == len(expected)
    for x, y, c in frame[["src_id", "tgt_id", "count"]].itertuples(index=False):
        assert c == pytest.approx(expected[x, y])
    sums = frame.groupby("src_id")["t_tgt_given_src"].sum()
    assert np.allclose(sums, 1.0)


def test_classification_counts_use_the_label(cls_data):
    task, tables = cls_data
    src, tgt = C.classification_sides(tables["train"])
    matrix = C.count_matrix(src, tgt, task.vocab_size, 2).toarray()
    expected = brute_force(src, tgt)
    for (x, y), c in expected.items():
        assert matrix[x, y] == pytest.approx(c)


def test_count_scores_are_log_translation_probabilities(mt_data):
    task, tables = mt_data
    matrix = C.count_matrix(*C.translation_sides(tables["train"]), task.vocab_size, task.vocab_size)
    t_table = C.translation_table(matrix)
    src = np.array([[1, 5, 6, 2]])
    tgt = np.array([[7, 2]])
    scores = C.count_scores(t_table, src, tgt)
    dense = t_table.toarray()
    for t in range(2):
        for s in range(4):
            assert scores[0, t, s] == pytest.approx(np.log(max(dense[src[0, s], tgt[0, t]], 1e-12)))
