"""The package's shape: subpackages by pipeline stage, imports only from a
module's own stage or those below it, no import circle, no module reaching into another's
private names. Read from the source, nothing imported."""

from __future__ import annotations

import re

from pathlib import Path

from attnlearn.runtime.codedeps import PACKAGE, imports, module_file

ROOT = Path(__file__).resolve().parents[1] / "src" / PACKAGE
STAGES = {"data", "models", "training", "probing", "agreement", "reporting", "analyses", "experiments", "runtime",
          "rows", "config", "cost"}
# The stages in the pipeline's order, lowest first: a module imports from its own stage and
# those below it, never from one above. An import is a rerun arrow (a rule's inputs are the
# modules its script imports, runtime/codedeps.py), so an import upwards reruns jobs for code
# they never run. cost, what a job costs (its seconds from its sizes and a rate, the measured GPU
# rates, the time a running workflow has left), imports nothing of the package and sits under
# runtime: the console (runtime/) reads its time left, the preflight and the pricing above read
# the rest. The top-level modules have their floor here too: statistics at the ground
# with runtime, and sweeps (a config's sweeps expanded into datasets), which imports nothing of the
# package. config (a config read, checked, resolved and its runs named) checks a config against
# the registries of data, training and probing: above every stage (the workflow and the programs
# import it, no stage does); rows, the reproduction run on top of the workflow and read for
# docs/, above everything (nothing imports it).
STAGE_ORDER = ("cost", "runtime", "statistics", "sweeps", "data", "models", "training", "probing", "agreement",
               "analyses", "experiments", "reporting", "config", "rows")


def module_name(path: Path, root: Path = ROOT) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join([PACKAGE, *(parts[:-1] if parts[-1] == "__init__" else parts)])


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """module -> the package's modules it imports (function-level imports too)."""
    graph = {}
    for path in sorted(root.rglob("*.py")):
        targets = {module_name(module_file(root, m), root) for _, m, _ in imports(path, root) if module_file(root, m)}
        graph[module_name(path, root)] = targets - {module_name(path, root)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v), on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def private_imports(root: Path = ROOT) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for _, module, name in imports(path, root):
            if name and name.startswith("_") and not name.startswith("__") and module != module_name(path, root):
                found.append(f"{path.relative_to(root)}: from {module} import {name}")
    return found


def stage(module: str) -> int | None:
    """The floor of ``attnlearn.<stage>...`` in STAGE_ORDER (-1: the package itself, below
    every stage; None: a top-level name STAGE_ORDER does not place)."""
    parts = module.split(".")
    if len(parts) == 1:
        return -1
    return STAGE_ORDER.index(parts[1]) if parts[1] in STAGE_ORDER else None


def imported_modules(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, module) of every import of the package's code in ``path``, function-level ones
    too; ``from attnlearn import x`` names attnlearn.x, relative imports are resolved."""
    import ast

    found, me = [], module_name(path, root).split(".")
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = me if path.name == "__init__.py" else me[:-1]
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            found += [(node.lineno, f"{base}.{a.name}" if base == PACKAGE else base) for a in node.names]
    return list(dict.fromkeys((line, m) for line, m in found if m.split(".")[0] == PACKAGE))  # once a line


def backward_imports(root: Path = ROOT) -> list[str]:
    """'FILE:LINE: STAGE imports MODULE of STAGE, a later stage' for every import against
    STAGE_ORDER, and 'FILE: no stage' for a module whose top-level name it does not place."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel, mine = path.relative_to(root), stage(module_name(path, root))
        if mine is None:
            found.append(f"{rel}: no stage (give {module_name(path, root)} its floor in STAGE_ORDER)")
            continue
        for line, target in imported_modules(path, root):
            theirs = stage(target)
            if theirs is not None and theirs > mine:
                found.append(f"{rel}:{line}: {STAGE_ORDER[mine] if mine >= 0 else PACKAGE} imports {target} "
                             f"of {STAGE_ORDER[theirs]}, a later stage")
    return found


def test_no_module_imports_a_later_stage():
    assert backward_imports() == []


def test_the_stage_check_names_a_planted_backward_import(tmp_path):
    """A function-level import counts (it is a rule input all the same), and so does
    ``from attnlearn import config``; a top-level module of no stage is named."""
    pkg = tmp_path / PACKAGE
    for sub in ("data", "reporting"):
        (pkg / sub).mkdir(parents=True)
        (pkg / sub / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "reporting" / "page.py").write_text(f"from {PACKAGE}.data import parse\n")  # downwards: fine
    (pkg / "data" / "parse.py").write_text(f"import json\n\n\ndef f():\n    from {PACKAGE}.reporting.page import g\n")
    (pkg / "data" / "load.py").write_text(f"from {PACKAGE} import config\n")
    (pkg / "config.py").write_text("")
    (pkg / "extra.py").write_text("")
    assert backward_imports(pkg) == [
        f"data/load.py:1: data imports {PACKAGE}.config of config, a later stage",
        f"data/parse.py:5: data imports {PACKAGE}.reporting.page of reporting, a later stage",
        f"extra.py: no stage (give {PACKAGE}.extra its floor in STAGE_ORDER)",
    ]


def test_no_import_circle_in_the_package():
    assert cycles(import_graph()) == []


def test_the_cycle_finder_finds_a_circle_made_through_a_function_level_import(tmp_path):
    pkg = tmp_path / PACKAGE
    (pkg / "a").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "x.py").write_text(f"from {PACKAGE}.b import f\n")
    (pkg / "b.py").write_text(f"def f():\n    from {PACKAGE}.a.x import g\n")
    assert cycles(import_graph(pkg)) == [[f"{PACKAGE}.a.x", f"{PACKAGE}.b"]]


def test_no_module_imports_another_modules_private_name(tmp_path):
    assert private_imports() == []
    pkg = tmp_path / PACKAGE
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def _hidden():\n    pass\n")
    (pkg / "b.py").write_text(f"from {PACKAGE}.a import _hidden\n")
    assert private_imports(pkg) == [f"b.py: from {PACKAGE}.a import _hidden"]


def test_top_level_holds_few_modules_and_the_rest_lives_in_stage_subpackages():
    top = sorted(p.name for p in ROOT.glob("*.py"))
    assert len(top) <= 6, top
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages == STAGES, packages ^ STAGES


def unresolved_imports(paths) -> list[str]:
    """``from attnlearn.x import name`` lines whose name is neither in module x nor a submodule."""
    import ast
    import importlib

    bad = []
    for path in paths:
        for node in ast.walk(ast.parse(Path(path).read_text())):
            if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith(PACKAGE):
                module = importlib.import_module(node.module)
                for alias in node.names:
                    if not hasattr(module, alias.name) and not module_file(ROOT, f"{node.module}.{alias.name}"):
                        bad.append(f"{path}: from {node.module} import {alias.name}")
    return bad


def test_every_script_and_program_imports_names_that_exist(tmp_path):
    """The rule scripts are run by Snakemake, not imported by the tests: a stale import would
    only show in an end-to-end run (the move into subpackages once left one)."""
    repo = ROOT.parents[1]
    programs = [p for d in ("workflow/scripts", "benchmarks", "paper_rows", "faults", "diagnostics")
                for p in sorted((repo / d).glob("*.py"))]
    assert len(programs) > 30 and unresolved_imports(programs) == []
    stale = tmp_path / "stale.py"
    stale.write_text(f"from {PACKAGE}.agreement.metric import replicates\n")
    assert unresolved_imports([stale]) == [f"{stale}: from {PACKAGE}.agreement.metric import replicates"]


def test_the_measure_names_the_config_checks_are_the_probes_registered_measures():
    from attnlearn.probing.measures import MEASURE_NAMES
    from attnlearn.probing.probes import MEASURES

    assert set(MEASURES) == set(MEASURE_NAMES)


def test_what_the_snakefile_imports_loads_no_torch():
    """The workflow imports these modules at every Snakemake start (dry runs, each cluster job
    twice): torch at their top level, or at that of a module they import, would cost about a
    second each time. Function-level imports (run by jobs) do not count."""
    seen, todo = set(), ["attnlearn.config", "attnlearn.training.variants", "attnlearn.runtime.codedeps",
                         "attnlearn.agreement.compare", "attnlearn.data.download", "attnlearn.data.prepare"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo += [m for m in top_level_imports(module_file(ROOT, module)) if m.startswith(PACKAGE)]
    assert not {m for m in seen if "torch" in top_level_imports(module_file(ROOT, m))}


def top_level_imports(path: Path) -> set[str]:
    """The modules ``path`` imports when it is imported (module-level statements), and their packages."""
    import ast

    names = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names |= {node.module} | {f"{node.module}.{a.name}" for a in node.names
                                       if module_file(ROOT, f"{node.module}.{a.name}")}
    return names | {".".join(n.split(".")[:k]) for n in names for k in range(1, n.count(".") + 1)}


def test_comments_say_why_not_which_issue():
    """A reader of the code has no issue tracker: no 'issue N' of ours in the code, the rules or
    the commands (an upstream project's issue, named with its project, may stay)."""
    repo = ROOT.parents[1]
    files = [*repo.glob("src/**/*.py"), *repo.glob("rules/*.smk"), *repo.glob("workflow/**/*.py"),
             *repo.glob("paper_rows/*.py"), repo / "Snakefile"]
    found = [f"{path.relative_to(repo)}:{n}" for path in files
             for n, line in enumerate(path.read_text().splitlines(), 1)
             if re.search(r"\bissue \d+", line, re.I) and not re.search(r"Snakemake|its issue|upstream", line)]
    assert found == [], found
