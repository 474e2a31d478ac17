"""The workflow's Markdown summaries (tables.md, analyses.md, experiments.md) as HTML pages
for the Snakemake report, which shows HTML in place but offers Markdown only as a download.
Reads the subset of Markdown those files use: headings, paragraphs, bullet lists (with **bold**
and `code`) and pipe tables."""

from __future__ import annotations

import html
import re

STYLE = ("body{font-family:sans-serif;font-size:14px;margin:1em}table{border-collapse:collapse;margin:.5em 0 1.5em}"
         "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}th{background:#eee}"
         ".num{text-align:right}h1{font-size:20px}h2{font-size:16px}")


def _cells(line: str) -> list[str]:
    return [html.escape(c.strip()) for c in line.strip().strip("|").split("|")]


def _td(cell: str) -> str:
    if cell in ("nan", "None", "<NA>", "-"):  # undefined (e.g. no frozen run, one seed's spread)
        return "<td class='num'>&ndash;</td>"
    try:
        float(cell)
        return f"<td class='num'>{cell}</td>"
    except ValueError:
        return f"<td>{cell}</td>"


def _inline(text: str) -> str:
    """Escaped text with Markdown's **bold** and `code`."""
    text = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", html.escape(text))
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", text)


def markdown_html(text: str) -> str:
    """A standalone HTML page of ``text``."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            level = min(len(line) - len(line.lstrip("#")), 6)
            out.append(f"<h{level}>{html.escape(line.lstrip('#').strip())}</h{level}>")
        elif line.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                if not set(lines[i]) <= set("|-: "):  # the header's separator row
                    rows.append(_cells(lines[i]))
                i += 1
            head = "".join(f"<th>{c}</th>" for c in rows[0])
            body = "".join("<tr>" + "".join(_td(c) for c in r) + "</tr>" for r in rows[1:])
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            continue
        elif line.startswith("- "):
            items = []
            while i < len(lines) and lines[i].startswith("- "):
                items.append(f"<li>{_inline(lines[i][2:])}</li>")
                i += 1
            out.append(f"<ul>{''.join(items)}</ul>")
            continue
        elif line.strip():
            out.append(f"<p>{_inline(line)}</p>")
        i += 1
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{STYLE}</style></head><body>" + \
        "\n".join(out) + "</body></html>\n"
