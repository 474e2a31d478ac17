"""Rule tokenize: tokenizer.json and token-id tables per split."""

import base64

import pandas as pd

from attnlearn.runtime.io import write_json, write_parquet
from attnlearn.runtime.jobs import run
from attnlearn.data.tokenize import load_sentencepiece, tokenize_classification, tokenize_translation


def main(job):
    p = job.params
    splits = {name: pd.read_parquet(job.input[name]) for name in ("train", "valid", "test")}
    if p.task == "translation":
        model, tables = tokenize_translation(splits, p.tokenizer["vocab_size"], p.seed)
        meta = {"kind": "sentencepiece", "vocab_size": load_sentencepiece(model).get_piece_size(),
                "model_b64": base64.b64encode(model).decode()}
    else:
        known = set(open(job.input.words).read().split()) if "words" in job.input.keys() else None
        vocab, tables = tokenize_classification(splits, p.tokenizer["min_count"], known,
                                                p.tokenizer.get("max_tokens"))
        meta = {"kind": "words", "vocab_size": len(vocab), "vocab": vocab}
    for name, table in tables.items():
        write_parquet(table, job.output[name])
    write_json(meta, job.output.tokenizer)


run(main, globals().get("snakemake"))
