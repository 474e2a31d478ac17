"""Checks of an examples page (attnlearn.reporting.examples) shared by tests/test_examples_page.py and the
workflow tests: its embedded JSON read back, its values against the probe tables, and what a
browser shows of it."""

import json
import re

import numpy as np

from attnlearn.agreement.metric import KEY_T, agreement_rows, hit_positions, load_measure

ROLES = {"alpha": "A", "grad": "A", "xi": "U", "xi_px": "P"}


def page_json(page: str) -> dict:
    """The data a page embeds, as a test reads it back."""
    return json.loads(re.search(r"<script type='application/json' id='page-data'>(.*?)</script>", page,
                                re.S).group(1).replace("<\\/", "</"))


def assert_values_are_the_probes(data: dict, tables: dict, rtol: float = 5e-4) -> None:
    """Every shaded value (rounded to the page's digits), top-k position, argmax and hit of every
    view equals what the probe tables ({"A", "U", "P"}: pyarrow tables) and attnlearn.agreement.metric
    give for that example, row and step."""
    sample = [e["id"] for e in data["examples"]]
    for view in data["views"]:
        measures = list(view["values"])  # those its probe computed at the view's steps
        assert set(measures) <= {m["key"] for m in data["measures"]} and {"alpha", "xi"} <= set(measures)
        steps = {"A": view["a_step"], "U": view["u_step"], "P": None}
        loaded = {m: load_measure(tables[ROLES[m]], m, steps[ROLES[m]]) for m in measures}
        for i, e in enumerate(sample):
            rows = {m: loaded[m].values[loaded[m].keys // KEY_T == e] for m in measures}
            n = len(data["examples"][i]["source"])
            for m, v in rows.items():
                np.testing.assert_allclose(np.array(view["values"][m][i], dtype=float), v[:, :n], rtol=rtol)
                assert view["top"][m][i] == [np.flatnonzero(h).tolist() for h in hit_positions(v)]
                assert view["argmax"][m][i] == np.nanargmax(v, axis=1).tolist()
            for m in set(measures) - {"xi"}:
                assert view["hits"][m][i] == agreement_rows(rows[m], rows["xi"]).tolist()
            assert np.isclose(view["disagreement"][i], 1 - agreement_rows(rows["alpha"], rows["xi"]).mean())


def shown_values(box, measure: str) -> list:
    return box.locator(f".tok[data-measure={measure}]").evaluate_all("els => els.map(e => Number(e.dataset.value))")


def check_shown_view(page, data: dict, v: int) -> None:
    """What ``page`` (a Playwright page or frame) shows is view v: its label, and every example's
    first row, measure by measure."""
    view = data["views"][v]
    assert page.locator("#view-label").text_content() == view["label"]
    assert page.locator(".example").count() == len(data["examples"])
    for i, example in enumerate(data["examples"]):
        box = page.locator(f".example[data-example='{example['id']}']")
        for m in data["measures"]:
            if m["key"] in view["values"]:
                assert shown_values(box, m["key"]) == view["values"][m["key"]][i][0]
            else:  # not computed at this view's checkpoint: said, not shaded
                assert shown_values(box, m["key"]) == []
                assert box.locator(f"[data-absent={m['key']}]").text_content() == "not computed at this checkpoint"
