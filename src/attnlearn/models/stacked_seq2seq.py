"""K LSTM translation models of one configuration as one batched model (``train.stack`` on a
GPU), as models/stacked.py stacks the classifier.

Both LSTMs run as loops over time of batched products for all members (models/recurrence.py):
each encoder layer as 2K recurrences (both directions of every member), each decoder layer as
K, started from the encoder's final states as Seq2Seq starts it (the two directions' mean). The
rest, the embedding lookup and everything after the recurrences (attention, context, readout),
is Seq2Seq's own code, run for every member at once by ``vmap`` over ``functional_call``.

Dropout between LSTM layers: member k draws its masks from its own generator
(``generators[k]``, on the model's device, in the resume state) at the shape of its own batch
(its own longest row), so what it draws does not depend on the members beside it. These are
not its separate run's masks: on a GPU a separate run's come from cuDNN's dropout state (one
per process, seeded at its first use), which nothing outside cuDNN draws from, so a GPU stack's
member is a run of its own seed with its own dropout stream, not its separate run's numbers.
On a CPU a translation stack steps its members in turn instead (training/train.py), each
exactly its separate run.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.func import functional_call, vmap

from attnlearn.models.seq2seq import Seq2Seq
from attnlearn.models.stacked import Stacked, both_directions, join_directions, time_loop


def _at(x: torch.Tensor, steps: torch.Tensor) -> torch.Tensor:
    """x [D, B, S, H] at step ``steps`` [D, B] of each row -> [D, B, H]."""
    return x.gather(2, steps[..., None, None].expand(-1, -1, 1, x.shape[-1]))[:, :, 0]


class StackedSeq2Seq(Stacked):
    """K ``Seq2Seq`` members as one model; ``start_generators`` before training with dropout."""

    def __init__(self, members: list[Seq2Seq]):
        if not all(type(m) is Seq2Seq for m in members):
            raise TypeError("StackedSeq2Seq stacks LSTM translation models (Seq2Seq) only")
        super().__init__(members)
        self.layers, self.dropout = members[0].layers, members[0].encoder.dropout

    def _drop(self, x: torch.Tensor, own: list[int]) -> torch.Tensor:
        """Dropout on a layer's input x [K, B, L, D]: member k's mask drawn from its own generator
        over its own ``own[k]`` positions (beyond them: its pads, which no real position reads)."""
        if not (self.training and self.dropout):
            return x
        if len(self.generators) != len(self):
            raise RuntimeError("StackedSeq2Seq: start_generators before training with dropout")
        K, B, L, D = x.shape
        keep = 1.0 - self.dropout
        masks = [F.pad(torch.empty(B, n, D, device=x.device, dtype=x.dtype).bernoulli_(keep, generator=g),
                       (0, 0, 0, L - n)) for n, g in zip(own, self.generators)]
        return x * (torch.stack(masks) / keep)

    def encode(self, src: torch.Tensor, lengths: torch.Tensor):
        """``lengths`` [K, B] on the CPU. Encoder outputs [K, B, S, 2H] (0 at pads) and the decoder's initial (h, c), each
        [layers, K, B, H]: per layer the mean of the two directions' states at each row's last
        step (the forward direction's last real step; the reverse one's first, which it reads last)."""
        own = lengths.max(1).values.tolist()  # read on the CPU, where the lengths are: no wait on a GPU
        x, lengths = self.embed(src), lengths.to(src.device)
        last = (lengths - 1).repeat(2, 1)  # [2K, B]: each row's last step in its reading order
        hs, cs = [], []
        for layer in range(self.layers):
            if layer:
                x = self._drop(x, own)
            w = {name: self.pair("encoder", name, layer) for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")}
            out, cells = time_loop(both_directions(x, lengths), w["weight_ih"], w["weight_hh"],
                                   w["bias_ih"] + w["bias_hh"])
            hs.append(_at(out, last).unflatten(0, (2, -1)).mean(0))  # [2K, B, H] -> [K, B, H]
            cs.append(_at(cells, last).unflatten(0, (2, -1)).mean(0))
            x = join_directions(out, lengths)
        return x, (torch.stack(hs), torch.stack(cs))

    def decode(self, tgt_in: torch.Tensor, tgt_len: torch.Tensor, state) -> torch.Tensor:
        """Decoder outputs [K, B, T, H] (causal: right padding changes no real position);
        ``tgt_len`` on the CPU."""
        y, own = self.embed(tgt_in), tgt_len.max(1).values.tolist()
        h, c = state
        for layer in range(self.layers):
            if layer:
                y = self._drop(y, own)
            w = {name: self.weight(f"decoder.{name}_l{layer}") for name in ("weight_ih", "weight_hh", "bias_ih",
                                                                            "bias_hh")}
            y, _ = time_loop(y, w["weight_ih"], w["weight_hh"], w["bias_ih"] + w["bias_hh"], h[layer], c[layer])
        return y

    def forward(self, src, src_len, tgt_in, tgt_len) -> dict:
        """src [K, B, S], tgt_in [K, B, T] (pad 0), lengths [K, B] -> logits [K, B, T, V] (at every
        position: a member's real rows differ in number from its neighbours') and attention
        (head mean) [K, B, T, S]."""
        enc, state = self.encode(src, src_len)
        dec = self.decode(tgt_in, tgt_len, state)
        head = self.weights_of(skip=("embed.", "encoder.", "decoder."))

        def member(weights, src, tgt_in, enc, dec):  # Seq2Seq.forward past its LSTMs, member k's weights
            out = functional_call(self.template, weights, (src, None, tgt_in, None), {"states": (enc, dec)})
            return out["logits"], out["alpha"]

        logits, alpha = vmap(member)(head, src, tgt_in, enc, dec)
        return {"logits": logits, "alpha": alpha}
