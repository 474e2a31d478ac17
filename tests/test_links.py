"""Every relative link in README.md, docs/ and the kept rows' pages leads to a file or folder of
the tree (a page or a kept folder moved, renamed or deleted leaves no dead link behind)."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted({REPO / "README.md", *REPO.glob("docs/**/*.md"), *REPO.glob("reproduction/**/*.md")}
               - set(REPO.glob("reproduction/**/tables/*.md")))  # a kept run's own tables.md: the pipeline's
LINK = re.compile(r"\]\(([^)\s]+)\)")


def dead_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks hold commands, not links
    out = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # a URL, or an anchor on the same page
        path = (page.parent / target.split("#")[0]).resolve()
        if not path.exists():
            out.append(f"{page.relative_to(REPO)}: ({target})")
    return out


def test_every_relative_link_resolves():
    assert len(PAGES) > 20
    dead = [d for page in PAGES for d in dead_links(page)]
    assert not dead, "\n".join(dead)


def test_a_dead_link_is_found(tmp_path):
    page = tmp_path / "p.md"
    (tmp_path / "there.md").write_text("")
    page.write_text("[ok](there.md) [anchor](#x) [web](https://example.org) [gone](gone/README.md#a)\n")
    assert [d.split(": ")[1] for d in dead_links_in(page, tmp_path)] == ["(gone/README.md#a)"]


def dead_links_in(page: Path, root: Path) -> list[str]:
    global REPO
    saved, REPO = REPO, root
    try:
        return dead_links(page)
    finally:
        REPO = saved


def test_docs_hold_prose_and_figures_not_kept_results():
    """Kept runs, sweeps and experiments live under reproduction/; docs/ keeps pages, plans and
    figures."""
    kept = [p.relative_to(REPO) for p in REPO.glob("docs/**/*") if p.suffix in (".parquet", ".jsonl", ".tsv")]
    assert kept == [], kept
