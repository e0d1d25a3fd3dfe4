"""How large a pattern from a file becomes when the `regex` package compiles it, known before compiling.

`regex` writes counted repeats out in full: `(?:(?:a{1000}){1000}){5}`, 27
bytes, compiles to 5,000,000 copies of `a` (gigabytes, seconds). So every
pattern a file brings is measured first (`pattern_units`, over `regex`'s own
parse tree, so sets, flags and comments are read as it reads them: an atom 1
unit, a repeat {m,n} its part times n) and refused over MAX_PATTERN_UNITS, or
when one file's patterns pass MAX_FILE_UNITS together. `compile_file_pattern`
is the one way to compile such a pattern. What it does not do: match.
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Iterator

import regex
from regex import _regex_core  # (private, untyped: see `core` below)

from webapp.tokenizer.errors import TokenizerError

#: Units (atoms after writing every counted repeat out) one pattern may compile to: measured, a unit
#: costs about 270 bytes while `regex` compiles it (100,000 units: +27 MB), so at most about 5 MB a pattern.
MAX_PATTERN_UNITS = 20_000
#: Units all patterns of one file may compile to together (its Splits, Replaces and decoders).
MAX_FILE_UNITS = 100_000
#: Patterns up to this size may stay in `regex`'s cache (every real tokenizer's is under 100 units).
MAX_CACHED_UNITS = 1_000
#: `regex`'s parser (untyped, private: the package is pinned, and the tests check the counts).
core: Any = _regex_core
_FILE_UNITS: ContextVar[list[int] | None] = ContextVar("file_pattern_units", default=None)


class PatternTooLarge(TokenizerError):
    """A pattern whose compiled form would pass a bound (the message says by how much)."""


def _parse(pattern: str, flags: int) -> Any:
    """`regex`'s own parse tree of `pattern`, as its `compile` makes it before writing anything out
    (its `_regex_core`: the package is pinned in requirements.txt, and the tests check the counts).
    Raises regex.error (or RecursionError) where `regex.compile` would."""
    global_flags = flags
    while True:
        source = core.Source(pattern)
        info = core.Info(global_flags, source.char_type, {})
        info.guess_encoding = regex.UNICODE
        source.ignore_space = bool(info.flags & regex.VERBOSE)
        try:
            parsed = core._parse_pattern(source, info)
        except core._UnscopedFlagSet:  # (a flag for the whole pattern, found inside it: parsed again)
            global_flags = info.global_flags
            continue
        if not source.at_end():
            raise regex.error("unbalanced parenthesis", pattern, source.pos)
        return parsed


def _children(node: Any) -> list[Any]:
    """The parse-tree nodes directly under `node`, whichever attributes hold them."""
    found: list[Any] = []
    for value in vars(node).values():
        if isinstance(value, core.RegexBase):
            found.append(value)
        elif isinstance(value, (list, tuple)):
            found += [item for item in value if isinstance(item, core.RegexBase)]
    return found


@lru_cache(maxsize=256)  # (a file's patterns are measured again whenever its pipeline is built)
def pattern_units(pattern: str, flags: int = 0) -> int:
    """An upper bound on the atoms `regex` writes out for `pattern` (see the module doc), from its own
    parse tree, walked without recursion: a leaf is 1 (a string its length), a repeat its part times
    n ({m,} times m), a set 1, anything else the sum of its parts."""
    order: list[Any] = []
    stack = [_parse(pattern, flags)]
    while stack:  # (parents before their children; summed in reverse below)
        node = stack.pop()
        order.append(node)
        if not isinstance(node, core.SetBase):
            stack += _children(node)
    size: dict[int, int] = {}
    for node in reversed(order):
        parts = [] if isinstance(node, core.SetBase) else [size[id(child)] for child in _children(node)]
        if isinstance(node, core.GreedyRepeat):  # (and the lazy and possessive ones)
            times = node.min_count if node.max_count is None else max(node.min_count, node.max_count)
            size[id(node)] = max(1, sum(parts)) * max(1, times)
        elif parts:
            size[id(node)] = sum(parts)
        else:
            size[id(node)] = max(1, len(getattr(node, "characters", ()) or ()))
    return size[id(order[0])]


def check_pattern(pattern: str, flags: int = 0) -> int:
    """The pattern's units, refused over MAX_PATTERN_UNITS, or over MAX_FILE_UNITS with the file's
    patterns measured before it (inside `file_patterns`)."""
    units = pattern_units(pattern, flags)
    if units > MAX_PATTERN_UNITS:
        raise PatternTooLarge(
            f"the regex {pattern[:40]!r}{'…' if len(pattern) > 40 else ''} would compile to {units:,} units "
            f"(nested repeats written out), over the {MAX_PATTERN_UNITS:,} a pattern may have", field="pattern")
    total = _FILE_UNITS.get()
    if total is not None:
        total[0] += units
        if total[0] > MAX_FILE_UNITS:
            raise PatternTooLarge(
                f"the file's regexes would compile to {total[0]:,} units together (nested repeats written "
                f"out), over the {MAX_FILE_UNITS:,} one file's patterns may have", field="pattern")
    return units


@contextmanager
def file_patterns() -> Iterator[None]:
    """Within: every pattern checked counts against one file's MAX_FILE_UNITS."""
    token = _FILE_UNITS.set([0])
    try:
        yield
    finally:
        _FILE_UNITS.reset(token)


def compile_file_pattern(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """`pattern` compiled once it is measured (`check_pattern`). Only a small one goes into `regex`'s own
    cache of compiled patterns (500 of them): a large one is kept by its caller alone (the opened
    tokenizers' cache weighs it)."""
    units = check_pattern(pattern, flags)
    return regex.compile(pattern, flags, cache_pattern=units <= MAX_CACHED_UNITS)


__all__ = ["MAX_FILE_UNITS", "MAX_PATTERN_UNITS", "PatternTooLarge", "check_pattern", "compile_file_pattern",
           "file_patterns", "pattern_units"]
