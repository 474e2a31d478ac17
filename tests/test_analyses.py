"""Defining properties of the analyses' formulas (docs/methods.md 9-12)."""

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from attnlearn.analyses import effective as E
from attnlearn.analyses import head_roles as R
from attnlearn.analyses import norms as N
from attnlearn.models.sites import head_norm_weights, layer_norm_weights


def _rand(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


# --- norm-based attention (9) -------------------------------------------------------------------

def test_head_and_layer_norm_weights():
    alpha = torch.softmax(_rand(2, 3, 4, 5), -1)
    f = _rand(2, 3, 5, 6, seed=1)
    per_head = head_norm_weights(alpha, f)
    assert torch.allclose(per_head[1, 2, 3, 4], (alpha[1, 2, 3, 4] * f[1, 2, 4]).norm())
    layer = layer_norm_weights(alpha, f, chunk_elems=1)  # chunked = whole
    assert torch.allclose(layer, layer_norm_weights(alpha, f))
    assert torch.allclose(layer[1, 3, 4], (alpha[1, :, 3, 4, None] * f[1, :, 4]).sum(0).norm())
    # one head: the layer measure is the head measure
    assert torch.allclose(layer_norm_weights(alpha[:, :1], f[:, :1]), per_head[:, 0])


def test_equal_weights_different_norms_align_to_the_larger_vector():
    alpha = torch.full((1, 1, 1, 3), 1 / 3, dtype=torch.float64)
    f = torch.zeros(1, 1, 3, 2, dtype=torch.float64)
    f[0, 0, :, 0] = torch.tensor([1.0, 5.0, 2.0])
    links = N.hard_alignment(head_norm_weights(alpha, f)[:, 0], torch.ones(1, 1, 3, dtype=torch.bool))
    assert links[0, 0].tolist() == [False, True, False]
    allowed = torch.tensor([[[True, False, True]]])
    assert N.hard_alignment(head_norm_weights(alpha, f)[:, 0], allowed)[0, 0].tolist() == [False, False, True]


def test_alignment_error_rate():
    sure = np.array([[1, 0, 0], [0, 1, 0]], dtype=bool)
    possible = sure | np.array([[0, 0, 0], [0, 0, 1]], dtype=bool)
    assert N.alignment_error_rate(sure, sure) == 0.0
    assert N.alignment_error_rate(~sure, sure) == 1.0
    pred = np.array([[1, 0, 0], [0, 0, 1]], dtype=bool)  # one sure hit, one possible-only hit
    assert N.alignment_error_rate(pred, sure, possible) == pytest.approx(1 - (1 + 2) / (2 + 2))
    assert N.alignment_error_rate(pred, sure) == pytest.approx(1 - (1 + 1) / 4)


# --- effective attention (10) -------------------------------------------------------------------

def test_effective_attention_leaves_the_output_unchanged_and_removes_the_null_space():
    S, d = 9, 4  # S > d: a null space exists
    values = _rand(3, 2, S, d)
    alpha = torch.softmax(_rand(3, 2, 5, S, seed=1), -1)
    a_eff, rank = E.effective_attention(alpha, values)
    assert (rank == d).all()
    assert torch.allclose(a_eff @ values, alpha @ values, atol=1e-12)
    assert not torch.allclose(a_eff, alpha)
    # adding a left-null-space vector to alpha changes nothing in A_eff
    U, _, _ = torch.linalg.svd(values, full_matrices=True)
    null = U[..., d:]  # [3, 2, S, S-d]
    shifted = alpha + (null @ _rand(3, 2, S - d, 5, seed=2)).transpose(-1, -2)
    assert torch.allclose(shifted @ values, alpha @ values, atol=1e-12)
    assert torch.allclose(E.effective_attention(shifted, values)[0], a_eff, atol=1e-12)
    # the renormalised variant is a distribution but changes the output
    mask = torch.ones(3, 2, 5, S, dtype=torch.bool)
    ren = E.renormalised(a_eff, mask)
    assert (ren >= 0).all() and torch.allclose(ren.sum(-1), torch.ones(3, 2, 5, dtype=torch.float64))
    assert (E.output_gap(alpha, ren, values) > 1e-6).any()
    assert torch.allclose(E.output_gap(alpha, a_eff, values), torch.zeros(3, 2, 5, dtype=torch.float64),
                          atol=1e-10)


def test_effective_equals_attention_when_source_is_no_longer_than_value_rank():
    values = _rand(4, 6, 8)  # S = 6 <= rank 8: the lstm case
    alpha = torch.softmax(_rand(4, 5, 6, seed=3), -1)
    a_eff, rank = E.effective_attention(alpha, values)
    assert (rank == 6).all() and torch.allclose(a_eff, alpha, atol=1e-12)


def test_effective_attention_ignores_pad_positions():
    values = _rand(1, 7, 3)
    values[:, 5:] = 0  # pads
    alpha = torch.softmax(_rand(1, 2, 7, seed=4).masked_fill(torch.arange(7) >= 5, -float("inf")), -1)
    a_eff, rank = E.effective_attention(alpha, values)
    assert (rank == 3).all() and torch.allclose(a_eff[..., 5:], torch.zeros(1, 2, 2, dtype=torch.float64))
    # the pads as a key mask instead of zero rows: the same
    values[:, 5:] = 1.0
    masked = E.effective_attention(alpha, values, (torch.arange(7) < 5).expand(2, 7))[0]
    assert torch.allclose(masked, a_eff, atol=1e-12)


def test_causal_effective_attention_stays_on_each_querys_visible_keys():
    """A causal query is projected on the null space of its own visible value rows: no effective
    weight on future keys, each query's output kept, the plain projection where no key is hidden.
    The target (10 keys) is longer than the value rank (head dim 4), so the null spaces exist."""
    K, d = 10, 4
    values = _rand(2, 3, K, d)
    causal = torch.ones(K, K, dtype=torch.bool).tril()
    alpha = torch.softmax(_rand(2, 3, K, K, seed=5).masked_fill(~causal, -float("inf")), -1)
    a_eff, rank = E.effective_attention(alpha, values, causal)
    assert (a_eff[..., ~causal] == 0).all()
    assert torch.allclose(a_eff @ values, alpha @ values, atol=1e-12)  # every query's head output
    assert rank.tolist() == [[list(range(1, d + 1)) + [d] * (K - d)] * 3] * 2  # the visible prefix's rank
    assert torch.allclose(a_eff[..., :d, :], alpha[..., :d, :], atol=1e-12)  # identifiable prefixes
    # the projection on all of the sentence's value rows (the fault) puts weight on future keys
    union, _ = E.effective_attention(alpha, values)
    assert union[..., ~causal].abs().sum() > 0.1 * union.abs().sum()
    # chunked over queries: the same numbers
    assert torch.equal(E.effective_attention(alpha, values, causal, chunk_elems=1)[0], a_eff)
    # non-causal: a mask every query shares gives the ordinary computation (pads as zero rows)
    pads = torch.arange(K) < 8
    shared = E.effective_attention(alpha.tril(), values, pads.expand(K, K))[0]
    assert torch.allclose(shared, E.effective_attention(alpha.tril(), values * pads[:, None])[0], atol=1e-12)


def test_transformer_decoder_self_attention_effective_weights_are_causal(mt_data):
    """On the model: the decoder self-attention sites' effective attention is 0 on future keys
    and keeps each query's head output, also where the target is longer than the head dim."""
    task, tables = mt_data
    model = _transformer(task)  # head dim 16 / 2 = 8
    valid = tables["valid"]
    longest = valid["tgt_ids"].map(len).sort_values().index[-6:]
    b = batch_of(task, valid.loc[longest].reset_index(drop=True))
    assert b["tgt_in"].shape[1] > 8
    with torch.no_grad():
        out = task.run(model, b)
        sites = attention_sites(model, b, out, ("dec_self",))
        for site in sites:
            alpha, values, a_eff, rank = A.site_effective(site, 1e-6)
            hidden = ~site.key_mask[:, None].expand_as(a_eff)
            assert (a_eff[hidden] == 0).all() and (rank < site.key_mask.sum(-1)[:, None]).any()
            assert torch.allclose(a_eff @ values, alpha @ values, atol=1e-8)


def test_top_k_and_erasure_split_the_output():
    alpha = torch.tensor([[0.1, 0.5, 0.3, 0.1, 0.0]], dtype=torch.float64)
    mask = torch.tensor([[True, True, True, True, False]])
    chosen = E.top_k_mask(alpha, mask, 2)
    assert chosen.tolist() == [[False, True, True, False, False]]
    assert E.top_k_mask(alpha, mask, 10).tolist() == mask.tolist()
    values = _rand(5, 3)
    kept, erased = E.erase(alpha, chosen, keep=True), E.erase(alpha, chosen, keep=False)
    assert torch.allclose(kept @ values + erased @ values, alpha @ values)


# --- head roles (12) ----------------------------------------------------------------------------

def test_uniform_attention_scores_one_and_peaked_attention_scores_n_over_sieve():
    B, Q, K = 2, 4, 6
    mask = torch.ones(B, Q, K, dtype=torch.bool)
    sieve = R.local_sieve(Q, K, 0).expand(B, Q, K)  # the diagonal only
    uniform = torch.full((B, 1, Q, K), 1 / K, dtype=torch.float64)
    valid = torch.ones(B, Q, dtype=torch.bool)
    assert torch.allclose(R.sieve_scores(uniform, sieve, mask, valid), torch.ones(B, 1, dtype=torch.float64))
    peaked = sieve.double().unsqueeze(1)
    assert torch.allclose(R.sieve_scores(peaked, sieve, mask, valid), torch.full((B, 1), float(K),
                                                                                 dtype=torch.float64))
    # padded keys do not count; a sentence without any sieve position scores NaN
    mask2 = mask.clone()
    mask2[1, :, 4:] = False
    s = R.sieve_scores(uniform, sieve & False, mask2, valid)
    assert torch.isnan(s).all()


# --- across seeds (docs/methods.md 9, 12) -------------------------------------------------------

from attnlearn.analyses import seeds as SD  # noqa: E402


def test_paired_test_equals_scipys_paired_t_test():
    weights, norms = np.array([0.30, 0.35, 0.28]), np.array([0.27, 0.33, 0.27])
    res = SD.paired_test(weights, norms)
    ref = stats.ttest_rel(norms, weights)
    assert res["gap"] == pytest.approx(-0.02) and res["n_seeds"] == 3
    assert (res["t"], res["p"]) == pytest.approx((ref.statistic, ref.pvalue))
    assert res["gap_ci_low"] < res["gap"] < res["gap_ci_high"]


def test_aer_seed_summary_pairs_each_seeds_weight_and_norm_at_its_best_checkpoint():
    rows = []
    for seed, (w, nrm) in enumerate([(0.30, 0.27), (0.35, 0.33), (0.28, 0.27)], start=1):
        for measure, aer in (("weight", w), ("norm", nrm)):
            rows += [{"dataset": "d", "arch": "transformer", "aer_mode": "kobayashi", "layer": 0, "head": -1,
                      "run": f"standard-s{seed}", "measure": measure, "best": True, "aer": aer},
                     {"dataset": "d", "arch": "transformer", "aer_mode": "kobayashi", "layer": 0, "head": 1,
                      "run": f"standard-s{seed}", "measure": measure, "best": True, "aer": 0.9},  # a head: not summarised
                     {"dataset": "d", "arch": "transformer", "aer_mode": "kobayashi", "layer": 0, "head": -1,
                      "run": f"standard-s{seed}", "measure": measure, "best": False, "aer": 0.9}]  # not the best step
    (row,) = SD.aer_seed_summary(pd.DataFrame(rows)).to_dict("records")
    assert row["n_seeds"] == 3 and row["weight"] == pytest.approx(0.31) and row["norm"] == pytest.approx(0.29)
    assert row["p"] == pytest.approx(stats.ttest_rel([0.27, 0.33, 0.27], [0.30, 0.35, 0.28]).pvalue)


def test_role_seed_summary_ranks_heads_within_each_seed():
    """Heads are exchangeable across seeds: seed 2 gives seed 1's strong head's role to
    another head index, and the ranks still line up."""
    scores = {1: [5.0, 1.0, 2.0], 2: [1.2, 2.2, 5.4]}
    rows = pd.DataFrame([{"dataset": "d", "arch": "transformer", "kind": "cross", "layer": 0, "role": "diagonal",
                          "run": f"standard-s{seed}", "head": h, "mean_score": v, "significant": v > 3}
                         for seed, vs in scores.items() for h, v in enumerate(vs)])
    out = SD.role_seed_summary(rows).set_index("rank")
    assert out.loc[1, "mean_score"] == pytest.approx(5.2) and out.loc[1, "share_significant"] == 1.0
    assert out.loc[3, "mean_score"] == pytest.approx(1.1) and out.loc[3, "share_significant"] == 0.0
    assert out.loc[1, "ci_low"] < 5.0 and out.loc[1, "ci_high"] > 5.4 and (out["n_seeds"] == 2).all()


def test_diagonal_sieve_band():
    s = R.diagonal_sieve(torch.tensor([4]), torch.tensor([5]), 4, 5, width=0)
    # 3 target words + </s>, 3 source words between <s> and </s>: word i -> source i + 1
    assert s[0].nonzero().tolist() == [[0, 1], [1, 2], [2, 3], [3, 4]]


# --- on the models ------------------------------------------------------------------------------

from attnlearn.analyses import rows as A  # noqa: E402
from attnlearn.models.sites import attention_sites  # noqa: E402
from attnlearn.analyses.tanhmax import (keyword_classes, keyword_weights, relative_signs,  # noqa: E402
                                        synthetic_cls_keywords)
from attnlearn.data.synthetic import synthetic_cls, synthetic_mt  # noqa: E402
from attnlearn.probing.probes import MEASURES, Probe  # noqa: E402
from attnlearn.models.tasks import make_task  # noqa: E402
from attnlearn.training.model import build_model  # noqa: E402
from conftest import CLS_OPTIONS, MT_OPTIONS, batch_of, run_params  # noqa: E402

SETTINGS = {"exclude_special": True, "seed": 0, "kinds": ["cross", "enc_self", "dec_self"], "erasure_k": [1],
            "rank_rtol": 1e-6, "tau": 1.0, "alpha": 0.05, "correction": "holm", "local_width": 2,
            "diagonal_width": 1}


def _transformer(task):
    params = run_params("translation")
    params["model"] = {"arch": "transformer", "hidden": 16, "layers": 2, "heads": 2, "ff": 16, "dropout": 0.0}
    return build_model(task, params).eval()


def test_lstm_norm_measure_and_effective_attention_equals_attention(mt_data):
    task, tables = mt_data
    model = build_model(task, run_params("translation")).eval()  # H = 16: value rank 16 >= S
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        (site,) = attention_sites(model, b, out)
        norm = MEASURES["norm"](Probe(task, model), b, out)
        f_norm = (out["enc"] @ model.proj.weight.T).norm(dim=-1)
        assert torch.allclose(norm, out["alpha"] * f_norm[:, None, :], atol=1e-6)
        assert b["src"].shape[1] <= 16
        a_eff, rank = E.effective_attention(site.alpha.double(), site.values.double(), site.key_mask[:, None])
        assert (rank == (b["src"] != 0).sum(1)[:, None, None]).all()
        assert torch.allclose(a_eff, site.alpha.double(), atol=1e-6)


def test_multi_head_lstm_analyses_rows(mt_data, starts_word):
    """Every analysis sees the LSTM's K heads as one cross-attention site of K heads."""
    task, tables = mt_data
    params = run_params("translation")
    params["model"] = {**params["model"], "heads": 3, "head_combine": "mean"}
    model = build_model(task, params).eval()
    valid = tables["valid"].iloc[:12]
    b = batch_of(task, valid)
    with torch.no_grad():
        out = task.run(model, b)
        (site,) = attention_sites(model, b, out)
        assert site.heads == 3 and torch.equal(site.alpha, out["heads"])
        # the head outputs sum to c_t without its bias
        by_heads = torch.einsum("bhts,bhsd->btd", site.alpha, site.values)
        assert torch.allclose(by_heads + model.proj.bias.view(3, -1).mean(0), model.context(out["heads"], out["enc"]),
                              atol=1e-5)
    roles = A.head_role_rows(task, model, valid, SETTINGS, 6, "cpu", has_gold=True)
    assert set(zip(roles["head"], roles["role"])) == {(h, r) for h in range(3)
                                                     for r in ("diagonal", "delimiter", "gold_alignment")}
    eff = pd.DataFrame(A.effective_rows(task, model, valid, SETTINGS, 6, "cpu"))
    gaps = eff[eff["metric"] == "output_gap_effective"]
    assert sorted(gaps["head"]) == [0, 1, 2] and (gaps["value"] < 1e-6).all()
    aer = pd.DataFrame(A.alignment_rows(task, model, valid, SETTINGS, 6, "cpu", starts_word))
    assert set(aer["head"]) == {-1, 0, 1, 2}


def test_transformer_analyses_rows(mt_data, starts_word):
    task, tables = mt_data
    model = _transformer(task)
    valid = tables["valid"].iloc[:12]
    eff = pd.DataFrame(A.effective_rows(task, model, valid, SETTINGS, 6, "cpu"))
    gaps = eff[eff["metric"] == "output_gap_effective"]["value"]
    assert len(gaps) == 3 * 2 * 2 and (gaps < 1e-6).all()  # sites x layers x heads, output unchanged
    suff = eff[(eff["test"] == "sufficiency") & (eff["metric"] == "output_change")]
    assert set(suff["ranker"]) == {"raw", "norm", "effective", "renormalised", "random"}
    roles = A.head_role_rows(task, model, valid, SETTINGS, 6, "cpu", has_gold=True)
    assert set(roles["role"]) == {"local", "delimiter", "diagonal", "gold_alignment"}
    assert ((roles["p_adjusted"] >= roles["p"]) | roles["p"].isna()).all()
    has = roles["n_sentences"] > 1  # each head's 95% interval over sentences, to compare heads
    assert ((roles["ci_low"] <= roles["mean_score"]) & (roles["mean_score"] <= roles["ci_high"]))[has].all()
    aer = pd.DataFrame(A.alignment_rows(task, model, valid, SETTINGS, 6, "cpu", starts_word))
    assert set(aer["head"]) == {-1, 0, 1} and aer["aer"].between(0, 1).all()
    assert set(aer["aer_mode"]) == {"kobayashi", "pieces"}
    norms = pd.DataFrame(A.norm_rows(task, model, valid, 6, "cpu"))
    shares = norms.groupby(["kind", "layer", "head"])["weight_share"].sum()
    assert np.allclose(shares, 1.0)  # bos + eos + words = the whole row


def test_gold_links_as_arrays(mt_data):
    task, tables = mt_data
    valid = tables["valid"]
    b = batch_of(task, valid, 4)
    sure = A.sure_links(valid, np.arange(4), (4, b["tgt_out"].shape[1], b["src"].shape[1]))
    assert int(sure.sum()) == sum(len(x) for x in valid["gold_t"].iloc[:4])
    allowed, rows = A.alignment_masks(b, sure, True)
    assert not allowed[:, 0, 0].any() and not (rows & (b["tgt_out"] == 2)).any()


def _toy_alignment():
    """Source <s> a1 a2 b </s> (word a in two pieces), target x1 x2 y </s> (word x in two
    pieces), gold words x-a, y-b. Piece ids: <s> 1, </s> 2, a1 10, a2 11, b 12, x1 20, x2 21,
    y 22 (10, 12, 20, 22 start a word). Attention rows (x1, x2, y, </s>) over (<s> a1 a2 b </s>):
    x1 peaks on a2; x2 on b (a's pieces sum higher); y on </s>."""
    starts = torch.zeros(30, dtype=torch.bool)
    starts[[0, 1, 2, 10, 12, 20, 22]] = True
    b = {"src": torch.tensor([[1, 10, 11, 12, 2]]), "tgt_out": torch.tensor([[20, 21, 22, 2]])}
    sure = torch.zeros(1, 4, 5, dtype=torch.bool)
    sure[0, :2, 1:3] = True  # x1, x2 -> a1, a2
    sure[0, 2, 3] = True  # y -> b
    sure[0, 3, 4] = True  # </s> -> </s> (the token links' convention)
    scores = torch.tensor([[[0.0, 0.1, 0.4, 0.3, 0.2],
                            [0.0, 0.2, 0.2, 0.35, 0.25],
                            [0.0, 0.1, 0.1, 0.3, 0.5],
                            [0.0, 0.0, 0.0, 0.1, 0.9]]])
    return b, sure, starts, scores


def test_aer_modes_kobayashi_words_and_our_pieces():
    """Kobayashi et al.'s mode merges pieces into words and drops the link of y, whose argmax
    is </s>; ours scores pieces, argmax over source words only: x1-a2 hit, x2-b miss, y-b hit."""
    b, sure, starts, scores = _toy_alignment()
    views = A.alignment_views(b, sure, {"exclude_special": True}, starts)
    pieces, words = views["pieces"], views["kobayashi"]
    assert pieces.links(scores).tolist() == [[False, False, True, False, False], [False, False, False, True, False],
                                             [False, False, False, True, False]]
    assert N.alignment_error_rate(pieces.links(scores), pieces.gold) == pytest.approx(1 - 2 * 2 / (3 + 5))
    # words: <s>, a, b, </s> on the source; x, y on the target (the </s> row is not scored)
    assert words.gold.tolist() == [[False, True, False, False], [False, False, True, False]]
    assert words.links(scores).tolist() == [[False, True, False, False], [False, False, False, False]]
    assert N.alignment_error_rate(words.links(scores), words.gold) == pytest.approx(1 - 2 * 1 / (1 + 2))
    # x's row is the mean of x1's and x2's: a = (0.5 + 0.4) / 2 beats b = (0.3 + 0.35) / 2
    tgt = N.members(N.word_index(b["tgt_out"], starts).masked_fill(b["tgt_out"] == 2, -1))
    merged = N.word_scores(scores, tgt, N.members(N.word_index(b["src"], starts)))
    assert torch.allclose(merged[0, 0], torch.tensor([0.0, 0.45, 0.325, 0.225]))


def test_word_level_gold_is_the_datas_word_alignment(mt_tokenized, starts_word):
    """The gold links are stored per SentencePiece piece (a piece inherits its word's links);
    merged back into words with the pieces' word starts, they are the generator's word
    alignment exactly, and the words are the text's words."""
    _, tables = mt_tokenized
    raw = synthetic_mt(n_sentences=260, seed=0, **MT_OPTIONS).iloc[200:208]
    valid = tables["valid"].iloc[:8]
    b = batch_of(make_task("translation", len(starts_word)), valid, 8)
    sure = A.sure_links(valid, np.arange(8), (8, b["tgt_out"].shape[1], b["src"].shape[1]))
    words = A.WordAlignment(b, sure, torch.as_tensor(starts_word))
    n_tgt = words.rows.sum(1).tolist()
    assert n_tgt == [len(t.split()) for t in raw["tgt"]]
    assert (words.src.sum(1) > 0).sum(1).tolist() == [len(t.split()) + 2 for t in raw["src"]]  # and <s>, </s>
    gold = np.split(words.gold.numpy(), np.cumsum(n_tgt)[:-1])
    for g, (_, row) in zip(gold, raw.iterrows()):
        assert sorted(zip(*np.nonzero(g))) == sorted(zip(row["align_tgt"], [s + 1 for s in row["align_src"]]))


def test_synthetic_cls_keywords_are_the_generators():
    data = synthetic_cls(n_sentences=50, seed=3, **CLS_OPTIONS)
    neg, pos = synthetic_cls_keywords(CLS_OPTIONS, 3)
    for text, label, gold in zip(data["text"], data["label"], data["keyword_pos"]):
        words = text.split()
        assert all(words[p] in (pos if label else neg) for p in gold)
    vocab = ["<pad>", "<s>", "</s>", "<unk>", pos[0], neg[0], "other"]
    assert keyword_classes(np.array([[1, 4, 5, 6, 2, 0]]), vocab, (neg, pos)).tolist() == [[9, 1, -1, 0, 9, 9]]


def test_head_role_labels_mark_significance_with_and_without_missing_roles():
    """The heatmap's stars: ** corrected, * uncorrected only, also when every site has every
    role (bool pivot) and when some site lacks one (object pivot with NaN)."""
    from attnlearn.reporting.analysis_figures import role_cells

    rows = pd.DataFrame({"kind": "cross", "layer": 0, "head": [0, 0, 1, 1], "role": ["diagonal", "delimiter"] * 2,
                         "mean_score": [4.0, 1.0, 3.2, 2.0], "significant": [True, False, False, False],
                         "significant_uncorrected": [True, False, True, False]})
    _, labels = role_cells(rows)
    assert labels.loc["cross L0 H0", "diagonal"] == "4.0**" and labels.loc["cross L0 H1", "diagonal"] == "3.2*"
    assert labels.loc["cross L0 H0", "delimiter"] == "1.0"
    self_row = pd.DataFrame({"kind": "enc_self", "layer": 0, "head": [0], "role": ["local"], "mean_score": [5.0],
                             "significant": [True], "significant_uncorrected": [True]})
    _, labels = role_cells(pd.concat([rows, self_row], ignore_index=True))
    assert labels.loc["enc_self L0 H0", "local"] == "5.0**" and labels.loc["enc_self L0 H0", "diagonal"] == ""
    assert labels.loc["cross L0 H0", "diagonal"] == "4.0**"


def test_tanhmax_comparison_reports_the_task_metric_not_bleu():
    """A translation run's perf frame also holds BLEU rows; the performance row is the
    token accuracy at the best checkpoint."""
    from attnlearn.analyses.tanhmax import comparison
    from attnlearn.data.probe_table import probe_table

    def probe(measure):  # one example, one target row over 3 source positions, steps 0 and 10
        return probe_table({"step": np.array([0, 10]), "example": np.zeros(2), "t": np.zeros(2), "n": np.full(2, 3),
                            "measures": {measure: np.array([0.1, 0.8, 0.1, 0.2, 0.7, 0.1])}})

    perf = pd.DataFrame({"step": [0, 10, 0, 10], "metric": ["token_accuracy"] * 2 + ["bleu"] * 2,
                         "value": [0.5, 0.8, 0.1, 0.95]})
    runs = {"standard-s1": "A", "uniform-s1": "U", "tanhmax-s1": "T"}
    probes = {r: probe("xi" if role == "U" else "alpha") for r, role in runs.items()}
    rows = comparison("d", probes, {r: perf for r in runs}, runs)
    accuracy = rows[rows["metric"] == "token_accuracy"]
    assert list(accuracy["value"]) == [0.8, 0.8] and list(accuracy["step"]) == [10, 10]
    assert "bleu" not in set(rows["metric"])


def _flipped(model):
    """The same classifier with its attention scorer and beta negated."""
    import copy

    flip = copy.deepcopy(model)
    with torch.no_grad():
        for layer in (flip.att_score, flip.beta):
            layer.weight.neg_()
            layer.bias.neg_()
    return flip


def test_tanhmax_sign_is_not_identifiable_and_the_reported_signs_do_not_depend_on_it(cls_tokenized):
    """Negating the classifier's scorer and beta gives the same logits with every TanhMax
    weight's sign flipped; the relative-sign measures and |weight| are unchanged, only the
    signed means flip."""
    vocab, tables = cls_tokenized
    task = make_task("classification", len(vocab))
    params = run_params("classification", variant="tanhmax")
    model = build_model(task, params).eval()
    valid = tables["valid"]
    b = task.batch(valid, np.arange(len(valid)))
    with torch.no_grad():
        model.att_score.weight.mul_(30)  # scores of a trained model's size: weights of both signs, not near 0
        out, flip = task.run(model, b), task.run(_flipped(model), b)
    torch.testing.assert_close(flip["logit"], out["logit"], rtol=1e-6, atol=1e-7)
    torch.testing.assert_close(flip["alpha"], -out["alpha"], rtol=0, atol=1e-7)
    assert (out["alpha"].abs() > 0.02).float().mean() > 0.5 and (out["alpha"] < -0.02).any()
    classes = keyword_classes(b["ids"].numpy(), vocab, synthetic_cls_keywords(CLS_OPTIONS, 0))
    labels = b["label"].numpy().astype(int)

    def reported(alpha):
        alpha = alpha.masked_fill(b["ids"] == 0, float("nan")).double().numpy()
        return {**keyword_weights(alpha, classes), **relative_signs(alpha, classes, labels)}

    before, after = reported(out["alpha"]), reported(flip["alpha"])
    assert before["n_both_classes"] > 0 and not np.isnan(before["relative_sign_positive_keyword"])
    for metric, value in before.items():
        expected = -value if metric.startswith("signed_") else value
        assert after[metric] == pytest.approx(expected, abs=1e-6, nan_ok=True), metric


def test_relative_signs_by_hand():
    """Row 0 (label 1): positive keyword +0.5, negative keyword -0.3; row 1 (label 0): negative
    keywords -0.4 and -0.2, a neutral word +0.1. s0 = sign(mean negative) = -1."""
    alpha = np.array([[0.5, -0.3, np.nan], [-0.4, -0.2, 0.1]])
    classes = np.array([[1, -1, 9], [-1, -1, 0]])
    out = relative_signs(alpha, classes, np.array([1, 0]))
    assert out["relative_sign_positive_keyword"] == -1.0 and out["relative_sign_negative_keyword"] == 1.0
    assert out["opposite_sign_share"] == 1.0 and out["n_both_classes"] == 1
    assert out["n_both_classes_label0"] == 0 and np.isnan(out["opposite_sign_share_label0"])
    assert np.isnan(out["relative_sign_positive_keyword_label0"])
    weights = keyword_weights(alpha, classes)
    assert weights["signed_weight_negative_keyword"] == pytest.approx(-0.3)
    assert weights["abs_weight_negative_keyword"] == pytest.approx(0.3) and weights["n_neutral_word"] == 1


def test_tanhmax_agreement_ranks_by_magnitude():
    """A TanhMax row whose largest weight is negative: agreement with xi^uf ranks |alpha|, as
    every other agreement; the signed argmax is reported under its own name."""
    from attnlearn.analyses.tanhmax import comparison
    from attnlearn.data.probe_table import probe_table

    def probe(values):  # one example, one row over 3 positions, steps 0 and 10
        return probe_table({"step": np.array([0, 10]), "example": np.zeros(2), "t": np.zeros(2), "n": np.full(2, 3),
                            "measures": {"alpha": np.array(values * 2), "xi": np.array([0.0, 1.0, 0.0] * 2)}})

    runs = {"standard-s1": "A", "uniform-s1": "U", "tanhmax-s1": "T"}
    probes = {"standard-s1": probe([0.1, 0.8, 0.1]), "uniform-s1": probe([1 / 3] * 3),
              "tanhmax-s1": probe([0.1, -0.8, 0.3])}
    perf = pd.DataFrame({"step": [0, 10], "metric": "accuracy", "value": [0.5, 0.8]})
    rows = comparison("d", probes, {r: perf for r in runs}, runs).set_index(["activation", "metric"])["value"]
    assert rows["tanhmax", "agreement_alpha_xi_uniform"] == 1.0 == rows["softmax", "agreement_alpha_xi_uniform"]
    assert rows["tanhmax", "agreement_signed_alpha_xi_uniform"] == 0.0
