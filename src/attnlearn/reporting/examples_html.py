"""The examples page as one self-contained HTML file: the data of attnlearn.reporting.examples embedded as
JSON (``<script type="application/json" id="page-data">``, which tests read back), rendered by
inline JavaScript; no server and no external resource, so it works inside the Snakemake
report's single HTML file (shown there in an iframe)."""

from __future__ import annotations

import html
import json

STYLE = """
body{font-family:sans-serif;font-size:14px;margin:1em;color:#222}
h1{font-size:20px}h2{font-size:16px;margin:.4em 0}
#controls{position:sticky;top:0;background:#fff;padding:.4em 0;border-bottom:1px solid #ccc;z-index:1}
#controls{display:flex;flex-wrap:wrap;gap:.3em 1.5em;align-items:center}#view{width:18em;vertical-align:middle}
#view-label{min-width:28em;font-weight:bold}
#layout{display:flex;gap:1.5em;align-items:flex-start}#examples{flex:3;min-width:0}
#summary{flex:2;position:sticky;top:3em;font-size:13px}
.example{border:1px solid #ccc;border-radius:4px;padding:.4em .6em;margin:.6em 0}
.head{font-weight:bold;margin-bottom:.3em}.head .miss{color:#b00}.head .hit{color:#080}
.measures td,.measures th{padding:2px 4px;vertical-align:top;text-align:left;font-weight:normal}
.measures th{white-space:nowrap;font-size:12px;color:#555}
.tok{display:inline-block;padding:0 2px;margin:1px 0;border-radius:2px;border-bottom:2px solid transparent}
.tok.ws{margin-left:.35em}.tok.top{border-bottom-color:#000}.tok.max{font-weight:bold;outline:1px solid #000}
.tgt{cursor:pointer;display:inline-block;padding:0 3px;margin:1px;border:1px solid #ccc;border-radius:3px}
.tgt.sel{outline:2px solid #06c}.tgt.hit{background:#dfd}.tgt.miss{background:#fdd}
.mark.hit{color:#080}.mark.miss{color:#b00}
table.words{border-collapse:collapse;margin:.3em 0 1em}table.words td,table.words th{border:1px solid #ccc;
padding:1px 6px;text-align:right}table.words td:first-child{text-align:left}table.words th{background:#eee}
td.hit{background:#dfd}td.miss{background:#fdd}.note{color:#555;font-size:12px}
"""

SCRIPT = r"""
(function () {
  const data = JSON.parse(document.getElementById("page-data").textContent);
  const state = {view: 0, order: "id", t: {}};
  const rgb = {alpha: "31,119,180", xi: "255,127,14", xi_px: "44,160,44", grad: "148,103,189"};
  const pct = (x) => (x === null || x === undefined) ? "–" : (100 * x).toFixed(1);
  const label = (key) => data.measures.find((m) => m.key === key).label;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // a row's shade in [0, 1]: attention from 0 to the row's maximum, the scores (log-probabilities,
  // logits, gradients) from the row's minimum to its maximum
  function shades(row, key) {
    const real = row.filter((x) => x !== null);
    const hi = Math.max(...real), lo = key === "alpha" ? 0 : Math.min(...real);
    return row.map((x) => x === null ? 0 : hi > lo ? (x - lo) / (hi - lo) : 0.5);
  }

  function tokens(view, key, i, t, ex) {
    const row = view.values[key][i][t], top = new Set(view.top[key][i][t]);
    const span = el("span", {class: "toks"});
    shades(row, key).forEach((s, pos) => {
      const cls = ["tok"];
      if (ex.word_start[pos]) cls.push("ws");
      if (top.has(pos)) cls.push("top");
      if (view.argmax[key][i][t] === pos) cls.push("max");
      const tok = el("span", {class: cls.join(" "), "data-measure": key, "data-pos": pos,
                              "data-value": String(row[pos]), title: `${label(key)}: ${row[pos]}`,
                              style: `background:rgba(${rgb[key]},${(0.05 + 0.8 * s).toFixed(3)})`},
                     ex.source[pos]);
      span.appendChild(tok);
    });
    return span;
  }

  function hitMark(view, key, i, t) {
    if (key === data.against) return el("span", {class: "note"}, "(what A compares with)");
    const hit = view.hits[key][i][t];
    return el("span", {class: "mark " + (hit ? "hit" : "miss"), "data-hit": hit},
              hit ? "A: hit ✓" : "A: miss ✗");
  }

  function renderExample(view, i) {
    const ex = data.examples[i], rows = view.values[data.against][i];
    const t = Math.min(state.t[i] || 0, rows.length - 1);
    const box = el("div", {class: "example", "data-example": ex.id, "data-t": t});
    const miss = view.disagreement[i];
    const head = el("div", {class: "head"}, `example ${ex.id}` +
                    (data.task === "classification" ? ` · label ${ex.label}` : "") + " · ");
    head.appendChild(el("span", {class: miss > 0 ? "miss" : "hit"},
                        `α misses ξ^uf on ${pct(miss)}% of its ${rows.length} row(s)`));
    box.appendChild(head);
    if (data.task === "translation") {
      const line = el("div", {class: "target"}, "target (click a word): ");
      ex.target.forEach((word, j) => {
        const cls = ["tgt", view.hits.alpha[i][j] ? "hit" : "miss"];
        if (j === t) cls.push("sel");
        const w = el("span", {class: cls.join(" "), "data-t": j}, word);
        w.addEventListener("click", () => { state.t[i] = j; box.replaceWith(renderExample(view, i)); });
        line.appendChild(w);
      });
      box.appendChild(line);
    }
    const table = el("table", {class: "measures"});
    for (const m of data.measures) {
      const tr = el("tr");
      tr.appendChild(el("th", {}, m.label));
      if (m.key in view.values) {
        tr.appendChild(el("td")).appendChild(tokens(view, m.key, i, t, ex));
        tr.appendChild(el("td")).appendChild(hitMark(view, m.key, i, t));
      } else {  // its probe computed it at other checkpoints only (probe.at_best)
        tr.appendChild(el("td", {class: "note", "data-absent": m.key}, "not computed at this checkpoint"));
      }
      table.appendChild(tr);
    }
    box.appendChild(table);
    if (data.task === "translation") box.appendChild(firstWords(view, i, ex));
    return box;
  }

  // translation: per target word, the source word each measure puts first (green: A counts a hit)
  function firstWords(view, i, ex) {
    const details = el("details");
    details.appendChild(el("summary", {}, "source word each measure puts first, per target word"));
    const table = el("table", {class: "words"}), head = el("tr");
    const shown = data.measures.filter((m) => m.key in view.values);
    head.appendChild(el("th", {}, "target"));
    for (const m of shown) head.appendChild(el("th", {}, m.key));
    table.appendChild(head);
    ex.target.forEach((word, j) => {
      const tr = el("tr");
      tr.appendChild(el("td", {}, word));
      for (const m of shown) {
        const hit = m.key === data.against ? null : view.hits[m.key][i][j];
        tr.appendChild(el("td", {class: hit === null ? "" : hit ? "hit" : "miss"},
                          ex.source[view.argmax[m.key][i][j]]));
      }
      table.appendChild(tr);
    });
    details.appendChild(table);
    return details;
  }

  function wordTable(rows) {
    const table = el("table", {class: "words"}), head = el("tr");
    for (const h of ["word", "rows", "share %", "A %", "chance %"]) head.appendChild(el("th", {}, h));
    table.appendChild(head);
    for (const r of rows) {
      const tr = el("tr");
      for (const v of [r.word, r.texts, pct(r.share), pct(r.agreement), pct(r.chance)]) tr.appendChild(el("td", {}, v));
      table.appendChild(tr);
    }
    return table;
  }

  function renderSummary(view) {
    const s = view.summary, aside = document.getElementById("summary");
    aside.replaceChildren(el("h2", {}, "Word summary"));
    aside.appendChild(el("p", {}, `All ${s.rows} probed rows at this view: A(α, ξ^uf) = ${pct(s.agreement)}% ` +
                                  `(chance ${pct(s.chance)}%).`));
    aside.appendChild(el("div", {}, "Words α puts first, and A(α, ξ^uf) on them:"));
    aside.appendChild(wordTable(s.alpha));
    aside.appendChild(el("div", {}, "Words ξ^uf puts first, and A(α, ξ^uf) on them:"));
    aside.appendChild(wordTable(s.xi));
    aside.appendChild(el("div", {}, "A hit counted within ±w positions of α's argmax:"));
    const near = el("table", {class: "words"}), head = el("tr");
    for (const h of ["w", "A %", "chance %"]) head.appendChild(el("th", {}, h));
    near.appendChild(head);
    for (const r of s.near) {
      const tr = el("tr");
      for (const v of [r.near, pct(r.agreement), pct(r.chance)]) tr.appendChild(el("td", {}, v));
      near.appendChild(tr);
    }
    aside.appendChild(near);
  }

  function render() {
    const view = data.views[state.view];
    document.getElementById("view-label").textContent = view.label;
    const order = data.examples.map((_, i) => i);
    if (state.order === "disagreement") {
      order.sort((a, b) => (view.disagreement[b] ?? -1) - (view.disagreement[a] ?? -1) ||
                           data.examples[a].id - data.examples[b].id);
    }
    const main = document.getElementById("examples");
    main.replaceChildren(...order.map((i) => renderExample(view, i)));
    main.setAttribute("data-view", state.view);
    renderSummary(view);
  }

  document.getElementById("view").addEventListener("input", (e) => { state.view = +e.target.value; render(); });
  document.getElementById("order").addEventListener("change", (e) => { state.order = e.target.value; render(); });
  render();
})();
"""


def _json(data: dict) -> str:
    """JSON safe inside a <script> element (no '</' to close it early)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")


def intro(data: dict) -> str:
    translation = data["task"] == "translation"
    rows = "per target word (click one to see its row)" if translation else "per text"
    return (f"<p>{len(data['examples'])} probed validation examples (a seeded sample), each source token shaded "
            f"by every measure {rows}: attention from 0 to the row's maximum, the scores from the row's "
            "minimum to its maximum. Underlined: the top-k positions (k = ceil(0.05 n)) where another "
            "measure's argmax counts as a hit of A against ξ^uf; bold and framed: the measure's argmax. "
            "The switch shows Table 2's pair first (α* at run A's best checkpoint, ξ^uf where it agrees most), "
            "then A and U at the same checkpoints; the proxy ξ^px has one checkpoint. The word summary counts "
            f"every probed example.{_partial(data)} Values rounded to {data['digits']} significant digits; hover "
            "a token for its value. docs/methods.md 3-4 defines the measures and A.</p>")


def _partial(data: dict) -> str:
    """What the page says of the measures some views lack: their probe computed them at the run's
    best checkpoints only (probe.at_best)."""
    partial = [m["label"] for m in data["measures"] if any(m["key"] not in v["values"] for v in data["views"])]
    if not partial:
        return ""
    return (f" {html.escape(', '.join(partial), quote=False)}: computed by the probe at run A's best checkpoint only "
            "(probe.at_best; the tables read it there alone), so shown in Table 2's view, not at the other "
            "checkpoints.")


def page_html(data: dict) -> str:
    """The standalone page of ``data`` (attnlearn.reporting.examples.page_data)."""
    title = html.escape(f"{data['dataset']}: examples, attention beside the probes")
    controls = (f"<div id='controls'><label>Checkpoint <input type='range' id='view' min='0' "
                f"max='{len(data['views']) - 1}' value='0' step='1'></label><span id='view-label'></span> "
                "<label>Order <select id='order'><option value='id'>example id</option>"
                "<option value='disagreement'>α vs ξ^uf disagreement, most first</option></select></label></div>")
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{title}</title><style>{STYLE}</style>"
            f"</head><body><h1>{title}</h1>{intro(data)}{controls}<div id='layout'><main id='examples'></main>"
            f"<aside id='summary'></aside></div>"
            f"<script type='application/json' id='page-data'>{_json(data)}</script>"
            f"<script>{SCRIPT}</script></body></html>\n")
