"""Point a shipped config's dataset sources at local copies of the canonical downloads.

    python paper_rows/local_sources.py config/real_small.yaml ../shared/data > local.yaml
    snakemake --cores 2 --configfile local.yaml

The copies in ``../shared/data`` (see its README) are the canonical files, some
re-zipped with the same members: their checksums differ from the canonical ones,
so the written config pins the copies' own sha256. Datasets without a local copy
are left out. GloVe has no local copy either: classification vocabularies then count
training words only (``tokenizer.glove_vocab: false``; docs/methods.md 13). The tests
use the same table (tests/test_real_data.py).
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path

import yaml

# source kind -> download name -> (path under the data folder, sha256 of that copy)
LOCAL = {
    "multi30k": {"train": ("multi30k/training.tar.gz",
                           "20140d013d05dd9a72dfde46478663ba05737ce983f478f960c1123c6671be5e"),
                 "valid": ("multi30k/validation.tar.gz",
                           "a7aa20e9ebd5ba5adce7909498b94410996040857154dab029851af3a866da8c"),
                 "test": ("multi30k/mmt_task1_test2016.tar.gz",
                          "876a95a689a2a20b243666951149fd42d9bfd57cbbf8cd2c79d3465451564dd2")},
    "sst": {"archive": ("sst/trainDevTestTrees_PTB.zip",
                        "50faea3caee19dc213cba5b70cbdbc5b58538a587b5273c455eec93d4fff3c98")},
    "sms_spam": {"archive": ("sms_spam/smsspamcollection.zip",
                             "e74cf57842dec7758cbe8902d90d8755214ddfea414fe78f323d41e2be949ac9")},
    "twenty_newsgroups": {"archive": ("20newsgroups/20news-bydate-baseball-hockey.tar.gz",
                               "b1d9ea0f4103f6f576f3f0c6d7099c995e575dcd39ca110137e1102632fcc3ef")},
}


def local_config(shipped: dict, base_url: str) -> dict:
    """``shipped``'s entries for the datasets whose source kind has a local copy, their files at
    ``base_url`` (every dataset of that kind: e.g. multi30k, multi30k_tf and multi30k_mh)."""
    config = {k: copy.deepcopy(v) for k, v in shipped.items() if k != "datasets"}
    config["datasets"] = {}
    for name, entry in shipped["datasets"].items():
        files = LOCAL.get(entry["source"]["kind"])
        if files is None:
            continue
        entry = copy.deepcopy(entry)
        entry["source"]["files"] = {k: {"url": f"{base_url}/{path}", "sha256": sha} for k, (path, sha) in files.items()}
        if entry.get("task") == "classification":  # no local GloVe word list to extend the vocabulary
            entry.setdefault("tokenizer", {})["glove_vocab"] = False
        config["datasets"][name] = entry
    return config


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        sys.exit(__doc__)
    shipped = yaml.safe_load(Path(argv[0]).read_text())
    folder = Path(argv[1]).resolve()
    if not folder.is_dir():
        sys.exit(f"no such folder: {folder}")
    sys.stdout.write(yaml.safe_dump(local_config(shipped, folder.as_uri()), sort_keys=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
