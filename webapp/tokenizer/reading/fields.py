"""What the readers of a tokenizer.json's stages share: the refusal, the bounds, and reading fields.

What it does not do: apply any stage, or read whole files.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any

import regex

from webapp.tokenizer.reading import text as ht
from webapp.tokenizer.reading.regex_size import compile_file_pattern


def compile_file_regex(pattern: str) -> regex.Pattern[str]:
    """A tokenizer.json regex the way the library's engine (Oniguruma, Ruby syntax) reads it:
    there `^` and `$` match at every line start / end, as Python's MULTILINE makes them.
    Measured before it is compiled (reading/regex_size.py): a pattern too large raises PatternTooLarge."""
    return compile_file_pattern(pattern, regex.MULTILINE)


class Unsupported(Exception):
    """A component the playground cannot apply (the message names it)."""


MAX_DEPTH = 8  # Sequences inside Sequences
MAX_CONTENT = 16  # characters a Replace / Prepend may insert (bounds how much longer text gets)
MAX_PATTERN = 5_000  # characters of a regex


def node_type(node: Any, what: str) -> str:
    if not isinstance(node, dict) or not isinstance(node.get("type"), str):
        raise Unsupported(f"a {what} without a type")
    return str(node["type"])


def pattern_field(node: Any, what: str) -> tuple[str, str]:
    """{"String": s} or {"Regex": r} -> ("String"|"Regex", text)."""
    if isinstance(node, dict) and len(node) == 1:
        (kind, value), = node.items()
        if kind in ("String", "Regex") and isinstance(value, str):
            if len(value) > MAX_PATTERN:
                raise Unsupported(f"{what} pattern of {len(value):,} characters (over {MAX_PATTERN:,})")
            if kind == "Regex":
                try:
                    compile_file_regex(value)
                except (regex.error, RecursionError, OverflowError) as exc:
                    raise Unsupported(f"{what} regex {value[:40]!r} does not compile here ({exc})") from None
            return kind, value
    raise Unsupported(f"{what} with a pattern that is not {{String}} or {{Regex}}")


def finder(kind: str, value: str) -> ht.Finder:
    return ht.regex_finder(compile_file_regex(value)) if kind == "Regex" else ht.string_finder(value)


def flag(node: dict[str, Any], key: str, default: bool) -> bool:
    value = node.get(key, default)
    return default if value is None else bool(value)


def inserted(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise Unsupported(f"a {what} without a string to insert")
    if len(value) > MAX_CONTENT:
        raise Unsupported(f"a {what} inserting {len(value)} characters (over {MAX_CONTENT})")
    return value


def deeper(depth: int) -> int:
    if depth >= MAX_DEPTH:
        raise Unsupported(f"a Sequence nested more than {MAX_DEPTH} deep")
    return depth + 1


def prepend_scheme(node: dict[str, Any]) -> str:
    scheme = node.get("prepend_scheme")
    if scheme is None:  # files from before prepend_scheme say add_prefix_space
        return "always" if flag(node, "add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise Unsupported(f"the Metaspace prepend_scheme {str(scheme)[:20]!r}")
    return str(scheme)


def one_char(node: dict[str, Any], key: str, default: str | None, what: str) -> str:
    value = node.get(key, default)
    if not isinstance(value, str) or len(value) != 1:
        raise Unsupported(f"a {what} whose {key} is not one character")
    return value
