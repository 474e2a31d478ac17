"""Defining properties of the models, variants and probes."""

import numpy as np
import pytest
import torch

from attnlearn.probes import MEASURES, Probe
from attnlearn.train import build_model
from conftest import batch_of, run_params


def test_xi_equals_model_output_when_attention_is_one_hot(mt_data):
    task, tables = mt_data
    model = build_model(task, run_params("translation")).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        xi = MEASURES["xi"](Probe(task, model), b, out)
        B, T, S = out["alpha"].shape
        for s in range(3):  # attend only to position s
            one_hot = torch.zeros(B, T, S)
            one_hot[:, :, s] = 1
            logp = torch.log_softmax(task.run(model, b, alpha=one_hot)["logits"], -1)
            own = logp.gather(-1, b["tgt_out"].unsqueeze(-1)).squeeze(-1)
            mask = b["tgt_out"] != 0
            assert torch.allclose(xi[:, :, s][mask], own[mask], atol=1e-5)


def test_xi_is_chunk_size_independent(mt_data):
    task, tables = mt_data
    model = build_model(task, run_params("translation")).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        whole = model.lexical_logprobs(out["enc"], out["dec"], b["tgt_out"], chunk_elems=1 << 30)
        tiny = model.lexical_logprobs(out["enc"], out["dec"], b["tgt_out"], chunk_elems=1)
    assert torch.allclose(whole, tiny)


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_uniform_variant_attention_is_exactly_uniform(data, request):
    task, tables = request.getfixturevalue(data)
    model = build_model(task, run_params(task.name, "uniform"))
    b = batch_of(task, tables["valid"])
    alpha = task.run(model, b)["alpha"]
    lengths = b["src_len"] if task.name == "translation" else b["len"]
    expected = (torch.arange(alpha.shape[-1]) < lengths[:, None]).float() / lengths[:, None]
    if alpha.dim() == 3:
        expected = expected[:, None, :].expand_as(alpha)
    assert torch.equal(alpha, expected)


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_frozen_variant_changes_only_attention_parameters(data, request):
    task, tables = request.getfixturevalue(data)
    model = build_model(task, run_params(task.name, "frozen"))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    optim = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=0.1)
    for _ in range(3):
        optim.zero_grad()
        task.loss(model, batch_of(task, tables["train"], 8)).backward()
        optim.step()
    changed = {k.split(".")[0] for k, v in model.state_dict().items() if not torch.equal(v, before[k])}
    assert changed == set(model.attention_params)


def test_classification_xi_points_to_gold_label(cls_data):
    task, tables = cls_data
    model = build_model(task, run_params("classification")).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        xi = MEASURES["xi"](Probe(task, model), b, out)[:, 0]
    sign = (2 * b["label"] - 1)[:, None]
    assert torch.allclose(xi, out["beta"] * sign)


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_gradient_saliency_matches_finite_difference(data, request):
    task, tables = request.getfixturevalue(data)
    model = build_model(task, run_params(task.name)).eval().double()
    b = batch_of(task, tables["valid"], 2)
    g = MEASURES["grad"](Probe(task, model), b, None)
    key = "src" if task.name == "translation" else "ids"
    eps, s = 1e-6, 1

    def logp(scale):
        out = task.run(model, b, scale=scale)
        if task.name == "translation":
            lp = torch.log_softmax(out["logits"], -1).gather(-1, b["tgt_out"].unsqueeze(-1)).squeeze(-1)
            return lp[:, 0]
        return torch.nn.functional.logsigmoid(out["logit"] * (2 * b["label"] - 1))

    with torch.no_grad():
        scale = torch.ones(b[key].shape, dtype=torch.float64)
        up = scale.clone()
        up[:, s] += eps
        fd = (logp(up) - logp(scale)) / eps
    assert np.allclose(g[:, 0, s].numpy(), fd.numpy(), atol=1e-4)


def _transformer(task, variant="standard", **model):
    params = run_params("translation", variant)
    params["model"] = {"arch": "transformer", "hidden": 16, "layers": 2, "heads": 4, "ff": 24, "dropout": 0.0,
                       **model}
    return build_model(task, params)


def test_transformer_xi_equals_output_when_last_cross_attention_is_one_hot(mt_data):
    task, tables = mt_data
    model = _transformer(task).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        xi = MEASURES["xi"](Probe(task, model), b, out)
        B, T, S = out["alpha"].shape
        mask = b["tgt_out"] != 0
        for s in range(3):
            one_hot = torch.zeros(B, T, S)
            one_hot[:, :, s] = 1
            logp = torch.log_softmax(task.run(model, b, alpha=one_hot)["logits"], -1)
            own = logp.gather(-1, b["tgt_out"].unsqueeze(-1)).squeeze(-1)
            assert torch.allclose(xi[:, :, s][mask], own[mask], atol=1e-5)
        tiny = model.lexical_logprobs(out["enc"], out["dec"], b["tgt_out"], chunk_elems=1)
        assert torch.allclose(tiny, xi, atol=1e-6)


def test_transformer_heads_sum_to_the_attention_output_and_pads_are_ignored(mt_data):
    task, tables = mt_data
    model = _transformer(task).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        alpha, memory = out["attention"][("cross", 1)]
        f = model.site_values(out["attention"], "cross", 1)  # [B, h, S, d]
        attn = model.dec_layers[1].cross_attn
        q = model.dec_layers[1].ln_cross(out["dec"])
        direct, _ = attn(q, memory, b["src"][:, None, :].expand(-1, q.shape[1], -1) != 0)
        by_heads = torch.einsum("bhts,bhsd->btd", alpha, f) + attn.o.bias
        assert torch.allclose(direct, by_heads, atol=1e-5)
        assert (alpha.masked_select((b["src"] == 0)[:, None, None, :]) == 0).all()
        assert alpha.shape[1] == 4 and torch.allclose(out["alpha"], alpha.mean(1))
        dec_self = out["attention"][("dec_self", 0)][0]
        assert (dec_self.triu(1) == 0).all()  # causal


def test_transformer_variants(mt_data):
    task, tables = mt_data
    b = batch_of(task, tables["valid"])
    uniform = _transformer(task, "uniform")
    for (alpha, _) in task.run(uniform, b)["attention"].values():
        rows = alpha.sum(-1)
        assert torch.allclose(rows, torch.ones_like(rows))
        assert torch.allclose(alpha.max(-1).values * (alpha > 0).sum(-1), torch.ones_like(rows))
    signed = _transformer(task, "tanhmax")
    assert any((a < 0).any() for a, _ in task.run(signed, b)["attention"].values())
    frozen = _transformer(task, "frozen")
    trained = {n for n, p in frozen.named_parameters() if p.requires_grad}
    assert trained and all("attn." in n for n in trained)
