"""Numbers on the pages come from commands the pages name: check them, or write them anew.

    python paper_rows/printed.py docs/reproduction.md reproduction/rows/*/README.md          # check
    python paper_rows/printed.py --write docs/reproduction.md reproduction/rows/*/README.md  # refresh

A page marks each block of printed output with the command that prints it:

    <!-- printed by: python paper_rows/reproduction_rows.py reproduction/rows/sst -->
    ...the command's output, verbatim...
    <!-- end printed -->

Check mode reruns every marked command (``python paper_rows/<script>.py ...``, in this process,
from the repository root, with any figure it would draw sent to a scratch folder) and fails
naming the page, the command and the first line that differs; --write replaces each block with
what its command prints now (after a row is kept, say). So no number on a page can go stale
without a test saying so, and no number is on a page without the command that made it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import re
import shlex
import sys
import tempfile
from pathlib import Path

from attnlearn.rows import REPO
BLOCK = re.compile(r"<!-- printed by: (?P<command>.+?) -->\n(?P<body>.*?)<!-- end printed -->", re.S)
FIGURE_OPTIONS = ("--figure", "--readings-figure")


class PrintedError(ValueError):
    """A marked block whose command cannot run here, or whose output differs."""


def blocks(text: str) -> list[re.Match]:
    return list(BLOCK.finditer(text))


def _script(path: str):
    """The module of the entry point paper_rows/<name>.py: attnlearn.rows.<name>."""
    return importlib.import_module(f"attnlearn.rows.{Path(path).stem}")


def run(command: str, scratch: Path | None = None) -> str:
    """What ``command`` prints (stdout), run in this process from the repository root. With
    ``scratch``, a figure the command would draw goes there instead of into docs/."""
    words = shlex.split(command)
    if len(words) < 2 or words[0] != "python" or not re.fullmatch(r"paper_rows/\w+\.py", words[1]):
        raise PrintedError(f"`{command}`: a printed block's command is `python paper_rows/<script>.py ...`")
    args = words[2:]
    if scratch is not None:
        args = [str(scratch / Path(args[i]).name) if i and args[i - 1] in FIGURE_OPTIONS else a
                for i, a in enumerate(args)]
    out, here = io.StringIO(), Path.cwd()
    os.chdir(REPO)
    try:
        with contextlib.redirect_stdout(out):
            rc = _script(words[1]).main(args)
    finally:
        os.chdir(here)
    if rc:
        raise PrintedError(f"`{command}` exited {rc}")
    return out.getvalue()


def check(page: Path) -> list[str]:
    """One message per marked block of ``page`` whose command prints something else now."""
    problems = []
    with tempfile.TemporaryDirectory() as scratch:
        for m in blocks(page.read_text()):
            now = run(m["command"], Path(scratch))
            if now.strip() != m["body"].strip():
                old, new = m["body"].strip().splitlines(), now.strip().splitlines()
                first = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), min(len(old), len(new)))
                problems.append(f"{page}: `{m['command']}` prints otherwise from its line {first + 1}:\n"
                                f"  page: {old[first] if first < len(old) else '(ends)'}\n"
                                f"  now:  {new[first] if first < len(new) else '(ends)'}")
    return problems


def write(page: Path) -> int:
    """Replace every marked block of ``page`` with its command's output; how many blocks."""
    text = page.read_text()
    found = blocks(text)
    for m in reversed(found):
        body = run(m["command"]).strip() + "\n"
        text = text[:m.start("body")] + body + text[m.end("body"):]
    page.write_text(text)
    return len(found)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pages", nargs="+", type=Path)
    ap.add_argument("--write", action="store_true", help="replace each block with what its command prints now")
    args = ap.parse_args(argv)
    if args.write:
        for page in args.pages:
            print(f"{page}: {write(page)} blocks written", file=sys.stderr)
        return 0
    problems = [p for page in args.pages for p in check(page)]
    print("\n".join(problems) if problems else "every printed block is what its command prints", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
