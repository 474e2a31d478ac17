"""The LSTM time loop of D independent recurrences at once, with its own backward pass.

On a GPU a stacked model's recurrence (models/stacked.py) is a loop of small kernels, and
what bounds it is the host's time per operation, not the device's: under autograd each of
the ~7 operations of a time step also builds a graph node, and the backward replays them one
by one. Here the forward loop runs without autograd, keeping the activated gates and the
cell states, and the backward is one hand-written loop (back-propagation through time: the
gate gradients of each step and one batched product for the recurrent input), after which
the recurrent weights' gradient is one batched product over all steps. Same arithmetic as
nn.LSTM's cell, gate order input, forget, cell, output.
"""

from __future__ import annotations

import torch


class Recurrence(torch.autograd.Function):
    """h_t, c_t of D recurrences: ``inputs`` [S, D, B, 4H] (x_t W_ih^T + b, time first),
    ``w_hh`` [D, 4H, H], initial states ``h0``, ``c0`` [D, B, H] (None: zeros) -> outputs h and
    cell states c, each [S, D, B, H] (a translation encoder's final states are its cells at each
    row's last step; its decoder starts from them)."""

    @staticmethod
    def forward(ctx, inputs: torch.Tensor, w_hh: torch.Tensor, h0: torch.Tensor | None = None,
                c0: torch.Tensor | None = None):
        S, D, B, G = inputs.shape
        H = G // 4
        w_t = w_hh.transpose(1, 2)
        acts = torch.empty_like(inputs)  # activated gates: sigmoid(i, f, o), tanh(g)
        cells, tanh_cells, hs = (inputs.new_empty(S, D, B, H) for _ in range(3))
        h = inputs.new_zeros(D, B, H) if h0 is None else h0
        c = inputs.new_zeros(D, B, H) if c0 is None else c0
        for t in range(S):
            a, pre = acts[t], torch.baddbmm(inputs[t], h, w_t)
            torch.sigmoid(pre, out=a)
            g = torch.tanh(pre[..., 2 * H:3 * H], out=a[..., 2 * H:3 * H])
            c = torch.addcmul(a[..., H:2 * H] * c, a[..., :H], g, out=cells[t])
            h = torch.mul(a[..., 3 * H:], torch.tanh(c, out=tanh_cells[t]), out=hs[t])
        ctx.save_for_backward(acts, cells, tanh_cells, hs, w_hh, h0, c0)
        ctx.set_materialize_grads(False)  # an output no loss reads (the cells, mostly) passes None
        return hs, cells

    @staticmethod
    def backward(ctx, grad_hs: torch.Tensor | None, grad_cells: torch.Tensor | None):
        acts, cells, tanh_cells, hs, w_hh, h0, c0 = ctx.saved_tensors
        S, D, B, G = acts.shape
        H = G // 4
        one = acts.new_ones(())
        grads = torch.empty_like(acts)  # gradient of the pre-activation gates, per step
        dh = torch.zeros_like(hs[0])
        dc = torch.zeros_like(dh)
        first_cell = torch.zeros_like(dh) if c0 is None else c0
        for t in range(S - 1, -1, -1):
            a, tc, g = acts[t], tanh_cells[t], grads[t]
            ai, af, ag, ao = a[..., :H], a[..., H:2 * H], a[..., 2 * H:3 * H], a[..., 3 * H:]
            if grad_hs is not None:
                dh = dh + grad_hs[t]
            if grad_cells is not None:
                dc = dc + grad_cells[t]
            dc = torch.addcmul(dc, dh * ao, torch.addcmul(one, tc, tc, value=-1))  # through h = o tanh(c)
            torch.mul(dc, ag, out=g[..., :H])  # d/d(activated gate), in place of the gates' slots
            torch.mul(dc, cells[t - 1] if t else first_cell, out=g[..., H:2 * H])
            torch.mul(dc, ai, out=g[..., 2 * H:3 * H])
            torch.mul(dh, tc, out=g[..., 3 * H:])
            slope = torch.addcmul(a, a, a, value=-1)  # sigmoid' = a (1 - a); tanh' = 1 - a^2 for g
            torch.addcmul(one, ag, ag, value=-1, out=slope[..., 2 * H:3 * H])
            g.mul_(slope)
            dc = dc * af
            dh = torch.bmm(g, w_hh)
        first = torch.zeros_like(hs[:1]) if h0 is None else h0[None]
        h_prev = torch.cat([first, hs[:-1]])  # [S, D, B, H]
        grad_w = torch.bmm(grads.permute(1, 3, 0, 2).reshape(D, G, S * B),
                           h_prev.permute(1, 0, 2, 3).reshape(D, S * B, H))
        # after the loop dh, dc are the gradients of the states before step 0
        return grads, grad_w, (dh if h0 is not None else None), (dc if c0 is not None else None)
