"""Lazy exports for a package facade: a name is imported on its first use, then kept.

What it does not do: import anything at definition time, or re-export names the
table does not list.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from typing import Any


def lazy_exports(
    module_name: str, namespace: MutableMapping[str, Any], table: Mapping[str, tuple[str, str]],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """(`__getattr__`, `__dir__`) for the module `module_name` whose globals are `namespace`."""

    def getattr_(name: str) -> Any:
        """An exported name, imported now and kept in the module (later uses are plain attribute reads)."""
        found = table.get(name)
        if found is None:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        module, attribute = found
        value = getattr(import_module(module), attribute)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *table})

    return getattr_, dir_


__all__ = ["lazy_exports"]
