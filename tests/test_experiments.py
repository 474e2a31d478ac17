"""The controlled experiments' library (src/attnlearn/toy): copy distributions,
the K-head toy model, training curves, count tables and the keyword toy."""

import numpy as np
import pandas as pd
import pytest
import torch

from attnlearn.experiments import copying as E
from attnlearn.experiments import multihead as M
from attnlearn.experiments.data import CopyTask
from attnlearn.experiments.keyword import KEYWORD, log_odds, sample, train_keyword
from attnlearn.experiments.model import ToySeq2Seq
from attnlearn.experiments.train import build, convergence, evaluate, train_curve


def test_40_of_40_inputs_are_permutations_of_the_whole_vocabulary():
    task = CopyTask(vocab=40, length=40)
    src, tgt = task.sample(64, np.random.default_rng(0))
    assert src.shape == tgt.shape == (64, 41)
    assert (np.sort(src[:, :40], 1) == np.arange(40)).all()
    assert (src[:, 40] == task.eos).all() and (tgt == src).all()
    assert len({tuple(r) for r in src}) == 64  # different orders


def test_40_of_60_inputs_are_distinct_tokens_covering_the_vocabulary():
    src, _ = CopyTask(vocab=60, length=40).sample(200, np.random.default_rng(0))
    body = src[:, :40]
    assert all(len(set(r)) == 40 for r in body)
    assert set(body.ravel()) == set(range(60))


def test_mixture_draws_each_input_from_one_of_two_disjoint_sets():
    src, _ = CopyTask(vocab=80, length=40, sets=2).sample(100, np.random.default_rng(1))
    low = (src[:, :40] < 40).all(1)
    high = (src[:, :40] >= 40).all(1)
    assert (low | high).all() and low.any() and high.any()
    assert (np.sort(src[low, :40], 1) == np.arange(40)).all()
    assert (np.sort(src[high, :40], 1) == np.arange(40, 80)).all()


def test_permutation_function_reorders_by_one_fixed_permutation():
    task = CopyTask(vocab=60, length=40, reorder=True, reorder_seed=3)
    order = task.order()
    assert sorted(order) == list(range(40)) and (order != np.arange(40)).any()
    src, tgt = task.sample(10, np.random.default_rng(0))
    assert (tgt[:, :40] == src[:, order]).all() and (tgt[:, 40] == task.eos).all()
    assert (task.gold() == np.append(order, 40)).all()
    b = task.batch(10, np.random.default_rng(0))
    assert (b["tgt_in"][:, 0] == task.bos).all() and (b["tgt_in"][:, 1:] == b["tgt_out"][:, :-1]).all()


def test_bad_task_is_refused():
    with pytest.raises(ValueError):
        CopyTask(vocab=50, length=40, sets=2)


def test_count_table_of_40_of_40_is_flat_and_the_control_is_not():
    flat = E.copy_counts("p40", {"vocab": 40, "length": 40}, 300, 0)
    content = flat[(flat["src_id"] < 40) & (flat["tgt_id"] < 40)]
    assert len(content) == 40 * 40  # every word co-occurs with every word
    assert np.allclose(content["t_tgt_given_src"], content["t_tgt_given_src"].iloc[0])
    control = E.copy_counts("p60", {"vocab": 60, "length": 40}, 3000, 0)
    contrast = E.count_contrast(pd.concat([flat, control])).set_index("task")
    assert contrast.loc["p40", "ratio"] == pytest.approx(1.0)
    assert contrast.loc["p60", "ratio"] == pytest.approx(59 / 39, rel=0.05)  # P(x in | x in) / P(y in | x in)


def tiny_model(heads=1, combine="sum", seed=0):
    torch.manual_seed(seed)
    return ToySeq2Seq(12, hidden=8, heads=heads, combine=combine)


def test_mean_of_identical_heads_is_one_head_and_sum_is_not():
    task = CopyTask(vocab=10, length=6)
    one = tiny_model()
    head = one.heads[0].state_dict()
    b = task.batch(4, np.random.default_rng(0))
    ref = one(b["src"], b["tgt_in"])["logits"]
    for combine, same in (("mean", True), ("sum", False)):
        many = ToySeq2Seq(12, hidden=8, heads=3, combine=combine)
        many.load_state_dict(one.base_state(), strict=False)
        many.set_heads([head] * 3)
        out = many(b["src"], b["tgt_in"])
        assert out["alpha"].shape == (3, 4, 7, 7)
        assert torch.allclose(out["logits"], ref, atol=1e-6) == same


def test_sum_combines_the_heads_contexts():
    model = tiny_model(heads=2, combine="sum")
    task = CopyTask(vocab=10, length=6)
    b = task.batch(3, np.random.default_rng(0))
    enc, state = model.encoder(model.embed(b["src"]))
    dec = model.decoder(model.embed(b["tgt_in"]), state)[0]
    ctx, _ = model.attend(dec, enc)
    expected = model.out(torch.tanh(model.mix(torch.cat([dec, ctx[0] + ctx[1]], -1))))
    assert torch.allclose(model(b["src"], b["tgt_in"])["logits"], expected, atol=1e-6)
    with pytest.raises(ValueError):
        ToySeq2Seq(12, hidden=8, combine="max")


def test_attention_accuracy_scores_the_gold_position():
    task = CopyTask(vocab=10, length=6, reorder=True, reorder_seed=0)
    model = tiny_model(heads=2)
    b = task.batch(5, np.random.default_rng(0))
    alpha = torch.zeros(2, 5, 7, 7)
    alpha[0, :, torch.arange(7), torch.as_tensor(task.gold())] = 1  # head 0 attends to the gold position
    alpha[1, :, :, 0] = 1

    def fake_attend(dec, enc):
        return torch.zeros(2, *dec.shape), alpha

    model.attend = fake_attend
    result = evaluate(model, task, b)
    assert result["attn_acc_heads"] == pytest.approx([1.0, 1 / 7])
    assert result["attn_acc"] == pytest.approx(1.0)


def test_training_is_reproducible_and_learns_an_easy_copy():
    task = CopyTask(vocab=8, length=4)
    kw = dict(steps=120, data_seed=0, batch_size=32, lr=1e-2, eval_every=20, eval_samples=50)
    a = train_curve(build(task, {"hidden": 24}, 0), task, **kw)
    b = train_curve(build(task, {"hidden": 24}, 0), task, **kw)
    pd.testing.assert_frame_equal(a, b)
    assert list(a["step"]) == list(range(0, 121, 20))
    assert a["token_acc"].iloc[-1] > 0.9 > a["token_acc"].iloc[0]
    c = train_curve(build(task, {"hidden": 24}, 1), task, **kw)
    assert not a["loss"].equals(c["loss"])


def test_stop_at_ends_training_at_the_first_good_evaluation():
    task = CopyTask(vocab=8, length=4)
    curve = train_curve(build(task, {"hidden": 24}, 0), task, 200, 0, 32, 1e-2, 10, 50, stop_at=0.9)
    assert curve["token_acc"].iloc[-1] >= 0.9 and (curve["token_acc"].iloc[:-1] < 0.9).all()
    assert curve["step"].iloc[-1] < 200


def test_convergence():
    curve = pd.DataFrame({"step": [0, 10, 20, 30], "token_acc": [0.1, 0.96, 0.9, 0.97]})
    assert convergence(curve, 0.95) == (True, 10.0)
    converged, first = convergence(curve.iloc[:3], 0.95)
    assert converged is False and first == 10.0
    assert np.isnan(convergence(curve.iloc[:1], 0.95)[1])


def test_keyword_sequences_are_balanced_with_one_keyword_in_positives():
    ids, labels, pos = sample(4000, 10, 20, np.random.default_rng(0))
    assert ids.min() >= 1 and ids.max() <= 20
    n_kw = (ids == KEYWORD).sum(1)
    assert (n_kw == labels).all()
    assert (ids[labels == 1, :][np.arange((labels == 1).sum()), pos[labels == 1]] == KEYWORD).all()
    assert (pos[labels == 0] == -1).all()
    assert abs(labels.mean() - 0.5) < 0.03


def test_keyword_log_odds_definitions():
    beta = np.array([[0.0, 5.0, 1.0, 2.0], [3.0, 1.0, 1.0, 7.0], [9.0, 9.0, 9.0, 9.0]])
    pos = np.array([1, 3, -1])  # the last row is a negative: ignored
    q = log_odds(beta, pos)
    assert q["keyword"] == pytest.approx((5 + 7) / 2)
    assert q["after"] == pytest.approx(1.0)  # only the first row has a next position
    assert q["uniform"] == pytest.approx((2.0 + 3.0) / 2)
    assert q["last"] == pytest.approx((2 + 7) / 2)


def test_keyword_training_curve_is_reproducible():
    kw = dict(length=6, vocab=8, model={"embed": 8, "hidden": 8, "att_hidden": 4}, steps=20, batch_size=8,
              lr=1e-2, eval_every=10, eval_samples=40, seed=0)
    a, b = train_keyword(**kw), train_keyword(**kw)
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["seed", "step", "accuracy", "keyword", "after", "uniform", "last"]
    assert list(a["step"]) == [0, 10, 20]


def test_multihead_scenarios_are_built_from_the_classified_heads(monkeypatch):
    spec = {"vocab": 6, "length": 3}
    model = {"hidden": 8}
    train = {"steps": 10, "batch_size": 8, "lr": 1e-2, "eval_every": 5, "eval_samples": 10}
    mh = {"heads": 3, "good_heads": 1, "bad_heads": 3, "data_seeds": [0], "good_acc": 0.95, "bad_acc": 0.6,
          "max_candidates": 20, "base_seed": 0, "head_seed": 100, "random_head_seed": 1000, "combo_seed": 0,
          "trials": 2, "combo_data_seed": 0}
    labels = iter(["good", "bad", None, "bad", "good", "bad", "bad"])
    monkeypatch.setattr(M, "classify_head", lambda *a, **k: (next(labels), [0.0]))
    base, good, bad, cands = M.find_heads(spec, model, train, mh)
    assert [s for s, _ in good] == [100] and [s for s, _ in bad] == [101, 103, 105]
    assert list(cands["label"]) == ["good", "bad", "neither", "bad", "good", "bad"]
    table = M.multihead(spec, model, train, mh, base, good, bad, 0.95)
    assert set(table["scenario"]) == set(M.SCENARIOS) and set(table["trial"]) == {0, 1}
    heads = table.groupby(["scenario", "trial"])["heads"].first()
    assert all(set(h.split()) == {"101", "103", "105"} for h in heads["all_bad"])
    assert all("100" in h.split() and len(h.split()) == 3 for h in heads["one_good"])
    assert not table.duplicated(["scenario", "trial", "step"]).any()


def test_experiments_config_defaults_and_errors():
    from pathlib import Path

    from attnlearn.config import ConfigError, load_config

    schema = Path(__file__).resolve().parents[1] / "config" / "schema.yaml"
    base = {"datasets": {"d": {"task": "classification", "source": {
        "kind": "synthetic_cls", "splits": {"train": 5, "valid": 5, "test": 0},
        "options": {"vocab": 9, "keywords_per_class": 1, "min_len": 2, "max_len": 3, "zipf": 1.0,
                    "min_keywords": 1, "max_keywords": 1, "p_opposite": 0.0}}}}}
    assert load_config(base, schema)["experiments"] is None
    cfg = load_config({**base, "experiments": {"copying": {}, "multihead": {"heads": 4}}}, schema)["experiments"]
    assert cfg["model"] == {"hidden": 256, "cell": "lstm", "combine": "sum", "activation": "softmax"}
    assert cfg["train"]["steps"] == 200 and cfg["train"]["batch_size"] == 128
    assert len(cfg["copying"]["seeds"]) == 20 and cfg["copying"]["tasks"]["mixture"]["sets"] == 2
    assert cfg["multihead"]["heads"] == 4 and cfg["multihead"]["data_seeds"] == [0, 1, 2]
    assert "keyword" not in cfg
    for bad, key in (({"model": {"combine": "max"}}, "combine"),
                     ({"copying": {"tasks": {"x": {"vocab": 4}}}}, "length"),
                     ({"copying": {"sede": [1]}}, "sede")):
        with pytest.raises(ConfigError, match=key):
            load_config({**base, "experiments": bad}, schema)
