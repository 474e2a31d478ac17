"""Code dependencies read from imports (src/attnlearn/runtime/codedeps.py) on a small package."""

from pathlib import Path

import pytest

from attnlearn.runtime.codedeps import script_modules

REPO = Path(__file__).resolve().parents[1]
LIB = REPO / "src" / "attnlearn"


def test_script_modules_follow_imports_transitively(tmp_path):
    root = tmp_path / "attnlearn"
    files = {
        "__init__.py": "",
        "a.py": "from .sub import deep\n",
        "lazy.py": "",
        "unused.py": "",
        "sub/__init__.py": "",
        "sub/deep.py": "def f():\n    from ..lazy import x  # a function-level import counts\n",
        "models/__init__.py": "from .one import One\nfrom .two import Two\n",
        "models/one.py": "from ..a import y\n",
        "models/two.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    script = tmp_path / "script.py"
    script.write_text("import os\nfrom attnlearn.models import One\n")
    got = {p.relative_to(root).as_posix() for p in script_modules(script, root)}
    # One comes from models/one.py: the re-exported Two is not a dependency
    assert got == {"__init__.py", "models/__init__.py", "models/one.py", "a.py", "sub/__init__.py",
                   "sub/deep.py", "lazy.py"}


@pytest.mark.parametrize("module", ["analyses/norms.py", "agreement/readable.py", "reporting/plots.py"])
def test_training_probing_and_the_baselines_do_not_depend_on_analyses_or_figures(module):
    """A module a script imports is a rule input: the probe once imported analyses/norms.py, so
    a comment added there planned every probe, proxy and IBM Model 1 job again.
    docs/pipeline.md ("What an edit reruns") has the dry runs on a finished tiny run."""
    for script in ("train.py", "probe.py", "proxy.py", "proxy_probe.py", "ibm1.py", "gold.py"):
        used = {p.relative_to(LIB).as_posix() for p in script_modules(REPO / "workflow/scripts" / script, LIB)}
        assert module not in used, (script, module)
