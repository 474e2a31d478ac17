"""Write the example files of docs/own_data.md's worked example into a folder:

    python tests/make_own_data.py my_data

my_data/reviews.csv (columns `review`, `sentiment` = neg | pos: labelled texts) and
my_data/source.txt, my_data/target.txt (parallel sentences, one a line), made by the
synthetic generators so that they hold a learnable signal. tests/configs/own.yaml reads them.
"""

import sys
from pathlib import Path

from attnlearn.data.synthetic import synthetic_cls, synthetic_mt


def make(folder, n=240):
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    cls = synthetic_cls(n_sentences=n, seed=0, vocab=40, keywords_per_class=2, min_len=4, max_len=8, zipf=1.0,
                        min_keywords=1, max_keywords=2, p_opposite=0.2)
    cls = cls.assign(review=cls["text"], sentiment=cls["label"].map({0: "neg", 1: "pos"}))
    cls[["review", "sentiment"]].to_csv(folder / "reviews.csv", index=False)
    mt = synthetic_mt(n_sentences=n, seed=0, src_vocab=30, tgt_vocab=20, min_len=3, max_len=6, zipf=1.0,
                      p_swap=0.1, p_delete=0.05, p_insert=0.05, n_fillers=2)
    (folder / "source.txt").write_text("\n".join(mt["src"]) + "\n")
    (folder / "target.txt").write_text("\n".join(mt["tgt"]) + "\n")


if __name__ == "__main__":
    make(sys.argv[1] if len(sys.argv) > 1 else "my_data")
