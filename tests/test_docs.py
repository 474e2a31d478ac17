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
from conftest import rows_module

REPO = Path(__file__).resolve().parents[1]
MARKDOWN = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "reproduction/rows").glob("*/README.md"))]
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


REDIRECT = re.compile(r"^(\d*>>?|&>)(.*)$")


def without_redirections(words: list[str]) -> list[str]:
    """The command's words without the shell's redirections (`> run.log`, `2>&1`): the shell's,
    not Snakemake's (they would be read as config files after --configfile)."""
    out, skip = [], False
    for word in words:
        m = REDIRECT.match(word)
        if skip or m:
            skip = bool(m and not m[2])  # `>` alone: its file is the next word
            continue
        out.append(word)
    return out


def snakemake_commands(text: str) -> list[str]:
    """Each `snakemake ...` command in the text, one per `&&`/`;`/`|` segment."""
    commands = []
    for snippet in shell_snippets(text):
        for part in re.split(r"&&|;|\|", snippet):
            part = re.sub(r"^\s*(/usr/bin/time (-v )?)?", "", part)
            if part.startswith("snakemake "):  # `snakemake` alone names the tool
                commands.append(" ".join(map(shlex.quote, without_redirections(shlex.split(part, comments=True)))))
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


def _under_header_plan(folder):
    """Whether a kept folder was trained under a plan that reads header tables (paper_row.py
    --plan, in its run.json): that plan's block on the page shows the folder's header table."""
    return bool(rows_module("header_rows").header_plans(folder))


def test_every_kept_row_prints_its_analyses_on_its_page():
    """Each row kept in reproduction/rows has its page, reproduction/rows/<row>/README.md, and the page marks (paper_rows/
    printed.py) a block for each command that reads what the row keeps: the row itself, its replicates'
    readings, each factorial grid's split, 20 Newsgroups' header split, the header row's contrast (all
    replicates and the blocks alone), appendix A.9's seed pairs over the four paper rows, and each plan's
    tests on its dataset. tests/test_printed.py checks every block's numbers against its command; this
    checks that none is missing, so a row, grid or plan kept later cannot go unshown."""
    import yaml

    printed = rows_module("printed")
    script = "python paper_rows/reproduction_rows.py"
    rows = sorted(p for p in (REPO / "reproduction/rows").iterdir() if p.is_dir())
    assert rows, "no kept row in reproduction/rows"
    marked = {}
    for row in rows:
        page = row / "README.md"
        assert page.is_file(), f"{row.name}: no page reproduction/rows/{row.name}/README.md"
        marked[row.name] = {m["command"] for m in printed.blocks(page.read_text())}
    every = set().union(*marked.values())
    for row in rows:
        name, here = row.name, f"reproduction/rows/{row.name}"
        wanted = [f"{script} {here}"]
        if any(p.name != "factorial" for p in row.glob("*/tables/replicate_readings.parquet")):
            wanted.append(f"{script} --readings {here}")
        wanted += [f"{script} --variance {grid.relative_to(REPO).as_posix()}" for grid in sorted(row.glob("factorial"))]
        # a header table kept from a block trained under the header plan is shown by that plan's block below
        wanted += [f"python paper_rows/header_rows.py --kept {k.relative_to(REPO).as_posix()}"
                   for k in sorted(row.glob("*/tables/header_rows.parquet")) if not _under_header_plan(k.parents[1])]
        missing = [c for c in wanted if c not in marked[name]]
        assert not missing, f"reproduction/rows/{name}/README.md marks no block for: {missing}"
    header = "reproduction/rows/newsgroups_no_headers"
    same_seeds = " ".join(f"reproduction/rows/newsgroups/{p}" for p in ("part1", "part2", "part3", "parts4-10"))
    assert {f"{script} --contrast {same_seeds} {header}",
            f"{script} --contrast reproduction/rows/newsgroups/parts4-10 {header}/parts4-10"} <= marked["newsgroups_no_headers"]
    assert f"{script} --seed-pairs reproduction/rows/sms_spam reproduction/rows/sst reproduction/rows/newsgroups reproduction/rows/multi30k" in every
    for plan in sorted((REPO / "docs/plans").glob("*.yaml")):  # the plans plan_tests.py reads
        spec = yaml.safe_load(plan.read_text())
        row = spec["name"] if spec.get("paired_with") else spec["dataset"]  # a paired plan reads its own row
        if row in marked and spec.get("table") in ("replicate_readings", "table10_replicates", "header_rows",
                                                   "paired_parts"):
            command = f"python paper_rows/plan_tests.py docs/plans/{plan.name} reproduction/rows/{row}"
            assert command in marked[row], f"reproduction/rows/{row}/README.md marks no block for `{command}`"
        if spec.get("paired_with") and row in marked:  # and the two rows set against each other
            contrast = f"{script} --contrast reproduction/rows/{row} reproduction/rows/{spec['paired_with']}"
            assert contrast in marked[row], f"reproduction/rows/{row}/README.md marks no block for `{contrast}`"


# the scripts that read what the repository keeps and write nothing: the docs' commands of these
# run as written (paper_row.py and the others train, or read a run's directory elsewhere)
READERS = {"reproduction_rows", "appendix_rows", "plan_tests", "experiments_tables", "sweep_tables",
           "transfer_tables", "findings", "ledger", "row_costs"}


def fenced_lines(pages) -> list[tuple[str, str]]:
    """Each line of the pages' fenced code blocks (continuation lines joined), with its page."""
    fences = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
    return [(path.relative_to(REPO).as_posix(), line.strip()) for path in dict.fromkeys(pages)
            for block in fences.findall(path.read_text()) for line in block.replace("\\\n", " ").splitlines()]


def reader_commands() -> list[tuple[str, str]]:
    """Each fenced `python paper_rows/<reader>.py ...` line of the docs, the rows' pages and the
    kept experiments' pages, with a figure it would draw left out (a reader's output alone)."""
    pages = [*MARKDOWN, *sorted((REPO / "reproduction").glob("*/*/README.md"))]
    out = []
    for where, line in fenced_lines(pages):
        m = re.match(r"python paper_rows/(\w+)\.py\b", line)
        if m and m[1] in READERS and (where, line) not in out:
            out.append((where, line))
    return out


@pytest.mark.process
@pytest.mark.parametrize("where, command", reader_commands(), ids=[c for _, c in reader_commands()])
def test_documented_reader_commands_run_as_written(where, command):
    """A reader command in a page's code block runs on the kept files as a newcomer types it
    (a glob over reproduction/rows once met the ledger file there and refused)."""
    words = shlex.split(command, comments=True)
    if "--figure" in words:
        del words[words.index("--figure"):words.index("--figure") + 2]
    words = [x for w in words for x in (sorted(str(p.relative_to(REPO)) for p in REPO.glob(w)) if "*" in w else [w])]
    proc = subprocess.run([sys.executable, *words[1:]], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, f"{where}: `{command}` fails:\n{proc.stderr[-2000:]}"


def launcher_commands() -> list[tuple[str, str]]:
    """Each fenced `python paper_rows/parallel_parts.py ...` line of the docs (it trains: run as
    written with --dry-run, which checks its parts, config and options and starts nothing)."""
    return [(where, line) for where, line in fenced_lines(MARKDOWN)
            if re.match(r"python3? paper_rows/parallel_parts\.py\b", line)]


def test_the_docs_launch_parts_in_parallel():
    assert any("--by-priority" in c for _, c in launcher_commands())  # the finder finds what it tests


@pytest.mark.process
@pytest.mark.parametrize("where, command", launcher_commands(), ids=[c for _, c in launcher_commands()])
def test_documented_parallel_parts_commands_parse_as_written(where, command):
    words = shlex.split(command, comments=True)
    proc = subprocess.run([sys.executable, *words[1:], "--dry-run"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, f"{where}: `{command}` fails:\n{proc.stderr[-2000:]}"
    assert "part" in proc.stdout, proc.stdout
