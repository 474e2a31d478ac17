"""GloVe initialisation (off by default): vectors reach the step-0 checkpoint, and
the vocabulary keeps rarer training words that GloVe knows."""

import hashlib
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from attnlearn.data.glove import glove_matrix, glove_words
from attnlearn.data.prepare import prepare
from attnlearn.data.parsers import DataError
from attnlearn.data.tokenize import SPECIALS, build_word_vocab
from attnlearn.training.model import build_model
from conftest import run_params
from test_workflow import TINY, snakemake


def fake_glove(path, words, dim=4):
    vectors = {w: np.round(np.random.default_rng(i).normal(size=dim), 4) for i, w in enumerate(words)}
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"glove.test.{dim}d.txt", "".join(f"{w} {' '.join(map(str, v))}\n" for w, v in vectors.items()))
    return vectors


def test_glove_matrix_rows(tmp_path):
    vectors = fake_glove(tmp_path / "g.zip", ["the", "film", "good"])
    vocab = SPECIALS + ["film", "unseen", "good"]
    m = glove_matrix(tmp_path / "g.zip", "glove.test.4d.txt", vocab, 4)
    assert np.allclose(m[4], vectors["film"]) and np.allclose(m[6], vectors["good"])
    assert np.isnan(m[5]).all() and np.isnan(m[:4]).all()
    assert glove_words(tmp_path / "g.zip", "glove.test.4d.txt") == ["the", "film", "good"]
    with pytest.raises(DataError, match="line 2 has 4 values, expected 5"):  # line 1 is not in vocab
        glove_matrix(tmp_path / "g.zip", "glove.test.4d.txt", vocab, 5)


def test_vocab_keeps_rare_words_glove_knows():
    texts = ["a a a rare other", "a"]
    assert build_word_vocab(texts, 3)[4:] == ["a"]
    assert build_word_vocab(texts, 3, known={"rare"})[4:] == ["a", "rare"]


def test_embeddings_replace_known_rows_only(cls_data):
    task, _ = cls_data
    params = run_params("classification")
    plain = build_model(task, params)
    emb = np.full((task.vocab_size, params["model"]["embed"]), np.nan, dtype=np.float32)
    emb[5] = 1.0
    model = build_model(task, params, emb)
    assert torch.equal(model.embed.weight[5], torch.ones(params["model"]["embed"]))
    others = torch.arange(task.vocab_size) != 5
    assert torch.equal(model.embed.weight[others], plain.embed.weight[others])


@pytest.mark.workflow
def test_workflow_initialises_from_glove(tmp_path):
    config = yaml.safe_load(TINY.read_text())
    config["datasets"] = {"tiny_cls": config["datasets"]["tiny_cls"]}
    data = config["datasets"]["tiny_cls"]
    data["model"].update(glove=True, embed=4)
    data["tokenizer"] = {"min_count": 1000}  # only GloVe words make it into the vocabulary
    zip_path = tmp_path / "glove.zip"
    train = prepare(data["source"], {})["train"]  # the words the GloVe file should know
    words_known = sorted(set(" ".join(train["text"]).split()))[:10]
    vectors = fake_glove(zip_path, words_known)
    config["glove"] = {"url": zip_path.as_uri(), "sha256": hashlib.sha256(zip_path.read_bytes()).hexdigest(),
                       "member": "glove.test.4d.txt", "dim": 4}
    path = tmp_path / "glove.yaml"
    path.write_text(yaml.safe_dump(config))
    snakemake("--cores", "2", "results/runs/tiny_cls/standard-s1/train_log.parquet", "--configfile", path,
              cwd=tmp_path)
    vocab = json.load(open(tmp_path / "results/tokenized/tiny_cls/tokenizer.json"))["vocab"]
    assert sorted(vocab[4:]) == words_known
    step0 = torch.load(tmp_path / "results/runs/tiny_cls/standard-s1/checkpoints/step00000000.pt")
    for word in words_known:
        assert np.allclose(step0["embed.weight"][vocab.index(word)].numpy(), vectors[word], atol=1e-6)
    assert pd.read_parquet(tmp_path / "results/runs/tiny_cls/standard-s1/train_log.parquet")["step"].max() == 20
