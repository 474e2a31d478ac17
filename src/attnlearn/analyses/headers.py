"""The header question's analysis (does the attention's first choice fall in a post's header?):
per replicate of a 20 Newsgroups row, how often alpha* and xi^uf put first a word of the post's
header (From:, Subject:, ... up to the first blank line) rather than of its body,
A(alpha*, xi^uf) on the posts where alpha* picks a header word and on the rest, and
A(alpha*, xi^uf) with the header's positions left out of both measures.

No rule imports this module (it reruns no job): the reproduction reads it over a finished
row's working directory (attnlearn.rows.header_rows). Where a header ends comes from parsing
the post twice (attnlearn.data.headers), checked against the row's own prepared posts.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from attnlearn.agreement.metric import probe_measure
from attnlearn.agreement.readings import CENTRAL, position_split
from attnlearn.agreement.words import attended_rows, id_matrix, token_names
from attnlearn.data.headers import header_lengths, header_mask
from attnlearn.data.prepare import prepare

COLUMNS = ["dataset", "replicate", "a_run", "u_run", "independent", "a_step", "u_step", CENTRAL,
           "header_positions", "alpha_header_share", "xi_header_share", "agr_header_rows", "agr_body_rows", "agr_without_header"]


class HeaderError(ValueError):
    """The row's files are not the ones the header split parses (another config, code or rerun)."""


def checked_lengths(source: dict, archive: Path, prepared: pd.Series) -> np.ndarray:
    """The header length of each validation post of ``archive``, whose parse must give the row's
    ``prepared`` validation texts word for word."""
    if source.get("options", {}).get("strip_headers"):
        raise HeaderError("the dataset strips the headers; there is no header to read")
    whole = prepare(source, {"archive": archive})["valid"]["text"]
    if prepared.tolist() != whole.tolist():
        raise HeaderError("the archive parses to other validation posts than the row's results/data "
                          "(another config or code?)")
    return header_lengths(source, {"archive": archive})


def replicate_rows(results: Path, dataset: str, lengths: np.ndarray) -> pd.DataFrame:
    """One row per replicate of ``results``/tables/replicate_readings.parquet: the header split of
    its A(alpha*, xi^uf), from the probes of its A and U runs (which must give the reading's
    value)."""
    names = token_names(json.loads((results / "tokenized" / dataset / "tokenizer.json").read_text()))
    sources = id_matrix(pd.read_parquet(results / "tokenized" / dataset / "valid.parquet")["ids"])
    readings = pd.read_parquet(results / "tables/replicate_readings.parquet")
    probes = results / "probes" / dataset
    out = []
    for r in readings[readings["dataset"] == dataset].itertuples():
        rows, arrays = attended_rows(names, sources,
                                     probe_measure(probes / f"{r.a_run}.parquet", "alpha", int(r.a_step)),
                                     probe_measure(probes / f"{r.u_run}.parquet", "xi", int(r.u_step)))
        if not np.isclose(rows["hit"].mean(), getattr(r, CENTRAL), rtol=0, atol=1e-9):
            raise HeaderError(f"{r.a_run} x {r.u_run}: the probes give {rows['hit'].mean():.6f}, the readings "
                              f"{getattr(r, CENTRAL):.6f}")
        mask = header_mask(lengths, rows["example"].to_numpy(), arrays["alpha"].shape[1])
        split = position_split(rows, arrays, mask)
        real = ~np.isnan(arrays["alpha"])
        out.append({"dataset": dataset, "replicate": r.replicate, "a_run": r.a_run, "u_run": r.u_run,
                    "independent": bool(r.independent), "a_step": int(r.a_step), "u_step": int(r.u_step),
                    CENTRAL: getattr(r, CENTRAL),  # a position drawn at random per post:
                    "header_positions": float(((mask & real).sum(1) / real.sum(1)).mean()),
                    "alpha_header_share": split["alpha_share"],
                    "xi_header_share": split["xi_share"], "agr_header_rows": split["agr_in"],
                    "agr_body_rows": split["agr_out"], "agr_without_header": split["agr_without"]})
    return pd.DataFrame(out, columns=COLUMNS)
