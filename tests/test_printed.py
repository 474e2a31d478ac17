"""Every block of printed numbers on the docs' pages is what the command it names prints with this
commit's code and the kept rows (paper_rows/printed.py): a row kept again, or interval code
changed, cannot leave a page's numbers stale, and no number is on a page without its command."""

from pathlib import Path

import pytest

from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted([*(REPO / "docs").glob("*.md"), *(REPO / "reproduction/rows").glob("*/README.md")])
printed = rows_module("printed")
MARKED = [p for p in PAGES if printed.blocks(p.read_text())]


def test_the_results_pages_carry_printed_blocks():
    names = {p.relative_to(REPO).as_posix() for p in MARKED}
    assert {"docs/reproduction.md", "docs/experiments.md"} <= names, names


@pytest.mark.process  # plan_tests.py reads git's history of the plans
@pytest.mark.parametrize("page", MARKED, ids=[p.relative_to(REPO).as_posix() for p in MARKED])
def test_each_printed_block_is_what_its_command_prints(page):
    problems = printed.check(page)
    assert not problems, "\n".join(problems) + "\n(refresh with: python paper_rows/printed.py --write " + \
        page.relative_to(REPO).as_posix() + ")"


def test_a_stale_block_is_found_and_rewritten(tmp_path):
    page = tmp_path / "page.md"
    command = "python paper_rows/reproduction_rows.py reproduction/rows/sst"
    page.write_text(f"# p\n<!-- printed by: {command} -->\n| SST, ours (n = 3) | 99.9 |\n<!-- end printed -->\nafter\n")
    (problem,) = printed.check(page)
    assert command in problem and "99.9" in problem
    assert printed.write(page) == 1
    assert printed.check(page) == [] and page.read_text().endswith("<!-- end printed -->\nafter\n")


def test_a_block_must_name_a_row_script(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("<!-- printed by: rm -rf / -->\nx\n<!-- end printed -->\n")
    with pytest.raises(printed.PrintedError, match="python paper_rows/<script>.py"):
        printed.check(page)
