"""Every `snakemake` command written in README.md and docs/*.md works as written: each is
dry-run (`-n`) in a fresh working directory, so a command that the docs get wrong (a
target swallowed by --configfile, a removed rule, a stale option) fails here."""

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
MARKDOWN = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
# Files the docs' commands name that the user writes first (a copy of a shipped config):
# the dry run reads the shipped config they start from.
USER_FILES = {"my.yaml": "tests/configs/tiny.yaml", "local.yaml": "config/real_small.yaml"}


def shell_snippets(text: str) -> list[str]:
    """The commands of fenced code blocks (continuation lines joined, comments dropped)
    and of inline code spans."""
    fences = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    out = []
    for block in fences.findall(text):
        for line in block.replace("\\\n", " ").splitlines():
            out.append(line)
    out += [span.replace("\n", " ") for span in re.findall(r"`([^`]+)`", fences.sub("", text))]
    return out


def snakemake_commands(text: str) -> list[str]:
    """Each `snakemake ...` command in the text, one per `&&`/`;`/`|` segment."""
    commands = []
    for snippet in shell_snippets(text):
        for part in re.split(r"&&|;|\|", snippet):
            part = re.sub(r"^\s*(/usr/bin/time (-v )?)?", "", part)
            if part.startswith("snakemake "):  # `snakemake` alone names the tool
                commands.append(" ".join(map(shlex.quote, shlex.split(part, comments=True))))
    return commands


def documented_commands() -> list[tuple[str, str]]:
    seen, out = set(), []
    for path in MARKDOWN:
        for command in snakemake_commands(path.read_text()):
            if command not in seen:
                seen.add(command)
                out.append((path.relative_to(REPO).as_posix(), command))
    return out


COMMANDS = documented_commands()


def test_the_docs_have_commands():
    """The extraction finds the README's headline commands (a parser that finds none
    would make the dry-run test below vacuous)."""
    found = [c for _, c in COMMANDS]
    assert "snakemake --cores 2" in found and len(found) >= 10
    assert any("results/tables/table2.parquet" in c and "config/paper.yaml" in c for c in found)


@pytest.mark.workflow
@pytest.mark.parametrize("where, command", COMMANDS, ids=[c for _, c in COMMANDS])
def test_documented_command_dry_runs(where, command, tmp_path):
    words = shlex.split(command)[1:]
    if "--report" in words:  # a report needs finished results: tests/test_workflow.py builds one
        words = [w for i, w in enumerate(words) if w != "--report" and words[i - 1] != "--report"]
    words = [USER_FILES.get(w, w) for w in words]
    if "--use-conda" in words and shutil.which("conda") is None:  # tests/test_env.py checks the env file
        words.remove("--use-conda")
    if "tests/configs/own.yaml" in words:  # docs/own_data.md's example reads the files it makes
        subprocess.run([sys.executable, "tests/make_own_data.py", str(tmp_path / "my_data")], cwd=REPO, check=True)
    if "-d" in words:  # the docs' own scratch directory -> a temporary one
        words[words.index("-d") + 1] = str(tmp_path)
    else:
        words += ["-d", str(tmp_path)]
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", *words], cwd=REPO, capture_output=True,
                          text=True)
    assert proc.returncode == 0, f"{where}: `{command}` fails:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    done = ("Job stats", "Nothing to be done", "Unlocked working directory")  # --unlock plans no job
    assert any(d in proc.stdout + proc.stderr for d in done) or "--dag" in words, proc.stdout[-2000:]


def test_own_data_example_is_the_config_that_runs():
    """docs/own_data.md's YAML is tests/configs/own.yaml as it is (the run of minutes that
    tests/test_own_data.py makes), not a variant that would train at the paper's sizes."""
    page = (REPO / "docs" / "own_data.md").read_text()
    own = (REPO / "tests" / "configs" / "own.yaml").read_text()
    assert f"```yaml\n{own}```" in page


def test_readme_fits_two_screens_and_names_every_rules_file():
    """README.md says what the project is, the two commands, choosing what to run and where the
    outputs and docs are, in at most 200 lines (the rest is in docs/); its layout and
    docs/pipeline.md's map name every rules file, and every docs page is reached from it by
    links (no orphan page)."""
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 200, f"README.md has {len(readme.splitlines())} lines: move a section to docs/"
    layout = readme[readme.index("## Layout"):]
    pipeline = (REPO / "docs" / "pipeline.md").read_text()
    for smk in sorted((REPO / "rules").glob("*.smk")):
        assert smk.name in layout, f"README's layout does not name rules/{smk.name}"
        assert f"`rules/{smk.name}`" in pipeline, f"docs/pipeline.md's map does not name rules/{smk.name}"
    reached, todo = set(), [REPO / "README.md"]
    while todo:
        page = todo.pop()
        for link in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", page.read_text()):
            target = (page.parent / link).resolve()
            if target.parent == REPO / "docs" and target.exists() and target not in reached:
                reached.add(target)
                todo.append(target)
    orphans = sorted(p.name for p in (REPO / "docs").glob("*.md") if p.resolve() not in reached)
    assert not orphans, f"no link leads from README.md to docs/{orphans}"


def written_job_counts() -> list[tuple[str, int]]:
    """Each "plans N jobs" that README.md and docs/pipeline.md say of the default config."""
    return [(name, int(n)) for name in ("README.md", "docs/pipeline.md")
            for n in re.findall(r"plans (\d+) jobs", (REPO / name).read_text())]


@pytest.mark.workflow
def test_the_default_job_count_written_is_what_snakemake_plans(tmp_path):
    """README.md and docs/pipeline.md give the number of jobs the default config plans: a rule
    added or a job split off changes `snakemake -n`'s total, and this test names the pages."""
    written = written_job_counts()
    assert {name for name, _ in written} == {"README.md", "docs/pipeline.md"}, written
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--cores", "2", "-d", str(tmp_path)], cwd=REPO,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    total = int(re.search(r"^total\s+(\d+)$", proc.stdout, re.M)[1])
    assert all(n == total for _, n in written), f"the default plans {total} jobs; the pages say {written}"


def test_reproduction_page_shows_what_the_kept_rows_give(capsys):
    """docs/reproduction.md's first table holds, verbatim, the row that
    paper_rows/reproduction_rows.py prints for every seeded row kept in docs/rows (pooled over
    its parts, at least three replicates; a row with fewer parts so far is not read): a row kept
    again, or interval code changed, cannot leave the page's numbers stale."""
    from conftest import script_module

    module = script_module("paper_rows/reproduction_rows.py")
    page = (REPO / "docs/reproduction.md").read_text()
    rows = sorted(p for p in (REPO / "docs/rows").iterdir() if p.is_dir())
    assert rows, "no kept row in docs/rows"
    checked = 0
    for row in rows:
        assert module.main([str(row)]) == 0
        ours = [line for line in capsys.readouterr().out.splitlines() if ", ours (n = " in line]
        assert len(ours) == 1, row.name
        if int(re.search(r"\(n = (\d+)\)", ours[0]).group(1)) >= 3:
            assert ours[0] in page, f"{row.name}: docs/reproduction.md lacks {ours[0]}"
            checked += 1
    assert checked, "no kept row has three replicates yet"


def test_reproduction_page_shows_each_kept_grids_split(capsys):
    """Each factorial grid kept in docs/rows/<dataset>/factorial is on docs/reproduction.md as
    paper_rows/reproduction_rows.py --variance prints it with this commit's code."""
    from conftest import script_module

    module = script_module("paper_rows/reproduction_rows.py")
    page = (REPO / "docs/reproduction.md").read_text()
    grids = sorted((REPO / "docs/rows").glob("*/factorial"))
    for grid in grids:
        assert module.main(["--variance", str(grid)]) == 0
        printed = capsys.readouterr().out.strip()
        assert printed in page, f"{grid}: the page's split differs from:\n{printed}"
    assert grids, "no kept factorial grid in docs/rows"


def test_reproduction_page_shows_what_the_replicates_read_and_a9s_seed_pairs(capsys):
    """docs/reproduction.md holds, verbatim, what paper_rows/reproduction_rows.py prints with this
    commit's code for SMS spam's and 20 Newsgroups' kept replicates with --readings (one mode or
    two; each replicate's readings; the correlations), for 20 Newsgroups' header split
    (paper_rows/header_rows.py --kept), for the header row's contrast (--contrast) and for
    appendix A.9's two seeds' attentions (--seed-pairs over the four kept rows)."""
    from conftest import script_module

    module = script_module("paper_rows/reproduction_rows.py")
    page = (REPO / "docs/reproduction.md").read_text()
    for dataset in ("sms_spam", "newsgroups"):
        assert module.main(["--readings", str(REPO / "docs/rows" / dataset)]) == 0
        lines = capsys.readouterr().out.splitlines()
        first = next(i for i, line in enumerate(lines) if line.startswith("| dataset | column | n | likelihood ratio"))
        readings = "\n".join(lines[first:]).strip()
        assert "Readings of" in readings and readings in page, f"{dataset}: the page's readings differ from:\n{readings}"
    kept = REPO / "docs/rows/newsgroups/parts4-10/tables/header_rows.parquet"  # paper_rows/header_rows.py
    assert script_module("paper_rows/header_rows.py").main(["--kept", str(kept)]) == 0
    header = capsys.readouterr().out.strip()
    assert header in page, f"the page's header split differs from:\n{header}"
    # issue 49's header question: the 20 Newsgroups row against the same row trained without headers
    assert module.main(["--contrast", *(str(REPO / "docs/rows" / d) for d in ("newsgroups", "newsgroups_no_headers"))]) == 0
    contrast = capsys.readouterr().out.strip()
    assert contrast in page, f"the page's header contrast differs from:\n{contrast}"
    rows = [str(REPO / "docs/rows" / d) for d in ("sms_spam", "sst", "newsgroups", "multi30k")]
    assert module.main(["--seed-pairs", *rows]) == 0
    pairs = capsys.readouterr().out.strip()
    assert pairs in page, f"the page's A.9 pairs differ from:\n{pairs}"
