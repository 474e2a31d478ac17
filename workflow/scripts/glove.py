"""Rules glove_words and glove_vectors: the GloVe vocabulary, or one dataset's embedding rows."""

import json

import numpy as np

from attnlearn.data.glove import glove_matrix, glove_words
from attnlearn.runtime.io import atomic_path
from attnlearn.runtime.jobs import run


def main(job):
    if "words" in job.output.keys():
        with atomic_path(job.output.words) as tmp:
            tmp.write_text("\n".join(glove_words(job.input.zip, job.params.member)) + "\n")
        return
    vocab = json.load(open(job.input.tokenizer))["vocab"]
    matrix = glove_matrix(job.input.zip, job.params.member, vocab, job.params.dim)
    print(f"GloVe vectors for {int((~np.isnan(matrix).any(1)).sum())} of {len(vocab)} words")
    with atomic_path(job.output.vectors, ".npy") as tmp:
        np.save(tmp, matrix)


run(main, globals().get("snakemake"))
