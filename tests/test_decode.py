"""Beam search and BLEU: incremental decoding equals the teacher-forced model,
a beam of one is greedy decoding, and BLEU is sacrebleu's."""

import pytest
import torch

from attnlearn.models.decode import EOS, beam_search, corpus_bleu
from attnlearn.training.model import build_model
from conftest import run_params


def _model_and_batch(mt_data, arch="lstm"):
    task, tables = mt_data
    torch.manual_seed(0)
    params = run_params("translation")
    if arch == "lstm-heads":
        params["model"] = {**params["model"], "heads": 3, "head_combine": "mean", "score_scale": 0.5}
    if arch == "transformer":
        params["model"] = {"arch": "transformer", "hidden": 16, "layers": 2, "heads": 2, "ff": 32, "dropout": 0.0}
    model = build_model(task, params).eval()
    return task, model, task.batch(tables["valid"], range(6))


@pytest.mark.parametrize("arch", ["lstm", "lstm-heads", "transformer"])
def test_incremental_steps_equal_the_teacher_forced_forward(mt_data, arch):
    task, model, b = _model_and_batch(mt_data, arch)
    with torch.no_grad():
        full = torch.log_softmax(task.run(model, b)["logits"], -1)
        state = model.start(b["src"], b["src_len"])
        for t in range(b["tgt_in"].shape[1]):
            logp, state = model.step(b["tgt_in"][:, t], state)
            real = b["tgt_out"][:, t] != 0
            torch.testing.assert_close(logp[real], full[real, t], atol=1e-5, rtol=1e-5)


def test_beam_of_one_is_greedy_decoding(mt_data):
    task, model, b = _model_and_batch(mt_data)
    hyps = beam_search(model, b["src"], b["src_len"], beam=1, max_len=15)
    state = model.start(b["src"], b["src_len"])
    tok = torch.full((len(hyps),), 1)
    greedy = [[] for _ in hyps]
    done = torch.zeros(len(hyps), dtype=torch.bool)
    with torch.no_grad():
        for _ in range(15):
            logp, state = model.step(tok, state)
            tok = logp.argmax(-1)
            for i in range(len(hyps)):
                if not done[i] and tok[i] != EOS:
                    greedy[i].append(int(tok[i]))
            done |= tok == EOS
    assert hyps == greedy


def test_hypotheses_hold_no_specials_and_respect_max_len(mt_data):
    task, model, b = _model_and_batch(mt_data)
    for beam in (1, 3):
        hyps = beam_search(model, b["src"], b["src_len"], beam=beam, max_len=4)
        assert len(hyps) == 6 and all(len(h) <= 4 and not {0, 1, EOS} & set(h) for h in hyps)


def test_bleu_is_a_fraction_and_perfect_on_identity():
    refs = ["a man rides a horse .", "two dogs play in the snow ."]
    assert abs(corpus_bleu(refs, refs) - 1.0) < 1e-9
    assert 0.0 <= corpus_bleu(["a man rides .", "dogs play ."], refs) < 1.0


class ScriptedModel:
    """A decoder whose next-token log-probabilities depend on the last token alone: from <s>,
    </s> at 0.4 and token 3 at 0.35; after 3, </s> at 0.9. So </s> at once has the higher
    summed log-probability (-0.92 against -1.16) and [3, </s>] the higher per token (-0.58)."""
    V = 5
    NEXT = {1: [0.0, 0.0, 0.4, 0.35, 0.25], 3: [0.0, 0.0, 0.9, 0.05, 0.05]}

    def start(self, src, src_len):
        return {"h": torch.zeros(len(src), 1)}

    def step(self, tokens, state):
        rows = [self.NEXT.get(int(t), [0.0, 0.0, 1.0, 0.0, 0.0]) for t in tokens]
        return torch.tensor(rows).clamp(min=1e-12).log(), state


def test_the_final_beam_is_ranked_by_summed_or_by_per_token_log_probability():
    """probe.beam_rank: 'sum' (the authors' code) keeps the final beam's highest summed score,
    'mean' the highest per token; the search is the same, and an unknown rank is refused."""
    src, src_len = torch.ones(2, 3, dtype=torch.long), torch.tensor([3, 3])
    assert beam_search(ScriptedModel(), src, src_len, beam=2, max_len=5, rank="sum") == [[], []]
    assert beam_search(ScriptedModel(), src, src_len, beam=2, max_len=5, rank="mean") == [[3], [3]]
    assert beam_search(ScriptedModel(), src, src_len, beam=2, max_len=5) == [[], []]  # the default
    with pytest.raises(ValueError, match="rank 'longest' is not one of"):
        beam_search(ScriptedModel(), src, src_len, beam=2, max_len=5, rank="longest")
