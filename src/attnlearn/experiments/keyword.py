"""The keyword toy of paper 6.1 (Figure 7).

Inputs are ``length`` tokens drawn uniformly from the vocabulary {1, ..., vocab}
(0 is padding); a sequence is positive iff the keyword 1 occurs, and it occurs
at most once. Sampling uniform sequences, keeping those with zero or one keyword
and balancing the classes by rejection is the same as drawing the class with
probability 1/2, the non-keyword tokens uniformly from {2, ..., vocab} and, for a
positive, the keyword's position uniformly: that is what ``sample`` does.

The classifier of paper 2.4 (BiLSTM, logit = sum_l alpha_l beta_l) is trained
under uniform attention; beta_l is the log-odds if the model attended only to
position l. On positive validation sequences with keyword position l*:

- ``keyword``: beta_{l*};   ``after``: beta_{l*+1} (sequences with l* < L - 1);
- ``uniform``: mean_l beta_l (the uniform-attention logit);   ``last``: beta_{L-1}.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from attnlearn.models.classifier import Classifier
from attnlearn.training.adam import Adam

KEYWORD = 1
QUANTITIES = ("keyword", "after", "uniform", "last")


def sample(n: int, length: int, vocab: int, rng: np.random.Generator):
    """ids [n, length] (int64), labels [n] (0/1), keyword position [n] (-1 for negatives)."""
    ids = rng.integers(2, vocab + 1, size=(n, length))
    labels = rng.integers(0, 2, size=n)
    pos = np.where(labels == 1, rng.integers(0, length, size=n), -1)
    rows = np.nonzero(labels)[0]
    ids[rows, pos[rows]] = KEYWORD
    return ids, labels, pos


def log_odds(beta: np.ndarray, pos: np.ndarray) -> dict:
    """The four quantities, averaged over the positive rows of beta [n, L]."""
    rows = np.nonzero(pos >= 0)[0]
    b, p = beta[rows], pos[rows]
    has_next = p < beta.shape[1] - 1
    return {"keyword": float(b[np.arange(len(p)), p].mean()),
            "after": float(b[np.arange(len(p))[has_next], p[has_next] + 1].mean()),
            "uniform": float(b.mean(1).mean()), "last": float(b[:, -1].mean())}


def train_keyword(length: int, vocab: int, model: dict, steps: int, batch_size: int, lr: float,
                  eval_every: int, eval_samples: int, seed: int, device="cpu") -> pd.DataFrame:
    """Curves (step, accuracy, the four log-odds) of one uniform-attention run on ``device``
    (initialised on the CPU: a seed gives the same weights on any device)."""
    torch.manual_seed(seed)
    with torch.device("cpu"):
        net = Classifier(vocab + 1, attention="uniform", **model)
    net.to(device)
    optim = Adam(net.parameters(), lr)
    train_rng = np.random.default_rng([seed, 0])
    ids, labels, pos = sample(eval_samples, length, vocab, np.random.default_rng([seed, 1]))
    # lengths stay on the CPU: packing reads them there
    val_ids, val_len = torch.as_tensor(ids, device=device), torch.full((len(ids),), length, device="cpu")
    rows = []
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            net.eval()
            with torch.no_grad():
                out = net(val_ids, val_len)
            net.train()
            acc = float(((out["logit"] > 0).cpu().numpy() == labels).mean())
            rows.append({"seed": seed, "step": step, "accuracy": acc, **log_odds(out["beta"].cpu().numpy(), pos)})
        if step == steps:
            break
        x, y, _ = sample(batch_size, length, vocab, train_rng)
        out = net(torch.as_tensor(x, device=device), torch.full((batch_size,), length, device="cpu"))
        loss = F.binary_cross_entropy_with_logits(out["logit"], torch.as_tensor(y, dtype=torch.float32, device=device))
        optim.zero_grad(set_to_none=True)
        loss.backward()
        optim.step()
    return pd.DataFrame(rows)
