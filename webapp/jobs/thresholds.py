"""Sizes that decide whether a request becomes a background job, measured without parsing.

What it does not do: read settings, submit jobs, or compute anything.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any


def rule_count(value: Any) -> int:
    """How many rules a merges value holds, without parsing it (an upper bound for text)."""
    if isinstance(value, (list, tuple)):
        return len(value)
    if isinstance(value, str):
        return max(value.count("\n") + 1, value.count("]"))
    return 0


def entry_count(value: Any) -> int:
    """How many entries a vocab value holds, without parsing it (an upper bound for text)."""
    if isinstance(value, (dict, list, tuple)):
        return len(value)
    if isinstance(value, str):
        return max(value.count("\n") + 1, value.count(","))
    return 0


def merge_count(value: Any) -> int:
    """A number of merges as given (int or digits), 0 for anything else: the inline
    path then reports what is wrong with it (a float, 1e999, a boolean...)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit() and len(value.strip()) <= 18:
        return int(value.strip())
    return 0


def word_chars(value: Any) -> int:
    """The characters of a word list (plus one per word), typed or as a JSON list."""
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (list, tuple)):
        return sum(len(w) for w in value if isinstance(w, str)) + len(value)
    return 0


def text_chars(value: Any) -> int:
    """A text's length in characters, 0 for anything that is not a string."""
    return len(value) if isinstance(value, str) else 0
