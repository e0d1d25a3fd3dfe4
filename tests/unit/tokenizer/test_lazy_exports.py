"""The lazy facades (webapp/tokenizer/lazy.py): what type checkers import and what runs agree.

Each facade names every export twice, as an import under `if TYPE_CHECKING:` and as an entry of
its `_EXPORTS` table. A name in one list only would type-check and then fail at run time (or the
other way round), so the two are compared here, with `__all__`, and every name is resolved.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from webapp import PROJECT_ROOT

ROOT = PROJECT_ROOT
FACADES = ["webapp.tokenizer", "webapp.tokenizer.formats"]


def _type_checking_imports(module: str) -> set[tuple[str, str, str]]:
    """(module, attribute, exported name) of every import under `if TYPE_CHECKING:`."""
    path = ROOT / (module.replace(".", "/") + "/__init__.py")
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom) and inner.module:
                    found.update((inner.module, a.name, a.asname or a.name) for a in inner.names)
    return found


@pytest.mark.parametrize("module", FACADES)
def test_the_table_the_type_checking_imports_and_all_agree(module: str) -> None:
    facade = importlib.import_module(module)
    table = {(where, attribute, name) for name, (where, attribute) in facade._EXPORTS.items()}
    imports = _type_checking_imports(module)
    assert imports, "no TYPE_CHECKING imports found: the test reads nothing"
    assert imports ^ table == set()
    assert set(facade.__all__) == set(facade._EXPORTS)
    for name in facade.__all__:
        assert getattr(facade, name) is getattr(importlib.import_module(facade._EXPORTS[name][0]),
                                                facade._EXPORTS[name][1])


def test_an_unknown_name_is_an_attribute_error_naming_it() -> None:
    facade = importlib.import_module("webapp.tokenizer")
    with pytest.raises(AttributeError, match="'webapp.tokenizer' has no attribute 'no_such_name'"):
        facade.no_such_name  # noqa: B018
    assert "get_encoding" in dir(facade)


def test_importing_a_facade_imports_no_engine_and_no_compiled_library() -> None:
    # (the shared leaves webapp/__init__.py needs, such as caches, may come along; the engine, the
    # presets, the file readers and numpy / regex / Flask must not)
    code = ("import sys, webapp.tokenizer, webapp.tokenizer.formats; "
            "print(sorted(m for m in sys.modules if m.startswith(('webapp.tokenizer.core', 'webapp.tokenizer.presets', "
            "'webapp.tokenizer.hf', 'webapp.tokenizer.normalize', 'webapp.tokenizer.models', 'webapp.tokenizer.decoders', "
            "'webapp.tokenizer.reading', 'webapp.tokenizer.formats.', 'numpy', 'regex', 'flask'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
