"""Defining properties of the models, variants and probes."""

import numpy as np
import pytest
import torch

from attnlearn.probing.probes import MEASURES, Probe
from attnlearn.training.model import build_model
from conftest import batch_of, run_params


# xi is exact for every translation model: the LSTM (one head, K heads summed or averaged)
# and the Transformer's last cross-attention
XI_MODELS = {"lstm": {}, "lstm-3-heads-sum": {"heads": 3}, "lstm-2-heads-mean": {"heads": 2, "head_combine": "mean"},
             "transformer": {"arch": "transformer", "hidden": 16, "layers": 2, "heads": 4, "ff": 24}}


def _seq2seq(task, variant="standard", **model):
    """A translation model without dropout: the LSTM, or what ``model`` overrides (arch too)."""
    params = run_params("translation", variant)
    params["model"] = {**params["model"], "dropout": 0.0, **model}
    return build_model(task, params)


@pytest.mark.parametrize("name", XI_MODELS)
def test_xi_equals_model_output_when_every_head_attends_only_to_s(mt_data, name):
    task, tables = mt_data
    model = _seq2seq(task, **XI_MODELS[name]).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        xi = MEASURES["xi"](Probe(task, model), b, out)
        B, T, S = out["alpha"].shape
        mask = b["tgt_out"] != 0
        for s in range(3):  # attend only to position s
            one_hot = torch.zeros(B, T, S)
            one_hot[:, :, s] = 1
            logp = torch.log_softmax(task.run(model, b, alpha=one_hot)["logits"], -1)
            own = logp.gather(-1, b["tgt_out"].unsqueeze(-1)).squeeze(-1)
            assert torch.allclose(xi[:, :, s][mask], own[mask], atol=1e-5)
        tiny = model.lexical_logprobs(out["enc"], out["dec"], b["tgt_out"], chunk_elems=1, src_ok=b["src"] != 0)
        assert torch.allclose(tiny, xi, atol=1e-6)  # chunking changes nothing


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
    return _seq2seq(task, variant, **{**XI_MODELS["transformer"], **model})


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


def test_one_head_lstm_is_the_papers_single_head_model(mt_data):
    """heads = 1 computes exactly c_t = W_p sum_s alpha_ts e_s, with softmax((W_a d_t) . e_s)."""
    task, tables = mt_data
    model = _seq2seq(task).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        scores = torch.einsum("bth,bsh->bts", model.attn(out["dec"]), out["enc"])
        alpha = torch.softmax(scores.masked_fill((b["src"] == 0)[:, None, :], float("-inf")), -1)
        logits = model.readout(out["dec"], model.proj(torch.bmm(alpha, out["enc"])))
    assert model.attn.weight.shape == (32, 16) and model.proj.weight.shape == (16, 32)
    assert torch.equal(out["alpha"], alpha) and torch.equal(out["logits"], logits)


@pytest.mark.parametrize("combine", ["sum", "mean"])
def test_multi_head_lstm_context_is_the_combined_head_contexts(mt_data, combine):
    task, tables = mt_data
    model = _seq2seq(task, heads=3, head_combine=combine).eval()
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        out = task.run(model, b)
        heads, enc = out["heads"], out["enc"]
        assert heads.shape[1] == 3 and torch.allclose(out["alpha"], heads.mean(1))
        assert not torch.allclose(heads[:, 0], heads[:, 1])  # the heads have their own W_a
        w_p, b_p = model.proj.weight.view(3, 16, 32), model.proj.bias.view(3, 16)
        per_head = [torch.bmm(heads[:, k], enc) @ w_p[k].T + b_p[k] for k in range(3)]
        expected = sum(per_head) if combine == "sum" else sum(per_head) / 3
        assert torch.allclose(model.context(heads, enc), expected, atol=1e-6)
        # the head values the analyses use: c_t = sum_k alpha^k f^k + the combined bias
        by_values = torch.einsum("bkts,bksh->bth", heads, model.head_values(enc))
        bias = b_p.sum(0) if combine == "sum" else b_p.mean(0)
        assert torch.allclose(by_values + bias, expected, atol=1e-5)


def test_multi_head_lstm_of_identical_heads_averaged_is_the_single_head_model(mt_data):
    task, tables = mt_data
    single = _seq2seq(task).eval()
    multi = _seq2seq(task, heads=4, head_combine="mean").eval()
    state = single.state_dict()
    stacked = ("attn.weight", "attn.bias", "proj.weight", "proj.bias")  # every head a copy
    multi.load_state_dict({**state, **{k: state[k].repeat(4, *[1] * (state[k].dim() - 1)) for k in stacked}})
    b = batch_of(task, tables["valid"])
    with torch.no_grad():
        one, four = task.run(single, b), task.run(multi, b)
    assert torch.allclose(one["logits"], four["logits"], atol=1e-5)
    assert torch.allclose(one["alpha"], four["alpha"], atol=1e-6)


def test_multi_head_lstm_variants(mt_data):
    task, tables = mt_data
    b = batch_of(task, tables["valid"])
    heads = task.run(_seq2seq(task, "uniform", heads=2), b)["heads"]
    assert torch.equal(heads[:, 0], heads[:, 1]) and torch.allclose(heads.sum(-1), torch.ones(heads.shape[:-1]))
    frozen = _seq2seq(task, "frozen", heads=2)
    assert {n for n, p in frozen.named_parameters() if p.requires_grad} == {"attn.weight", "attn.bias"}


def test_fused_bilstm_equals_the_packed_one_values_states_and_gradients():
    """The CPU encoder of both the classifier and the translation model (one fused call per
    direction and layer over the padded batch) gives the packed module's outputs, final states
    (held through the pads) and gradients, of the parameters and of the input: padding reaches
    no real position, and the decoder starts from the same state."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from attnlearn.models.bilstm import bilstm, encode_padded

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, 2, batch_first=True, bidirectional=True).double()
    x = torch.randn(5, 9, 6, dtype=torch.double, requires_grad=True)
    lengths = torch.tensor([9, 1, 4, 9, 6])
    packed, (h, c) = lstm(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))
    ref = (pad_packed_sequence(packed, batch_first=True, total_length=9)[0], h, c)
    outputs, states = bilstm(lstm, x, lengths, states=True)
    ours = (outputs, *states)
    assert torch.allclose(outputs, encode_padded(lstm, x, lengths), atol=1e-12)
    for a, b in zip(ours, ref):
        assert a.shape == b.shape and torch.allclose(a, b, atol=1e-12)
    assert (outputs[1, 1:] == 0).all()  # pads are 0, as pad_packed_sequence gives
    weights = [torch.randn_like(r) for r in ref]
    wrt = [x, *lstm.parameters()]
    grads = [torch.autograd.grad(sum((o * w).sum() for o, w in zip(out, weights)), wrt) for out in (ref, ours)]
    for a, b in zip(*grads):
        assert torch.allclose(a, b, atol=1e-12)


def test_translation_encoder_on_cpu_is_the_fused_bilstm(mt_data):
    """Seq2Seq.encode on a CPU gives what the packed encoder gives, final states included."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    task, tables = mt_data
    model = _seq2seq(task).double().eval()
    b = batch_of(task, tables["valid"], 6)
    assert len(set(b["src_len"].tolist())) > 1  # a batch with padding
    enc, (h, c) = model.encode(b["src"], b["src_len"])
    x = model.embed(b["src"])
    packed, (h_ref, c_ref) = model.encoder(pack_padded_sequence(x, b["src_len"], batch_first=True,
                                                                enforce_sorted=False))
    enc_ref = pad_packed_sequence(packed, batch_first=True, total_length=x.shape[1])[0]
    L = model.layers
    assert torch.allclose(enc, enc_ref, atol=1e-12)
    assert torch.allclose(h, h_ref.view(L, 2, *h_ref.shape[1:]).mean(1), atol=1e-12)
    assert torch.allclose(c, c_ref.view(L, 2, *c_ref.shape[1:]).mean(1), atol=1e-12)


@pytest.mark.parametrize("name", XI_MODELS)
def test_saliency_from_one_forward_equals_one_copy_per_target_step(mt_data, name):
    """On a CPU the translation saliency runs the forward pass once and vectorises the backward
    passes over the target steps; it must equal the batch-copy-per-step computation (the GPU's),
    chunks and pads included."""
    from attnlearn.probing.probes import _saliency_steps

    task, tables = mt_data
    model = _seq2seq(task, **XI_MODELS[name]).eval()
    b = batch_of(task, tables["valid"], 4)
    T = b["tgt_out"].shape[1]
    per_step = Probe(task, model, chunk_elems=1)  # one step per chunk: the chunking is exercised
    batched = MEASURES["grad"](per_step, b, None)
    copies = _saliency_steps(task, model, b, 0, T)
    assert batched.shape == copies.shape
    assert torch.allclose(batched, copies, atol=1e-6)
    assert (batched[b["tgt_out"] == 0] == 0).all()
