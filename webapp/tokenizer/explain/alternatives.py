"""Which alternative of a split pattern matched a pre-token (the `pre_tokenizer` cause's detail).

What it does not do: split text (pretokenize/), or decide causes.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from webapp.tokenizer.reading.regex_size import compile_file_pattern


def top_alternatives(pattern: str) -> tuple[str, ...]:
    """The pattern's top-level alternatives, in order (the whole pattern when it has none)."""
    out: list[str] = []
    depth = 0
    in_class = False
    start = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            if ch == "]":
                in_class = False
        elif ch == "[":
            in_class = True
            if pattern[i + 1 : i + 2] == "]" or pattern[i + 1 : i + 3] == "^]":
                i += 2 if pattern[i + 1] == "]" else 3  # a leading ] is literal
                continue
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
        i += 1
    out.append(pattern[start:])
    return tuple(out)


@lru_cache(maxsize=64)
def _compiled(pattern: str) -> tuple[tuple[str, Any], ...]:
    # (each alternative is part of a pattern already measured at open: measured again all the same)
    return tuple((alt, compile_file_pattern(alt)) for alt in top_alternatives(pattern))


def alternative_at(pattern: str, text: str, start: int, end: int) -> str | None:
    """The first alternative of `pattern` that matches `text` at `start` (code points), if it ends at `end`."""
    for alt, compiled in _compiled(pattern):
        found = compiled.match(text, start)
        if found is not None:
            return alt if found.end() == end else None
    return None


__all__ = ["alternative_at", "top_alternatives"]
