"""Where a 20 Newsgroups post's header ends, in words, to ask whether the attention's
first choice falls in the header (From:, Subject:, ... up to the first blank line) or the body.

The word preprocessing (parsers.words) keeps runs of word characters, and a header ends at a
blank line, so a post's words are its header's words followed by its body's: the header's
length is the post's word count less its body's (the same post parsed with strip_headers).
Nothing of the pipeline imports this module, so it reruns no job (paper_rows/header_rows.py).
"""

from __future__ import annotations

import numpy as np

from attnlearn.data.prepare import prepare


def header_lengths(source: dict, inputs: dict, split: str = "valid") -> np.ndarray:
    """Per post of ``split``, in the order prepare_data writes them (parsed, shuffled, cut to
    ``limit``): how many of its words are its header's. ``source``/``inputs``: a
    twenty_newsgroups source as the config gives it and its downloaded files, as prepare takes
    them; shuffling and the limit go by row number, so both parses keep the same posts."""
    def posts(strip: bool):
        options = {**source.get("options", {}), "strip_headers": strip}
        return prepare({**source, "options": options}, inputs)[split]["text"].str.split()

    whole, body = posts(False), posts(True)
    lengths = whole.map(len) - body.map(len)
    bad = [i for i, (w, b, n) in enumerate(zip(whole, body, lengths)) if n < 0 or w[n:] != b]
    if bad:  # a post whose words are not its header's then its body's: the premise fails
        raise ValueError(f"{inputs} ({split}): post {bad[0]} does not end with its body's words ({len(bad)} post(s))")
    return lengths.to_numpy()


def header_mask(lengths: np.ndarray, examples: np.ndarray, width: int) -> np.ndarray:
    """[rows, width] True at the positions of each row's header words: position 0 is <s>, so a
    post's h header words sit at 1..h (a cut at max_tokens keeps whatever of them fits)."""
    position = np.arange(width)[None, :]
    return (position >= 1) & (position <= lengths[examples][:, None])
