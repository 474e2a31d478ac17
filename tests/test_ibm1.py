"""IBM Model 1 by EM: likelihood rises, a known lexicon is recovered, and its
alignment table has the probe-table layout the agreement code reads."""

import numpy as np
import pytest

from attnlearn.data import counts as C
from attnlearn.agreement.metric import load_measure
from attnlearn.training.ibm1 import IBM1


def corpus(n=600, vocab=12, seed=0):
    """Target = each source word's translation, shuffled: only co-occurrence tells which."""
    rng = np.random.default_rng(seed)
    lexicon = rng.permutation(vocab) + 3
    src = [rng.integers(3, 3 + vocab, size=rng.integers(2, 7)) for _ in range(n)]
    tgt = [lexicon[s - 3][rng.permutation(len(s))] for s in src]
    return src, tgt, lexicon


def test_em_increases_likelihood_and_recovers_the_lexicon():
    src, tgt, lexicon = corpus()
    model = IBM1(20, 20).fit(src, tgt, iterations=8)
    ll = np.array(model.log_likelihood)
    assert np.all(np.diff(ll) > 0)
    table = model.frame()
    best = table[table["src_id"] < 20].sort_values("t").groupby("src_id").tail(1).set_index("src_id")["tgt_id"]
    assert all(best[x] == lexicon[x - 3] for x in range(3, 15))
    sums = table.groupby("src_id")["t"].sum()
    assert np.allclose(sums, 1.0)


def test_first_iteration_is_the_count_table_with_null():
    src, tgt, _ = corpus(n=50)
    model = IBM1(20, 20).fit(src, tgt, iterations=1)
    with_null = [np.append(s, 20) for s in src]  # the NULL word as source id 20
    counts = C.translation_table(C.count_matrix(with_null, tgt, 21, 20)).toarray()
    t = np.zeros((21, 20))
    frame = model.frame()
    t[frame["src_id"], frame["tgt_id"]] = frame["t"]
    assert np.allclose(t, counts)


def test_chunked_fit_equals_one_chunk(monkeypatch):
    src, tgt, _ = corpus(n=80)
    whole = IBM1(20, 20).fit(src, tgt, iterations=3)
    monkeypatch.setattr("attnlearn.training.ibm1.CHUNK_PAIRS", 37)
    chunked = IBM1(20, 20).fit(src, tgt, iterations=3)
    assert np.allclose(whole.t, chunked.t) and np.allclose(whole.log_likelihood, chunked.log_likelihood)


def test_alignment_table_is_a_probe_table_pointing_at_the_translation():
    src, tgt, lexicon = corpus()
    model = IBM1(20, 20).fit(src, tgt, iterations=8)
    table = model.alignment_table(src[:30], tgt[:30])
    assert set(table.column_names) == {"step", "example", "t", "n", "ibm1"}
    assert table.num_rows == sum(len(t) for t in tgt[:30])
    m = load_measure(table, "ibm1", 0)
    frame = table.to_pandas()
    hits = [src[ex][int(np.argmax(v))] == np.nonzero(lexicon == tgt[ex][t])[0][0] + 3
            for ex, t, v in zip(frame["example"], frame["t"], frame["ibm1"])]
    assert np.mean(hits) > 0.95
    assert np.all(np.exp(m.values[~np.isnan(m.values)]) <= 1 + 1e-6)


def test_unseen_pairs_have_zero_probability():
    model = IBM1(5, 5).fit([np.array([0, 1])], [np.array([2])], iterations=2)
    assert model.prob(np.array([3]), np.array([4]))[0] == 0
    assert model.prob(np.array([0]), np.array([2]))[0] == pytest.approx(1.0)


def test_log_likelihood_is_a_probability_of_the_targets():
    src, tgt, _ = corpus(n=40)
    model = IBM1(20, 20).fit(src, tgt, iterations=6)
    ll = np.array(model.log_likelihood)
    assert (ll < 0).all()
    # under uniform t every target token has probability 1 / n_tgt
    assert ll[0] == pytest.approx(-sum(len(f) for f in tgt) * np.log(20))
