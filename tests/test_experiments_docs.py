"""docs/experiments.md's bullets quote the runs in its tables: every number in the bullets of
"Against the paper's expectations" is one that the page's printed blocks' commands print now
(paper_rows/experiments_tables.py over the kept runs under reproduction/experiments/), and every
"value [low, high]", range (19-21) and count (8/20) in them is printed as written, so a bullet
cannot quote another run (the page
once read 161 [149, 173] beside a table of 160 [148, 172]) nor an interval the summary no longer
gives (Newcombe's, after the head-level inference). Hand-written tables do not count: only what a
command prints. The paper's own values are quoted as "(paper: ...)" and not checked, nor are the
copy distributions' names (40-of-40)."""

import re
from pathlib import Path

import pytest

from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
PAGE = REPO / "docs/experiments.md"
printed = rows_module("printed")

# a number: a sign only where it starts a word (so 0.16-0.51 is two numbers), thousands commas
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:,\d{3})*(?:\.\d+)?")
# a value with its interval, as the summary prints it: 0.600 [0.387, 0.781], +0.360 [-0.096, +0.816]
INTERVAL = re.compile(r"(?<![\w.])[-+]?\d[\d.,]*\s+\[[-+]?\d[\d.,]*,\s+[-+]?\d[\d.,]*\]")
# what is read as one: an interval, a range (0.16-0.51, 19-21) or a count (8/20); its numbers one by
# one could each be printed somewhere else (22/50 holds the 22 of a wrong 19-22)
UNIT = re.compile(INTERVAL.pattern + r"|(?<![\w.])\d+(?:\.\d+)?[-/]\d+(?:\.\d+)?(?!\w|\.\d|-\d)")
NAMES = re.compile(r"\d+-of-\d+")  # a copy distribution's name (40-of-40), not a number
PAPER = re.compile(r"\(paper[^()]*(?:\([^()]*\)[^()]*)*\)")
SECTION = "## Against the paper's expectations"


def numbers(text: str) -> list[str]:
    """The numbers in ``text`` as written, sign and thousands commas dropped."""
    return [n.lstrip("+-").replace(",", "") for n in NUMBER.findall(text)]


def units(text: str) -> list[str]:
    """Each interval, range and count in ``text``, its white space made single spaces."""
    return [" ".join(m.split()) for m in UNIT.findall(text)]


def bullets(page: str) -> str:
    """The section's bullets (its list items), the paper's quoted values left out."""
    section = page.split(SECTION, 1)[1].split("\n## ", 1)[0]
    items = re.findall(r"^- .*?(?=^- |^\S|\Z)", section, re.S | re.M)
    return NAMES.sub("", PAPER.sub("", "".join(items)))


def printed_output(page: str) -> str:
    """What each printed block's command prints now (not the block's text: the command's)."""
    return "\n".join(printed.run(m["command"]) for m in printed.blocks(page))


def stray(page: str, output: str) -> list[str]:
    """The bullets' numbers, then their intervals, ranges and counts, that ``output`` does not
    print, in order."""
    text = bullets(page)
    found, printed_units = set(numbers(output)), set(units(output))
    return [n for n in numbers(text) if n not in found] + [u for u in units(text) if u not in printed_units]


@pytest.fixture(scope="module")
def page_and_output():
    page = PAGE.read_text()
    return page, printed_output(page)


def test_the_bullets_quote_only_numbers_the_commands_print(page_and_output):
    page, output = page_and_output
    assert SECTION in page and units(bullets(page)), "no bullets with intervals found"
    assert not stray(page, output), (f"numbers in the bullets of docs/experiments.md that no printed "
                                     f"block's command prints: {stray(page, output)}")


def test_every_interval_range_and_count_quoted_is_checked(page_and_output):
    """Change any one interval, range or count in the page's bullets in its first number's last
    digit, to one that no command prints, and the check finds it: it cannot pass whatever the
    bullets say."""
    page, output = page_and_output
    head, rest = page.split(SECTION, 1)
    section, tail = rest.split("\n## ", 1)
    paper = [m.span() for m in PAPER.finditer(section)]  # the paper's values are not checked
    quoted = [m for m in UNIT.finditer(section) if not any(a <= m.start() < b for a, b in paper)]
    assert len(quoted) >= 30, [m.group() for m in quoted]
    printed_units = set(units(output))
    for m in quoted:
        value = re.match(r"[-+]?[\d.,]*\d", m.group()).group()
        # the first change of the last digit that gives an interval, range or count the commands
        # do not print (0/1 made 1/1 is printed: the default's one all-bad trial did not converge)
        changed = next(c for c in (value[:-1] + str((int(value[-1]) + d) % 10) for d in range(1, 10))
                       if " ".join((c + m.group()[len(value):]).split()) not in printed_units)
        edited = section[:m.start()] + changed + section[m.start() + len(value):]
        found = stray(head + SECTION + edited + "\n## " + tail, output)
        assert found, f"{m.group()!r} changed to begin {changed} in the bullets was not found"


def test_a_number_from_another_run_is_found():
    output = "| perm40of40 | 20 | 12/20 = 0.600 [0.387, 0.781] | 160 [148, 172] |\n| 8/20 | 0.16-0.48 |\n"
    page = (SECTION + "\n\n- **40-of-40 fails**: 12/20 = 0.600 [0.387, 0.781] converge, at step 161 [149, 173]\n"
            "  (paper: about step 40, 0.6-0.7), failing runs at 0.16-0.51.\n"
            "- Another 160 [148,\n  172] and 0.600 [0.387, 0.782].\n\n## Next\n1.5")
    assert stray(page, output) == ["161", "149", "173", "0.51", "0.782",
                                   "161 [149, 173]", "0.16-0.51", "0.600 [0.387, 0.782]"]


def test_an_interval_range_or_count_of_printed_numbers_but_not_printed_so_is_found():
    """Each number is printed, but not as this interval, range or count."""
    output = "| a | 28/50 = 0.600 [0.387, 0.781] |\n| b | 0.160 [0.100, 0.200] | 19-21 | 22/50 | 0/20 |\n"
    page = SECTION + "\n\n- share 0.160 [0.600, 0.781], in 19-22 trials, 28/20 and 0/50\n"
    assert stray(page, output) == ["0.160 [0.600, 0.781]", "19-22", "28/20", "0/50"]
