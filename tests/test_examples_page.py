"""The examples page (attnlearn.reporting.examples, examples_html), the word summary it shares with
diagnostics/attended_words.py (attnlearn.agreement.words) and the count-table figures (count_figures), on
small synthetic probe tables; the page in a real headless browser where one is installed."""

import json
import math
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from attnlearn.agreement.metric import KEY_T, Measure, agreement_rows, baseline_rows, load_measure
from attnlearn.reporting.count_figures import count_polarity, learned_grid, proxy_word_logit, top_pairs
from attnlearn.reporting.examples import Probes, chosen_steps, page_data, rounded, sample_examples, views
from attnlearn.reporting.examples_html import page_html
from attnlearn.data.probe_table import probe_table
from attnlearn.agreement.words import by_word, id_matrix

from browser import browser_page
from examples_checks import assert_values_are_the_probes, check_shown_view, page_json, shown_values

NAMES = np.array(["<pad>", "<s>", "</s>", "<unk>", "▁a", "b", "▁c", "▁d", "e", "▁f"], dtype=object)
STEPS = [0, 5, 10]


def random_valid(n_examples: int, rng) -> pd.DataFrame:
    """Tokenized translation examples: <s> pieces </s> on both sides."""
    def seq(low, high):
        return [1, *rng.integers(4, len(NAMES), rng.integers(low, high)).tolist(), 2]
    return pd.DataFrame({"src_ids": [seq(2, 9) for _ in range(n_examples)],
                         "tgt_ids": [seq(1, 5) for _ in range(n_examples)]})


def random_probe(valid: pd.DataFrame, measures, steps, rng, ties=False):
    """A probe table: one row per (step, example, t) over each example's source positions."""
    rows = [(s, e, t, len(src)) for s in steps for e, (src, tgt) in enumerate(zip(valid["src_ids"], valid["tgt_ids"]))
            for t in range(len(tgt) - 1)]
    step, example, t, n = map(np.array, zip(*rows))
    total = int(n.sum())
    values = {m: (rng.integers(0, 3, total) if ties else rng.normal(size=total)).astype(np.float32) for m in measures}
    return probe_table({"step": step, "example": example, "t": t, "n": n, "measures": values})


def only_at(table: pa.Table, name: str, steps) -> pa.Table:
    """``table`` with measure ``name`` null outside ``steps``, as a probe writes probe.at_best's measures."""
    keep = pc.is_in(table["step"], pa.array(steps, table["step"].type))
    column = pc.if_else(keep, table[name], pa.nulls(len(table), table[name].type))
    return table.set_column(table.schema.get_field_index(name), name, column)


@pytest.fixture(scope="module")
def synthetic():
    rng = np.random.default_rng(0)
    valid = random_valid(12, rng)
    probes = Probes({"A": only_at(random_probe(valid, ["alpha", "grad"], STEPS, rng), "grad", [5]),  # g at A's best
                     "U": random_probe(valid, ["xi"], STEPS, rng, ties=True),
                     "P": random_probe(valid, ["xi_px"], [3], rng)})
    shown = views(STEPS, STEPS, star=5, u_peak=10, n=3)
    sample = sample_examples(np.arange(12), 5, seed=1)
    data = page_data("toy", "translation", NAMES, valid, probes, shown, sample, most=4)
    return valid, probes, data


def test_chosen_steps_spread_over_training_with_both_ends():
    assert chosen_steps([0, 10, 50, 100, 150], 10) == [0, 10, 50, 100, 150]
    picked = chosen_steps(range(0, 2001, 50), 4)
    assert len(picked) == 4 and picked[0] == 0 and picked[-1] == 2000


def test_sample_is_seeded_sorted_and_drawn_from_the_examples():
    a, b = sample_examples(np.arange(100), 10, 3), sample_examples(np.arange(100), 10, 3)
    assert (a == b).all() and (np.diff(a) > 0).all() and len(a) == 10
    assert not (a == sample_examples(np.arange(100), 10, 4)).all()
    assert (sample_examples([5, 3, 3], 10, 0) == [3, 5]).all()


def test_rounding_keeps_four_significant_digits():
    x = np.array([0.0, 1.234567, -98765.4, 3.3e-7, np.nan])
    r = rounded(x)
    assert r[0] == 0 and np.isnan(r[-1])
    assert np.allclose(r[:4], x[:4], rtol=5e-4, atol=0)
    assert r[1] == 1.235 and r[2] == -98770


def test_first_view_is_table_2s_pair_then_shared_checkpoints():
    shown = views([0, 5, 10], [0, 5, 10, 20], star=5, u_peak=20, n=2)
    assert (shown[0]["a_step"], shown[0]["u_step"]) == (5, 20)
    assert [(v["a_step"], v["u_step"]) for v in shown[1:]] == [(0, 0), (10, 10)]


def test_page_values_are_the_probe_tables_on_the_sampled_examples(synthetic):
    valid, probes, data = synthetic
    assert_values_are_the_probes(data, probes.tables)
    for i, e in enumerate(data["examples"]):  # one row per target word, one value per source token
        assert len(data["views"][0]["values"]["alpha"][i]) == len(e["target"]) == len(valid["tgt_ids"][e["id"]]) - 1
        assert len(e["source"]) == len(valid["src_ids"][e["id"]])
    # the step switch shows other values; the proxy has one checkpoint
    assert data["views"][1]["values"]["alpha"] != data["views"][2]["values"]["alpha"]
    assert data["views"][1]["values"]["xi_px"] == data["views"][2]["values"]["xi_px"]


def test_g_shows_where_its_probe_computed_it_and_the_page_says_so(synthetic):
    """g is computed at run A's best checkpoint only (probe.at_best): Table 2's view and the view
    of A's step 5 show it, the others leave it out, and the page's text says why."""
    _, probes, data = synthetic
    assert [("grad" in v["values"], v["a_step"]) for v in data["views"]] == [(True, 5), (False, 0), (True, 5),
                                                                               (False, 10)]
    assert "grad" in [m["key"] for m in data["measures"]]
    assert "g (run A's gradient saliency): computed by the probe at run A's best checkpoint only" in page_html(data)
    with pytest.raises(ValueError, match="measure 'grad' has no values at step 0: a probe computes"):
        probes.measure("grad", "A", 0)
    everywhere = Probes({**probes.tables, "A": probes.tables["A"].drop_columns("grad")})
    assert "computed by the probe" not in page_html(page_data("toy", "translation", NAMES, synthetic[0], everywhere,
                                                              data["views"], np.array([e["id"] for e in data["examples"]]),
                                                              most=4))


def test_word_summary_splits_the_agreement_by_word_with_its_chance(synthetic):
    valid, probes, data = synthetic
    summary = data["views"][0]["summary"]
    alpha, xi = probes.measure("alpha", "A", 5), probes.measure("xi", "U", 10)
    hits, chance = agreement_rows(alpha.values, xi.values), baseline_rows(xi.values)
    assert summary["rows"] == len(alpha.keys)
    assert summary["agreement"] == pytest.approx(hits.mean()) and summary["chance"] == pytest.approx(chance.mean())
    sources = id_matrix(valid["src_ids"])
    words = NAMES[sources[alpha.keys // KEY_T, np.nanargmax(alpha.values, axis=1)]]
    for entry in summary["alpha"]:
        on = words == entry["word"]
        assert entry["texts"] == on.sum()
        assert entry["agreement"] == pytest.approx(hits[on].mean())
        assert entry["chance"] == pytest.approx(chance[on].mean())
    assert [e["texts"] for e in summary["alpha"]] == sorted(pd.Series(words).value_counts().head(4), reverse=True)
    assert summary["near"][0]["agreement"] == pytest.approx(summary["agreement"])
    assert summary["near"][0]["chance"] == pytest.approx(summary["chance"])


def test_by_word_counts_add_up():
    rows = pd.DataFrame({"w": ["a", "b", "a", "c", "a"], "hit": [1.0, 0, 0, 1, 1], "chance": [0.1, 0.2, 0.3, 0.4, 0.5]})
    out = by_word(rows, "w", 2)
    assert list(out.index) == ["a", "b"] and list(out["texts"]) == [3, 1]
    assert out.loc["a", "agreement"] == pytest.approx(2 / 3) and out.loc["a", "chance"] == pytest.approx(0.3)
    assert out.loc["a", "share"] == pytest.approx(0.6)


def test_page_is_self_contained_and_its_json_reads_back(synthetic):
    _, _, data = synthetic
    page = page_html(data)
    assert page_json(page) == json.loads(json.dumps(data))
    assert "</s>" not in page.split("id='page-data'>")[1].split("</script>")[0]  # cannot close the script early
    assert not re.search(r"(src|href)\s*=\s*['\"]?(https?:)?//", page)  # no external resource


def test_learned_grid_averages_each_pair_where_it_meets():
    rng = np.random.default_rng(1)
    valid = random_valid(30, rng)
    xi = load_measure(random_probe(valid, ["xi"], [0], rng), "xi", 0)
    sources = id_matrix(valid["src_ids"])
    targets = id_matrix(valid["tgt_ids"].map(lambda ids: ids[1:]))
    src, tgt = np.array([7, 4, 9]), np.array([2, 8, 5, 6])
    grid = learned_grid(xi, sources, targets, src, tgt)
    for a, x in enumerate(src):
        for b, y in enumerate(tgt):
            found = [math.exp(xi.values[r, s]) for r, key in enumerate(xi.keys)
                     for s in range(len(valid["src_ids"][key // KEY_T]))
                     if valid["src_ids"][key // KEY_T][s] == x and valid["tgt_ids"][key // KEY_T][1 + key % KEY_T] == y]
            assert (np.isnan(grid[a, b]) and not found) or grid[a, b] == pytest.approx(np.mean(found))


def test_top_pairs_are_the_most_frequent_with_no_word_twice_and_no_markup():
    counts = pd.DataFrame({"src_id": [1, 4, 4, 6, 7, 6], "tgt_id": [5, 5, 8, 5, 9, 8],
                           "count": [100.0, 50, 40, 30, 20, 10]})
    src, tgt = top_pairs(counts, NAMES, 3)
    # by count: <s> (1) left out, (4, 8) reuses source 4, (6, 5) target 5
    assert src.tolist() == [4, 7, 6] and tgt.tolist() == [5, 9, 8]


def test_polarity_and_the_proxys_word_logit():
    counts = pd.DataFrame({"src_id": [4, 4, 5], "tgt_id": [0, 1, 1], "count": [1.0, 3.0, 2.0]})
    assert count_polarity(counts).to_dict() == {4: 0.5, 5: 1.0}
    z = np.array([[-2.0, 0.5, 3.0]])
    labels = np.array([0])
    signed = -np.logaddexp(0, z)  # log sigma(-z): the gold label is 0
    back = proxy_word_logit(Measure(np.array([0]), signed), labels)
    np.testing.assert_allclose(back, z, rtol=1e-9)


@pytest.mark.browser
def test_page_switches_steps_sorts_and_selects_a_target_word_in_a_browser(synthetic, tmp_path):
    """In a real headless browser: the shown values are the JSON's, the step switch shows
    another view's, the order switch sorts by disagreement, a click on a target word shows its row."""
    _, _, data = synthetic
    path = tmp_path / "page.html"
    path.write_text(page_html(data))
    with browser_page() as page:
        page.goto(path.as_uri())
        check_shown_view(page, data, 0)
        page.locator("#view").fill(str(len(data["views"]) - 1))
        check_shown_view(page, data, len(data["views"]) - 1)
        page.locator("#order").select_option("disagreement")
        shown = [int(x) for x in page.locator(".example").evaluate_all("els => els.map(e => e.dataset.example)")]
        last = data["views"][-1]
        by_id = {e["id"]: d for e, d in zip(data["examples"], last["disagreement"])}
        assert [by_id[e] for e in shown] == sorted(by_id.values(), reverse=True)
        first = page.locator(".example").first
        first.locator(".tgt").last.click()
        i = [e["id"] for e in data["examples"]].index(shown[0])
        t = len(data["examples"][i]["target"]) - 1
        assert shown_values(page.locator(".example").first, "alpha") == last["values"]["alpha"][i][t]

