"""Small shared fixtures: tiny token tables and run parameters."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from attnlearn.data.synthetic import synthetic_cls, synthetic_mt
from attnlearn.models.tasks import make_task
from attnlearn.data.tokenize import load_sentencepiece, tokenize_classification, tokenize_translation, word_starts

torch.set_num_threads(1)

REPO = Path(__file__).resolve().parents[1]


def rows_module(name: str):
    """attnlearn.rows.<name>, the module behind the command paper_rows/<name>.py."""
    return importlib.import_module(f"attnlearn.rows.{name}")


def script_module(path: str):
    """A script of the repository (``path`` from its root: benchmarks/, diagnostics/,
    workflow/scripts/) imported as a module: scripts are run by hand or by Snakemake, not installed."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, REPO / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

MT_OPTIONS = dict(src_vocab=40, tgt_vocab=30, min_len=3, max_len=7, zipf=1.0, p_swap=0.1, p_delete=0.05,
                  p_insert=0.05, n_fillers=3)
CLS_OPTIONS = dict(vocab=60, keywords_per_class=3, min_len=4, max_len=9, zipf=1.0, min_keywords=1,
                   max_keywords=2, p_opposite=0.2)


@pytest.fixture(scope="session")
def mt_tokenized():
    """(SentencePiece model bytes, token tables) of a small synthetic_mt corpus."""
    data = synthetic_mt(n_sentences=260, seed=0, **MT_OPTIONS)
    return tokenize_translation({"train": data[:200].reset_index(drop=True),
                                 "valid": data[200:].reset_index(drop=True)}, 120, 0)


@pytest.fixture(scope="session")
def mt_data(mt_tokenized):
    model, tables = mt_tokenized
    return make_task("translation", load_sentencepiece(model).get_piece_size()), tables


@pytest.fixture(scope="session")
def starts_word(mt_tokenized):
    """bool [V]: the pieces of mt_tokenized's SentencePiece model that start a word."""
    return word_starts(load_sentencepiece(mt_tokenized[0]))


@pytest.fixture(scope="session")
def cls_tokenized():
    """(vocabulary, token tables) of a small synthetic_cls corpus (source seed 0)."""
    data = synthetic_cls(n_sentences=260, seed=0, **CLS_OPTIONS)
    return tokenize_classification({"train": data[:200].reset_index(drop=True),
                                    "valid": data[200:].reset_index(drop=True)}, 2)


@pytest.fixture(scope="session")
def cls_data(cls_tokenized):
    vocab, tables = cls_tokenized
    return make_task("classification", len(vocab)), tables


def run_params(task_name, variant="standard", seed=1, steps=12):
    model = ({"hidden": 16, "layers": 2, "dropout": 0.2} if task_name == "translation"
             else {"embed": 12, "hidden": 16, "att_hidden": 8})
    return {"name": "test", "task": task_name, "variant": variant, "seed": seed, "model": model,
            "device": "cpu",
            "train": {"steps": steps, "batch_size": 8, "lr": 1e-2, "log_every": 2,
                      "checkpoints": {"steps": [0, 2, 5], "every": 4, "last": True}}}


def as_frame(x):
    return pd.DataFrame(x) if not isinstance(x, pd.DataFrame) else x


def batch_of(task, table, n=6):
    return task.batch(table, np.arange(n))


def toy_experiment_frames(device="cpu") -> list:
    """The controlled experiments at toy size on ``device`` (copying, the multi-head search and
    rescue, the keyword toy): the frames that the device tests compare."""
    from attnlearn.experiments import copying as E
    from attnlearn.experiments import multihead as M
    from attnlearn.experiments.keyword import train_keyword

    spec = {"vocab": 6, "length": 3}
    train = {"steps": 6, "batch_size": 8, "lr": 1e-2, "eval_every": 3, "eval_samples": 10}
    mh = {"heads": 2, "good_heads": 1, "bad_heads": 2, "data_seeds": [0], "good_acc": 0.99, "bad_acc": 0.98,
          "max_candidates": 3, "base_seed": 0, "head_seed": 100, "random_head_seed": 1000, "combo_seed": 0,
          "trials": 1, "combo_data_seed": 0}
    base, good, bad, heads = M.find_heads(spec, {"hidden": 8}, train, mh, device)
    return [E.copying("t", spec, [0, 1], {"hidden": 8}, train, 0.9, device), heads,
            M.multihead(spec, {"hidden": 8}, train, mh, base, good, bad, 0.9, device),
            train_keyword(length=5, vocab=6, model={"embed": 8, "hidden": 8, "att_hidden": 4}, steps=6, batch_size=8,
                          lr=1e-2, eval_every=3, eval_samples=20, seed=0, device=device)]


pytest_plugins = ["tiers"]  # the fast and slow tiers and the fast tier's guard (tests/tiers.py)


@pytest.fixture(autouse=True)
def _rows_ledger_kept_out_of_the_checkout(monkeypatch, tmp_path):
    """A test that starts a row without --out would append to the checkout's own ledger
    (reproduction/rows/ledger.jsonl, the record of every real row started): its lines go to the
    test's tmp_path instead."""
    from attnlearn.rows import ledger

    real, own = ledger.append, (REPO / "reproduction/rows").resolve()
    monkeypatch.setattr(ledger, "append",
                        lambda out, record: real(tmp_path / "ledger" if Path(out).resolve() == own else out, record))
