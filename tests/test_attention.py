"""Defining properties of the attention activations (docs/methods.md 11) and of the
tanhmax run variant."""

import pytest
import torch

from attnlearn.models.attention import attention_weights, softmax, tanhmax
from attnlearn.training.model import build_model
from conftest import batch_of, run_params


def _scores(seed=0, shape=(4, 3, 9), scale=3.0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return scale * torch.randn(*shape, generator=g, dtype=dtype)


def _mask(shape=(4, 3, 9)):
    lengths = torch.tensor([9, 5, 2, 1])
    return (torch.arange(shape[-1]) < lengths[:, None, None]).expand(shape)


def test_tanhmax_equals_sinh_over_sum_cosh():
    a, mask = _scores(), _mask()
    w = tanhmax(a, mask)
    direct = torch.sinh(a) * mask / (torch.cosh(a) * mask).sum(-1, keepdim=True)
    assert torch.allclose(w, direct, atol=1e-12)


def test_tanhmax_sign_bound_and_zero():
    a, mask = _scores(), _mask()
    a[0, 0, 3] = 0.0
    w = tanhmax(a, mask)
    real = mask
    assert torch.equal(torch.sign(w[real]), torch.sign(a[real]))
    assert (w.abs() < 1).all()
    assert w[0, 0, 3] == 0.0
    # the absolute weights sum to at most 1 (sum |sinh| <= sum cosh)
    assert (w.abs().sum(-1) <= 1 + 1e-12).all()


def test_tanhmax_masks_pads_in_both_halves():
    a, mask = _scores(), _mask()
    w = tanhmax(a, mask)
    assert (w[~mask] == 0).all()
    # changing pad scores changes nothing
    b = a.clone()
    b[~mask] = 1e6
    assert torch.equal(tanhmax(b, mask), w)
    # the one-position rows: sinh(a)/cosh(a) = tanh(a)
    assert torch.allclose(w[3, :, 0], torch.tanh(a[3, :, 0]))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_tanhmax_large_scores_do_not_overflow_and_gradients_are_finite(dtype):
    a = torch.tensor([[1e4, -2e4, 0.0, 900.0, 3.0]], dtype=dtype, requires_grad=True)
    mask = torch.tensor([[True, True, True, True, False]])
    w = tanhmax(a, mask)
    assert torch.isfinite(w).all()
    assert w[0, 1] == -1.0 and w[0, 0] == 0.0  # the dominant score takes all the (negative) mass
    w.sum().backward()
    assert torch.isfinite(a.grad).all()
    assert (torch.sinh(a.detach().double()) == float("inf")).any()  # the naive form would overflow


def test_uniform_mode_is_uniform_for_every_activation_and_scale_scales():
    a, mask = _scores(), _mask()
    for act in ("softmax", "tanhmax"):
        assert torch.equal(attention_weights(a, mask, "uniform", act), softmax(torch.zeros_like(a), mask))
    assert torch.allclose(attention_weights(a, mask, "standard", "tanhmax", 0.5), tanhmax(0.5 * a, mask))
    assert torch.equal(attention_weights(a, mask, "standard", "softmax", 1.0), softmax(a, mask))
    with pytest.raises(ValueError, match="activation"):
        attention_weights(a, mask, "standard", "sparsemax")


@pytest.mark.parametrize("data", ["mt_data", "cls_data"])
def test_tanhmax_variant_gives_signed_attention(data, request):
    task, tables = request.getfixturevalue(data)
    model = build_model(task, run_params(task.name, "tanhmax"))
    assert model.activation == "tanhmax"
    b = batch_of(task, tables["valid"])
    out = task.run(model, b)
    alpha = out["alpha"]
    assert (alpha.abs() < 1).all() and not torch.allclose(alpha.sum(-1), torch.ones(alpha.shape[:-1]))
    if task.name == "translation":  # signed: every weight has its score's sign
        scores = model.scores(out["dec"], out["enc"])[:, 0]
        real = (b["src"] != 0)[:, None, :].expand_as(scores)
        assert torch.equal(torch.sign(alpha)[real], torch.sign(scores)[real])
    task.loss(model, batch_of(task, tables["train"])).backward()  # trains like the standard variant


@pytest.mark.parametrize("activation", ["softmax", "tanhmax"])
@pytest.mark.parametrize("mode", ["standard", "uniform"])
def test_no_mask_is_a_mask_of_ones_bit_for_bit(activation, mode):
    """The toy model of the copying experiments has no padding and passes no mask: weights and
    gradients are those of a mask of ones exactly (its tables are byte for byte those it made
    with one)."""
    out = []
    for mask in (torch.ones(4, 3, 9, dtype=torch.bool), None):
        a = _scores(dtype=torch.float32).requires_grad_()
        w = attention_weights(a, mask, mode, activation)
        if w.requires_grad:  # uniform weights do not depend on the scores
            (w * torch.linspace(-1, 1, 9)).sum().backward()
        out.append((w.detach(), a.grad))
    (w_ones, grad_ones), (w_none, grad_none) = out
    assert torch.equal(w_ones, w_none)
    assert (grad_ones is None) == (mode == "uniform") and (grad_none is None) == (mode == "uniform")
    assert mode == "uniform" or torch.equal(grad_ones, grad_none)
