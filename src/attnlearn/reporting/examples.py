"""The examples page's data (rule ``examples``): a seeded sample of probed validation examples,
each measure's values over their source positions at a few checkpoints ("views"), the top-k
positions of each (k = ceil(0.05 n), the positions an argmax may take for A to count a hit),
A's hit per row against xi^uf, and the word summary (attnlearn.agreement.words) over every probed example.
examples_html renders it; the values are the probe tables', rounded to ``DIGITS`` significant
digits.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa

from attnlearn.agreement.metric import KEY_T, Measure, agreement_rows, computed_steps, hit_positions, load_measure
from attnlearn.agreement.words import attended_rows, by_word, id_matrix, near_table, source_column

DIGITS = 4
# (probe column, role of the run it is read from, label); A's run at the view's A step, the
# uniform run U at the view's U step, the proxy P at its best epoch (the same in every view). A
# view shows a measure where its probe computed it: g at run A's best checkpoint only
# (probe.at_best), so in Table 2's view
MEASURES = (("alpha", "A", "α (run A's attention)"), ("xi", "U", "ξ^uf (uniform run's lexical probe)"),
            ("xi_px", "P", "ξ^px (bag-of-words proxy)"), ("grad", "A", "g (run A's gradient saliency)"))
AGAINST = "xi"  # every hit is A(measure, xi^uf), as in Table 2
NEAR = 2  # widest window of the summary's near agreement


def chosen_steps(steps, n: int) -> list[int]:
    """At most ``n`` of ``steps``, evenly spread by index, the first and last included."""
    steps = sorted(set(steps))
    if len(steps) <= n:
        return steps
    return [steps[i] for i in sorted(set(np.linspace(0, len(steps) - 1, n).round().astype(int)))]


def sample_examples(examples, n: int, seed: int) -> np.ndarray:
    """A seeded sample of ``n`` example ids (all when fewer), in id order."""
    examples = np.unique(np.asarray(examples, dtype=np.int64))
    if len(examples) <= n:
        return examples
    return np.sort(np.random.default_rng(seed).choice(examples, n, replace=False))


def uniform_peak(agr: pd.DataFrame, star: int) -> int:
    """The uniform run's step where A(alpha*, xi^uf) peaks, the one Table 2 reads (earliest on ties)."""
    rows = agr[(agr["metric"] == "agreement") & (agr["a_role"] == "A") & (agr["a_measure"] == "alpha")
               & (agr["a_step"] == star) & (agr["b_measure"] == "xi") & (agr["b_role"] == "U")]
    return int(rows.sort_values("b_step").loc[lambda r: r["value"] == r["value"].max(), "b_step"].iloc[0])


def views(a_steps, u_steps, star: int, u_peak: int, n: int) -> list[dict]:
    """What the page's step switch shows: first Table 2's pair (alpha* at run A's best step,
    xi^uf where it agrees most with it), then up to ``n`` checkpoints both runs have, each
    showing A and U at the same step."""
    table2 = {"label": f"Table 2: α* (A step {star}) vs ξ^uf at its peak (U step {u_peak})",
              "a_step": star, "u_step": u_peak}
    shared = chosen_steps(set(a_steps) & set(u_steps), n)
    return [table2] + [{"label": f"A and U at step {s}", "a_step": s, "u_step": s} for s in shared]


def rounded(values: np.ndarray, digits: int = DIGITS) -> np.ndarray:
    """``values`` rounded to ``digits`` significant digits (zeros and NaN kept)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(values))))
    scale = np.where(np.isfinite(scale), scale, 1.0)
    return np.round(values * scale) / scale


def _row_lists(values: np.ndarray, n: np.ndarray) -> list[list]:
    """Each row's first n values; a non-finite value as None (JSON has no NaN or infinity)."""
    return [[v if np.isfinite(v) else None for v in row[:k].tolist()] for row, k in zip(values, n)]


def _by_example(items: list, examples: np.ndarray, order: np.ndarray) -> list[list]:
    """Per-row items grouped per example of ``order`` (rows sorted by key)."""
    bounds = np.searchsorted(examples, order, side="left"), np.searchsorted(examples, order, side="right")
    return [items[a:b] for a, b in zip(*bounds)]


def shared_rows(measures: dict[str, Measure]) -> dict[str, np.ndarray]:
    """Every measure on the rows all of them have (key order), NaN-padded to one width."""
    keys = measures[next(iter(measures))].keys
    for m in measures.values():
        keys = np.intersect1d(keys, m.keys)
    width = max(m.values.shape[1] for m in measures.values())
    out = {"keys": keys}
    for name, m in measures.items():
        v = m.values[np.searchsorted(m.keys, keys)]
        out[name] = np.pad(v, ((0, 0), (0, width - v.shape[1])), constant_values=np.nan)
    return out


def view_values(measures: dict[str, Measure], sample: np.ndarray) -> dict:
    """One view on the sampled examples: per measure, example and row its values, top-k
    positions and argmax; per compared measure and row whether A(measure, xi^uf) is a hit;
    per example the share of its rows where alpha misses (the page sorts by it)."""
    rows = shared_rows(measures)
    examples = rows["keys"] // KEY_T
    n = (~np.isnan(rows[AGAINST])).sum(1)
    out = {"values": {}, "top": {}, "argmax": {}, "hits": {}}
    for name in measures:
        v = rows[name]
        out["values"][name] = _by_example(_row_lists(rounded(v), n), examples, sample)
        out["top"][name] = _by_example([np.flatnonzero(h).tolist() for h in hit_positions(v)], examples, sample)
        out["argmax"][name] = _by_example(np.nanargmax(v, axis=1).tolist(), examples, sample)
        if name != AGAINST:
            out["hits"][name] = _by_example(agreement_rows(v, rows[AGAINST]).astype(int).tolist(), examples, sample)
    hit = agreement_rows(rows["alpha"], rows[AGAINST])
    out["disagreement"] = [float(1 - hit[examples == e].mean()) if (examples == e).any() else None for e in sample]
    return out


def word_summary(names: np.ndarray, sources: np.ndarray, alpha: Measure, xi: Measure, most: int) -> dict:
    """The words alpha and xi^uf put first most often over every probed row, the agreement on
    each with its chance value, and the near-window agreement (attnlearn.agreement.words)."""
    rows, arrays = attended_rows(names, sources, alpha, xi)

    def table(column):
        t = by_word(rows, column, most).reset_index().rename(columns={column: "word"})
        return t.to_dict(orient="records")

    return {"rows": len(rows), "agreement": float(rows["hit"].mean()), "chance": float(rows["chance"].mean()),
            "alpha": table("alpha_word"), "xi": table("xi_word"),
            "near": near_table(arrays["alpha"], arrays["xi"], NEAR).to_dict(orient="records")}


def display_tokens(names: np.ndarray, ids, pieces: bool) -> tuple[list[str], list[bool]]:
    """Each token's text and whether it starts a word: SentencePiece ``pieces`` start one with
    '▁' (taken off for display), a word vocabulary's tokens always do."""
    text = [str(names[i]) for i in ids]
    if not pieces:
        return text, [True] * len(text)
    return [t.lstrip("▁") or "▁" for t in text], [t.startswith("▁") for t in text]


def example_entries(names: np.ndarray, valid: pd.DataFrame, task: str, sample: np.ndarray) -> list[dict]:
    """What the page shows of each sampled example: its source tokens, and its target tokens
    (translation: y_1 .. y_T </s>, one per probe row t) or its label (classification)."""
    pieces = any("▁" in str(n) for n in names[: min(len(names), 1000)])
    out = []
    for e in sample:
        row = valid.iloc[int(e)]
        entry = {"id": int(e)}
        entry["source"], entry["word_start"] = display_tokens(names, row[source_column(task)], pieces)
        if task == "translation":
            entry["target"] = display_tokens(names, row["tgt_ids"][1:], pieces)[0]
        else:
            entry["label"] = int(row["label"])
        out.append(entry)
    return out


def restrict(m: Measure, examples: np.ndarray) -> Measure:
    """The rows of ``m`` whose example is in ``examples``."""
    keep = np.isin(m.keys // KEY_T, examples)
    return Measure(m.keys[keep], m.values[keep])


class Probes:
    """A page's probe tables by role (A, U, P), each measure at each step loaded once. The
    proxy's table has one step (its best epoch): it is read whole whatever the view."""

    def __init__(self, tables: dict[str, pa.Table]):
        self.tables = tables
        self._loaded: dict[tuple, Measure] = {}
        self._computed: dict[tuple, set[int]] = {}

    def has(self, name: str, role: str, step: int | None = None) -> bool:
        """Whether the role's table has measure ``name``, with values at ``step`` where one is given
        (a probe computes probe.at_best's measures at the run's best checkpoints only)."""
        if name not in self.tables[role].column_names:
            return False
        if step is not None and (name, role) not in self._computed:
            self._computed[name, role] = computed_steps(self.tables[role], name)
        return step is None or step in self._computed[name, role]

    def measure(self, name: str, role: str, step: int | None) -> Measure:
        key = (name, role, None if role == "P" else step)
        if key not in self._loaded:
            self._loaded[key] = load_measure(self.tables[role], name, key[2])
        return self._loaded[key]

    def view(self, view: dict, examples: np.ndarray) -> dict[str, Measure]:
        """Every measure the tables have at the view's steps, on ``examples``."""
        step = {"A": view["a_step"], "U": view["u_step"], "P": None}
        return {name: restrict(self.measure(name, role, step[role]), examples)
                for name, role, _ in MEASURES if self.has(name, role, step[role])}


def page_data(dataset: str, task: str, names: np.ndarray, valid: pd.DataFrame, probes: Probes,
              shown: list[dict], sample: np.ndarray, most: int) -> dict:
    """Everything the examples page shows, as JSON-ready values: ``shown`` as ``views`` gives them."""
    sources = id_matrix(valid[source_column(task)])
    out_views = []
    for view in shown:
        summary = word_summary(names, sources, probes.measure("alpha", "A", view["a_step"]),
                               probes.measure("xi", "U", view["u_step"]), most)
        out_views.append({**view, **view_values(probes.view(view, sample), sample), "summary": summary})
    measures = [{"key": name, "role": role, "label": label} for name, role, label in MEASURES
                if any(name in view["values"] for view in out_views)]
    return {"dataset": dataset, "task": task, "digits": DIGITS, "measures": measures, "against": AGAINST,
            "examples": example_entries(names, valid, task, sample), "views": out_views}
