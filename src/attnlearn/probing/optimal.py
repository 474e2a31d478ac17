"""Optimal attention (paper appendix A.1): per target word, the attention weights on the
simplex that minimise that word's loss, for a model whose logits are linear in the context.

With the additive output layer of eq. 31, p(y_t) = softmax(W_o (d_t + c_t) + b_o) and
c_t = sum_s alpha_s f(e_s) + b_p, so the logits are sum_s alpha_s z_s with z_s the logits the
model gives when all weight is on s (the lexical probe's logits). The loss
f(alpha) = logsumexp(sum_s alpha_s z_s) - sum_s alpha_s z_s[y] is convex in alpha, and its
minimum over the simplex is found by accelerated projected gradient descent (FISTA with a
backtracking step), stopped by the Frank-Wolfe gap, which bounds the distance to the minimum:
f(alpha) - min f <= g . alpha - min_s g_s (g the gradient).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import torch


@dataclass
class Solution:
    alpha: torch.Tensor  # [N, S] optimal weights, 0 off the mask
    loss: torch.Tensor  # [N] the minimised loss (nats)
    gap: torch.Tensor  # [N] Frank-Wolfe gap at alpha: an upper bound on loss - min loss
    iterations: int


def project_simplex(v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Euclidean projection of each row of ``v`` [N, S] onto the probability simplex over
    its ``mask`` positions (sort-based, exact; 0 off the mask)."""
    u = torch.where(mask, v, torch.full_like(v, -torch.inf)).sort(1, descending=True).values
    finite = torch.isfinite(u)
    css = torch.where(finite, u, torch.zeros_like(u)).cumsum(1)
    j = torch.arange(1, v.shape[1] + 1, device=v.device, dtype=v.dtype)
    rho = ((u - (css - 1) / j > 0) & finite).sum(1, keepdim=True).clamp(min=1)  # a prefix holds
    theta = (css.gather(1, rho - 1) - 1) / rho
    return (v - theta).clamp(min=0) * mask


def mix(z: torch.Tensor, alpha: torch.Tensor) -> torch.Tensor:
    """The logits [N, V] under attention ``alpha`` [N, S]: sum_s alpha_s z_s (one pass over z)."""
    return torch.bmm(alpha[:, None, :], z).squeeze(1)


def loss_of(logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    return logits.logsumexp(1) - logits.gather(1, gold[:, None]).squeeze(1)


def grad_of(z: torch.Tensor, logits: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """df/dalpha_s = E_p[z_s] - z_s[y] [N, S] (one pass over z)."""
    p = torch.softmax(logits, 1)
    z_gold = z.gather(2, gold[:, None, None].expand(-1, z.shape[1], 1)).squeeze(2)
    return torch.bmm(z, p[:, :, None]).squeeze(2) - z_gold


def fw_gap(alpha: torch.Tensor, grad: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """g . alpha - min over the mask of g: >= f(alpha) - min f for convex f."""
    return (grad * alpha).sum(1) - torch.where(mask, grad, torch.full_like(grad, torch.inf)).amin(1)


def optimal_attention(z: torch.Tensor, gold: torch.Tensor, mask: torch.Tensor, tol: float = 1e-4,
                      max_iter: int = 2000, check_every: int = 10) -> Solution:
    """Minimise f over the simplex for each of N problems at once.

    ``z`` [N, S, V]: the logits with all weight on each position; ``gold`` [N] the correct
    word; ``mask`` [N, S] the real positions. Stops when every problem's Frank-Wolfe gap is
    below ``tol`` nats (or after ``max_iter`` iterations; ``Solution.gap`` says how close).
    Problems are solved together; every ``check_every`` iterations those within ``tol`` drop out.
    """
    mask = mask.bool()
    if (mask.sum(1) == 0).any():
        raise ValueError("optimal_attention: a problem has no real source position")
    # float64: in float32 the rounding of f fails the step-size test near the minimum, the step
    # shrinks, and the gap stalls near 1e-2 (tests/test_optimal.py)
    z = z.double()
    alpha = mask.to(z.dtype) / mask.sum(1, keepdim=True)  # uniform start
    state = _Fista(z, gold, mask, alpha)
    loss, gap = state.f.clone(), fw_gap(alpha, grad_of(z, state.logits, gold), mask)
    it = 0
    while it < max_iter:
        open_ = gap[state.rows] > tol
        if not open_.any():
            break
        state.keep(open_)
        for _ in range(min(check_every, max_iter - it)):
            state.step()
        it += check_every
        alpha[state.rows] = state.alpha
        loss[state.rows], grad = state.f, grad_of(state.z, state.logits, state.gold)
        gap[state.rows] = fw_gap(state.alpha, grad, state.mask)
    return Solution(alpha.float(), loss, gap, min(it, max_iter))


class _Fista:
    """FISTA on the simplex (Beck & Teboulle 2009) for the problems in ``rows``: each step size
    found by backtracking and let grow again, momentum reset where the loss rose (O'Donoghue &
    Candes 2015). The state (step size, momentum) carries over between gap checks. The logits
    are linear in alpha, so the extrapolated point's logits come from the iterates' without a
    pass over z: two passes a step (the candidate's logits, the gradient)."""

    def __init__(self, z, gold, mask, alpha):
        self.rows = torch.arange(len(alpha), device=alpha.device)
        self.z, self.gold, self.mask, self.alpha = z, gold, mask, alpha.clone()
        self.logits = mix(z, self.alpha)
        self.y, self.y_logits = self.alpha.clone(), self.logits.clone()
        self.t = torch.ones(len(alpha), dtype=z.dtype, device=z.device)
        self.lip = torch.ones_like(self.t)
        self.f = loss_of(self.logits, gold)
        self.slack = 8 * torch.finfo(z.dtype).eps  # rounding in f: a bound that fails by less holds

    def keep(self, which: torch.Tensor) -> None:
        """Drop the problems where ``which`` is False."""
        if which.all():
            return
        for name in ("rows", "z", "gold", "mask", "alpha", "logits", "y", "y_logits", "t", "lip", "f"):
            setattr(self, name, getattr(self, name)[which])

    def step(self) -> None:
        f_y, g_y = loss_of(self.y_logits, self.gold), grad_of(self.z, self.y_logits, self.gold)
        while True:  # double the curvature estimate where the quadratic bound fails
            x = project_simplex(self.y - g_y / self.lip[:, None], self.mask)
            d = x - self.y
            x_logits = mix(self.z, x)
            f_x = loss_of(x_logits, self.gold)
            ok = f_x <= f_y + (g_y * d).sum(1) + self.lip / 2 * (d * d).sum(1) + self.slack * (1 + f_y.abs())
            if ok.all():
                break
            self.lip = torch.where(ok, self.lip, 2 * self.lip)
        restart = f_x > self.f
        t_next = (1 + torch.sqrt(1 + 4 * self.t * self.t)) / 2
        momentum = torch.where(restart, torch.zeros_like(self.t), (self.t - 1) / t_next)[:, None]
        self.y = x + momentum * (x - self.alpha)
        self.y_logits = x_logits + momentum * (x_logits - self.logits)
        self.t = torch.where(restart, torch.ones_like(self.t), t_next)
        self.alpha, self.logits, self.f = x, x_logits, f_x
        self.lip = self.lip * 0.9  # let the step grow again where the curvature allows


def optimal_rows(model, enc, dec, targets, src_ok, chunk_elems: int = 1 << 24, tol: float = 1e-4,
                 max_iter: int = 2000) -> torch.Tensor:
    """The optimal attention [B, T, S] of every real target word of a batch of the additive
    model (0 at pads), about ``chunk_elems`` logits (words x S x V) at a time. Words whose
    solve stopped above ``tol`` are reported on stderr with the largest gap."""
    if getattr(model, "readout_kind", None) != "additive":
        raise ValueError("probe measure 'optimal' needs the additive output layer of appendix A.1 "
                         "(runs.additive, or model.readout: additive, of an LSTM translation dataset)")
    ctx = model.position_contexts(enc)  # [B, S, H]: the context with all weight on s
    b, t = torch.nonzero(targets != 0, as_tuple=True)
    B, T, S = *targets.shape, enc.shape[1]
    alpha = dec.new_zeros(B, T, S)
    step = max(1, chunk_elems // max(1, S * model.out.out_features))
    unsolved, worst = 0, 0.0
    for i in range(0, len(b), step):
        bi, ti = b[i:i + step], t[i:i + step]
        z = model.out(dec[bi, ti][:, None, :] + ctx[bi])  # [n, S, V]: eq. 31's logits per position
        sol = optimal_attention(z, targets[bi, ti], src_ok[bi], tol, max_iter)
        alpha[bi, ti] = sol.alpha.to(alpha.dtype)
        unsolved += int((sol.gap > tol).sum())
        worst = max(worst, float(sol.gap.max()))
    if unsolved:
        print(f"optimal attention: {unsolved} of {len(b)} target words stopped after {max_iter} iterations "
              f"with a gap above {tol} (largest {worst:.2g} nats)", file=sys.stderr, flush=True)
    return alpha
