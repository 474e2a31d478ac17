"""K models of one configuration trained as one batched model (``train.stack`` on a GPU): here the
stacking shared by both families and the classifier; the translation model's in stacked_seq2seq.py.

Every weight of the K members is stacked along a leading axis (``torch.func.stack_module_state``),
so one step of the K trainings is one pass of batched matrix products: the BiLSTM runs both
directions of all K members as one batch of 2K recurrences (one ``bmm`` per time step), where K
separate models would launch K times as many small kernels (on a GPU the step is launch-bound:
docs/benchmarks.md). The rest, the embedding lookup and the attention head, is the Classifier's
own code, run once for all members by ``vmap`` over ``functional_call`` with each member's slice
of the stack: a change to the classifier's head is the stack's change too. The recurrence alone is
this module's own (models/recurrence.py): torch.func cannot vmap nn.LSTM (no batching rule for
its fused kernel).

Members share nothing but the arithmetic: each keeps its own initial weights (built as its
separate run's), its own batches (padded to the longest of the K) and its own loss; the summed
loss gives each member exactly its own gradient, and Adam is elementwise, so each member follows
its separate run up to float rounding.

The member checkpoints are plain ``Classifier`` state dicts (``member_state``): probes
read them as any run's.
"""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call, stack_module_state, vmap

from attnlearn.models.bilstm import reverse_within
from attnlearn.models.classifier import Classifier
from attnlearn.models.recurrence import Recurrence


class Stacked(nn.Module):
    """The members' parameters stacked: ``weight(name)`` is [K, *shape of the member's ``name``];
    ``template``, the members' modules once without weights, for ``functional_call``."""

    def __init__(self, members: list[nn.Module]):
        super().__init__()
        # meta: no storage. Kept in a list: as a submodule its empty weights would join the model's
        self._template = [copy.deepcopy(members[0]).to("meta")]
        stacked, buffers = stack_module_state(members)  # {name: [K, ...]} in state-dict order
        assert not buffers, "the stacked models hold parameters only"
        self.names = list(stacked)
        self._index = {name: i for i, name in enumerate(self.names)}
        # a list, not a dict: its keys are positions, so the members' dotted names need no escaping
        self.weights = nn.ParameterList(nn.Parameter(w, requires_grad=w.requires_grad) for w in stacked.values())
        self.generators: list[torch.Generator] = []  # the members' dropout streams, where they draw any

    @property
    def template(self) -> nn.Module:
        return self._template[0]

    def __len__(self) -> int:
        return self.weights[0].shape[0]

    def weight(self, name: str) -> torch.Tensor:
        return self.weights[self._index[name]]

    def weights_of(self, prefix: str = "", skip: tuple = ()) -> dict:
        """{name: stacked weight} of the names under ``prefix`` (all by default), less those under ``skip``."""
        return {name: self.weight(name) for name in self.names if name.startswith(prefix)
                and not (skip and name.startswith(skip))}

    def start_generators(self, seeds: list[int], cpu_states: list[torch.Tensor]) -> None:
        """Member k's dropout generator on the model's device, started as its separate run's
        generator there starts training: on a CPU at ``cpu_states[k]`` (the state its weights were
        drawn to), elsewhere seeded by ``seeds[k]`` as torch.manual_seed seeds it (the weights are
        drawn on the CPU)."""
        device = self.weights[0].device
        self.generators = []
        for seed, state in zip(seeds, cpu_states):
            g = torch.Generator(device)
            g.set_state(state) if device.type == "cpu" else g.manual_seed(seed)
            self.generators.append(g)

    def member_state(self, k: int) -> dict:
        """Member k's state dict as its own model has it, on the CPU, in its own storage
        (a saved view would carry the whole stack)."""
        return {name: self.weight(name)[k].detach().cpu().clone() for name in self.names}

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """[K, B, S, E]: each member's own ``embed`` on its ids (pads read row 0, which its
        ``padding_idx`` keeps from learning, as in the separate run)."""
        embed = self.template.embed
        return vmap(lambda w, i: functional_call(embed, {"weight": w}, (i,)))(self.weight("embed.weight"), ids)

    def pair(self, prefix: str, name: str, layer: int = 0) -> torch.Tensor:
        """[2K, ...]: the members' forward-direction ``name`` weights of an LSTM layer, then their reverse ones."""
        return torch.cat([self.weight(f"{prefix}.{name}_l{layer}"), self.weight(f"{prefix}.{name}_l{layer}_reverse")])


def both_directions(x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """[2K, B, S, E]: every member's input x [K, B, S, E], then each row reversed within its length."""
    K, B, S, _ = x.shape
    rev = reverse_within(x.reshape(K * B, S, -1), lengths.reshape(-1)).view_as(x)
    return torch.cat([x, rev])


def join_directions(out: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """[2K, B, S, H] outputs of ``both_directions`` -> [K, B, S, 2H], 0 at pads."""
    K, B, S = lengths.shape[0], lengths.shape[1], out.shape[2]
    fwd, back = out[:K], out[K:]
    back = reverse_within(back.reshape(K * B, S, -1), lengths.reshape(-1)).view_as(back)
    pads = torch.arange(S, device=out.device) >= lengths[..., None]
    return torch.cat([fwd, back], -1).masked_fill(pads[..., None], 0.0)


def time_loop(x: torch.Tensor, w_ih, w_hh, bias, h0=None, c0=None):
    """One LSTM layer of D recurrences as one loop over time (models/recurrence.py): x [D, B, S, E],
    weights [D, ...] -> outputs and cell states, each [D, B, S, H]."""
    D, B, S, _ = x.shape
    inputs = torch.baddbmm(bias[:, None, :], x.reshape(D, B * S, -1), w_ih.transpose(1, 2))
    inputs = inputs.view(D, B, S, -1).permute(2, 0, 1, 3).contiguous()  # time first
    hs, cells = Recurrence.apply(inputs, w_hh, h0, c0)  # [S, D, B, H]
    return hs.permute(1, 2, 0, 3), cells.permute(1, 2, 0, 3)


class StackedClassifier(Stacked):
    """K ``Classifier`` members as one model."""

    def __init__(self, members: list[Classifier]):
        if not all(isinstance(m, Classifier) for m in members):
            raise TypeError("StackedClassifier stacks classification models only")
        lstm = members[0].encoder
        if lstm.num_layers != 1 or not lstm.bidirectional or lstm.dropout:
            raise ValueError("train.stack: the classifier's encoder must be one bidirectional layer without dropout")
        super().__init__(members)
        self.hidden = lstm.hidden_size

    def _encode(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """BiLSTM outputs [K, B, S, 2H] (0 at pads), as ``bilstm`` computes them per member:
        the reverse direction reads each row reversed within its length. On a CPU each
        member's direction is one fused call (the time loop in C++: benchmarks/stacked.py
        measured the stepped loop 2-3x slower there); on a GPU one time loop of batched
        products for all members (``stepped``)."""
        if x.device.type == "cpu":
            return self.fused(x, lengths)
        return self.stepped(x, lengths)

    def fused(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``_encode`` with nn.LSTM's fused kernel, once per member and direction, each over its
        own batch's longest row (as its separate run pads it), not the stack's: the steps past it
        are pads in every row, and a pad only ever follows a row's real steps (the reverse
        direction reads each row reversed within its length), so leaving them out is exact."""
        # unbind, not both[d] and w[d]: each index's backward would fill a zero tensor of the whole
        # stack (K of them a step), unbind's is one stack of the K gradients
        inputs = torch.unbind(both_directions(x, lengths))
        weights = list(zip(*(torch.unbind(self.pair("encoder", name))
                             for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"))))
        zeros = x.new_zeros(1, x.shape[1], self.hidden)
        S, longest = x.shape[2], lengths.max(1).values.repeat(2).tolist()  # per member, both directions
        outs = [F.pad(torch._VF.lstm(inp[:, :n].contiguous(), (zeros, zeros), list(w), True, 1, 0.0, self.training,
                                     False, True)[0], (0, 0, 0, S - n))
                for inp, w, n in zip(inputs, weights, longest)]
        return join_directions(torch.stack(outs), lengths)

    def stepped(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``_encode`` as one loop over time for all members and both directions: one batched
        product per step (models/recurrence.py, whose backward is its own loop)."""
        w_ih, w_hh = self.pair("encoder", "weight_ih"), self.pair("encoder", "weight_hh")
        bias = self.pair("encoder", "bias_ih") + self.pair("encoder", "bias_hh")
        out, _ = time_loop(both_directions(x, lengths), w_ih, w_hh, bias)
        return join_directions(out, lengths)

    def forward(self, ids: torch.Tensor, lengths: torch.Tensor) -> dict:
        """ids [K, B, S] (pad 0), lengths [K, B] -> logits [K, B] and attention [K, B, S]."""
        h = self._encode(self.embed(ids), lengths.to(ids.device))
        head = self.weights_of(skip=("embed.", "encoder."))

        def member(weights, ids, h):  # Classifier.forward past its encoder, with member k's weights
            out = functional_call(self.template, weights, (ids, None), {"enc": h})
            return out["logit"], out["alpha"]

        logit, alpha = vmap(member)(head, ids, h)
        return {"logit": logit, "alpha": alpha}
