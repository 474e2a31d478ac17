"""Adam as every training here steps it: torch's own arithmetic, without torch.compile's wrapping.

``Adam`` is ``torch.optim.Adam(params, lr, foreach=True)`` (betas 0.9 and 0.999, eps 1e-8, no
weight decay), number for number: its ``step`` calls ``torch.optim.adam.adam``, the function
torch.optim.Adam's step calls, on the same state made the same way. What it leaves out is what
torch.optim.Adam wraps around that call for torch.compile: its constructor and every step import
torch._dynamo, 1.3 CPU-seconds in every job that trains (the default run has some thirty).

``foreach``: one call per operation for all the tensors rather than six per tensor dispatched from
Python (91 tensors in synthetic_tf's Transformer), the same operations on the same numbers, bit
for bit (on a GPU it is torch's default already). ``fused`` would be faster still but rounds
otherwise. tests/test_train.py holds it to torch.optim.Adam's weights, bit for bit;
docs/benchmarks.md ("Training cost, same bytes") has what it saves.
"""

from __future__ import annotations

import torch
from torch.optim.adam import adam

BETAS, EPS = (0.9, 0.999), 1e-8


class Adam:
    def __init__(self, params, lr: float):
        self.params = list(params)
        self.lr = lr
        self.state: dict[int, dict[str, torch.Tensor]] = {}  # by index in params, as torch's state_dict

    def zero_grad(self, set_to_none: bool = True) -> None:
        if not set_to_none:
            raise ValueError("Adam.zero_grad: only set_to_none=True (every training here sets the gradients to None)")
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        """One update of the parameters that have a gradient (a state is made at a parameter's
        first gradient, as torch.optim.Adam makes it: step a CPU scalar, the averages zeros)."""
        params, grads, avgs, sqs, steps = [], [], [], [], []
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if i not in self.state:
                scalar = torch.float64 if torch.get_default_dtype() == torch.float64 else torch.float32
                self.state[i] = {"step": torch.tensor(0.0, dtype=scalar, device="cpu"),
                                 "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
                                 "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format)}
            s = self.state[i]
            params.append(p), grads.append(p.grad), avgs.append(s["exp_avg"]), sqs.append(s["exp_avg_sq"])
            steps.append(s["step"])
        if params:
            adam(params, grads, avgs, sqs, [], steps, foreach=True, amsgrad=False, beta1=BETAS[0], beta2=BETAS[1],
                 lr=self.lr, weight_decay=0.0, eps=EPS, maximize=False)

    def state_dict(self) -> dict:
        """torch.optim.Adam's layout (state by parameter index, one parameter group)."""
        group = {"lr": self.lr, "betas": BETAS, "eps": EPS, "weight_decay": 0.0, "amsgrad": False, "maximize": False,
                 "foreach": True, "capturable": False, "differentiable": False, "fused": None,
                 "params": list(range(len(self.params)))}
        return {"state": {i: dict(s) for i, s in self.state.items()}, "param_groups": [group]}

    def load_state_dict(self, state: dict) -> None:
        """A state of ``state_dict``'s (the resume state): each tensor copied onto its parameter's
        device, the step kept on the CPU."""
        if len(state["param_groups"][0]["params"]) != len(self.params):
            raise ValueError(f"Adam state of {len(state['param_groups'][0]['params'])} parameters for "
                             f"{len(self.params)}")
        self.state = {int(i): {"step": s["step"].cpu(),
                               **{k: s[k].to(self.params[int(i)].device) for k in ("exp_avg", "exp_avg_sq")}}
                      for i, s in state["state"].items()}
