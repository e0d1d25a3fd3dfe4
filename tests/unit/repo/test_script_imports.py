"""Every `webapp` import of the benchmark and maintenance scripts resolves.

The scripts run outside the test suite (`make bench`, by hand), so a module
moved or renamed in the package would otherwise break them silently (seen:
bench_chat_counts.py importing a module the stages replaced). This reads their
import statements and imports each named module and name; it does not run
the scripts.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from webapp import PROJECT_ROOT

ROOT = PROJECT_ROOT
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])


def _webapp_imports(path: Path) -> list[tuple[int, str, str | None]]:
    """(line, module, name or None) of each `webapp` import in a file, at any depth."""
    found: list[tuple[int, str, str | None]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("webapp"):
            found += [(node.lineno, node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name, None) for alias in node.names if alias.name.startswith("webapp")]
    return found


def _missing(module: str, name: str | None) -> str | None:
    try:
        imported = importlib.import_module(module)
    except ImportError as exc:
        return f"{module}: {exc}"
    if name is None or hasattr(imported, name):
        return None
    try:  # `from package import submodule`
        importlib.import_module(f"{module}.{name}")
    except ImportError:
        return f"{module} has no {name}"
    return None


def test_the_scripts_import_webapp_modules() -> None:
    assert any(_webapp_imports(path) for path in SCRIPTS)  # (the check reads real imports)


@pytest.mark.parametrize("path", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_every_webapp_import_of_a_script_resolves(path: Path) -> None:
    problems = [f"{path.name}:{line}: {problem}" for line, module, name in _webapp_imports(path)
                if (problem := _missing(module, name)) is not None]
    assert not problems
