"""The library modules a rule script depends on, read from its imports.

Each rule lists, as inputs, the ``attnlearn`` modules its script imports, directly or
through other modules (function-level imports included), so editing one of them reruns
exactly the jobs whose code it is. Importing ``attnlearn.a.b`` runs the packages'
``__init__.py`` files on the way, so those count too. Found by parsing the source (nothing
is imported), which rules/common.smk does when the workflow is loaded.
"""

from __future__ import annotations

import ast
from functools import lru_cache
from pathlib import Path

PACKAGE = "attnlearn"


def module_file(root: Path, name: str) -> Path | None:
    """``attnlearn.a.b`` -> root/a/b.py or root/a/b/__init__.py (None: not a module)."""
    base = root.joinpath(*name.split(".")[1:])
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _package_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join([PACKAGE, *(parts[:-1] if parts[-1] != "__init__" else parts[:-1])])


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@lru_cache(maxsize=None)
def imports(path: Path, root: Path) -> tuple[tuple[frozenset, str, str | None], ...]:
    """Every import of ``attnlearn`` code in ``path`` (function-level ones too), as
    (local names it binds, module, name imported from it or None for the whole module)."""
    tree = ast.parse(path.read_text(), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(frozenset({a.asname or a.name.split(".")[0]}), a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module
            if node.level:  # relative: only inside the package
                if not path.is_relative_to(root):
                    continue
                package = _package_of(path, root).split(".")
                base = ".".join(package[:len(package) - node.level + 1] + ([node.module] if node.module else []))
            for a in node.names:
                binds = frozenset({a.asname or a.name})
                if module_file(root, f"{base}.{a.name}"):  # `from package import submodule`
                    out.append((binds, f"{base}.{a.name}", None))
                else:
                    out.append((binds, base, a.name))
    return tuple((b, m, n) for b, m, n in out if m == PACKAGE or m.startswith(PACKAGE + "."))


@lru_cache(maxsize=None)
def script_modules(script: Path, root: Path) -> tuple[Path, ...]:
    """Every library module file ``script`` uses, transitively, sorted.

    A package's ``__init__.py`` counts (it runs on import), but of its own imports only
    those that provide the names taken from it: ``from attnlearn.models import BagOfWords``
    depends on models/proxy.py, not on every model that models/__init__.py re-exports.
    """
    files, seen, todo = set(), set(), [(None, Path(script), None)]
    while todo:
        module, path, name = todo.pop()
        if (module, None) in seen or (module, name) in seen:
            continue
        seen.add((module, name))
        selective = name is not None and path.name == "__init__.py"
        for binds, target, imported in imports(path, root):
            if selective and name not in binds:
                continue
            target_file = module_file(root, target)
            if target_file is None:
                continue
            files |= {target_file, *filter(None, (module_file(root, p) for p in _parents(target)))}
            todo.append((target, target_file, imported))
    return tuple(sorted(files))
