"""How large a pattern from a file becomes when the `regex` package compiles it, known before compiling.

`regex` writes counted repeats out in full: `(?:(?:a{1000}){1000}){5}`, 27
bytes, compiles to 5,000,000 copies of `a` (gigabytes, seconds). So every
pattern a file brings is measured first (`pattern_units`: one pass, each atom
1 unit, a group the sum of its parts, a repeat {m,n} its part times n, or m
when unbounded) and refused over MAX_PATTERN_UNITS, or when one file's
patterns pass MAX_FILE_UNITS together; `compile_file_pattern` is the one way
to compile such a pattern. What it does not do: check the syntax (`regex` does).
"""

from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Iterator

import regex

from webapp.tokenizer.errors import TokenizerError

#: Units (atoms after writing every counted repeat out) one pattern may compile to: measured, a unit
#: costs about 270 bytes while `regex` compiles it (100,000 units: +27 MB), so at most about 5 MB a pattern.
MAX_PATTERN_UNITS = 20_000
#: Units all patterns of one file may compile to together (its Splits, Replaces and decoders).
MAX_FILE_UNITS = 100_000
#: Patterns up to this size may stay in `regex`'s cache (every real tokenizer's is under 100 units).
MAX_CACHED_UNITS = 1_000
_FILE_UNITS: ContextVar[list[int] | None] = ContextVar("file_pattern_units", default=None)
_REPEAT = regex.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_FLAGS = regex.compile(r"\(\?[a-zA-Z0-9^-]*x")
#: What follows "(" before a group's contents: `?:`, `?P<name>`, `?<=`, `?(1)`, `?i:`, `?>`, ...
_GROUP_HEAD = regex.compile(r"\?(?:P?<(?![=!])[^>]*>|<[=!]|P[=>]\w*|&\w*|\(\w*\)|[-+]?\d+|R|[=!>|]|[a-zA-Z^-]*:?)")


class PatternTooLarge(TokenizerError):
    """A pattern whose compiled form would pass a bound (the message says by how much)."""


def _escape_end(pattern: str, i: int) -> int:
    """The index after the escape starting at pattern[i] == "\\" (`\\p{..}`, `\\x{..}`, `\\N{..}`, `\\g<..>`)."""
    if i + 1 >= len(pattern):
        return i + 1
    closer = {"{": "}", "<": ">"}.get(pattern[i + 2] if i + 2 < len(pattern) else "")
    if pattern[i + 1] in "pPxNgkuU" and closer is not None:
        end = pattern.find(closer, i + 3)
        return end + 1 if end >= 0 else len(pattern)
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class starting at pattern[i] == "[" (nested sets included)."""
    depth = 0
    j = i
    while j < len(pattern):
        ch = pattern[j]
        if ch == "\\":
            j = _escape_end(pattern, j)
            continue
        if ch == "[":
            depth += 1
            j += 1
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):  # (a "]" first in a set is a character)
                j += 1
            continue
        if ch == "]":
            depth -= 1
            if depth == 0:
                return j + 1
        j += 1
    return len(pattern)


def _repeat_factor(pattern: str, i: int) -> tuple[int, int] | None:
    """(times the part before is written out, index after the quantifier) for a quantifier at i."""
    ch = pattern[i]
    if ch in "*+?":
        end = i + 1
        factor = 1
    elif ch == "{":
        found = _REPEAT.match(pattern, i)
        if found is None or not (found.group(1) or found.group(3)):
            return None
        low = int(found.group(1) or 0)
        high = found.group(3)
        # ({m,n} counted as n, the most it can be written out; {m,} as m, the part after is a loop)
        factor = max(1, low if found.group(2) and not high else int(high) if high else low)
        end = found.end()
    else:
        return None
    if end < len(pattern) and pattern[end] in "?+":  # (lazy, possessive)
        end += 1
    return factor, end


def pattern_units(pattern: str) -> int:
    """An upper bound on the atoms `regex` writes out for `pattern` (see the module doc); one pass, no recursion."""
    verbose = _FLAGS.search(pattern) is not None  # (then spaces and comments are not atoms)
    # each open group: [its finished alternatives, its current sequence, the sequence's last item]
    stack: list[list[int]] = [[0, 0, 0]]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        frame = stack[-1]
        if verbose and ch in " \t\n\r\f\v":
            i += 1
            continue
        if verbose and ch == "#":
            end = pattern.find("\n", i)
            i = len(pattern) if end < 0 else end + 1
            continue
        repeat = _repeat_factor(pattern, i) if frame[2] else None
        if repeat is not None:
            factor, i = repeat
            frame[1] += frame[2] * (factor - 1)
            frame[2] *= factor
            continue
        if ch == "(":
            if pattern.startswith("(?#", i):  # a comment
                end = pattern.find(")", i)
                i = len(pattern) if end < 0 else end + 1
                continue
            stack.append([0, 0, 0])
            head = _GROUP_HEAD.match(pattern, i + 1)
            i = head.end() if head is not None else i + 1
            continue
        if ch == ")" and len(stack) > 1:
            done = stack.pop()
            size = max(1, done[0] + done[1])
            stack[-1][1] += size
            stack[-1][2] = size
            i += 1
            continue
        if ch == "|":
            frame[0] += frame[1]
            frame[1] = frame[2] = 0
            i += 1
            continue
        i = _escape_end(pattern, i) if ch == "\\" else _class_end(pattern, i) if ch == "[" else i + 1
        frame[1] += 1
        frame[2] = 1
    while len(stack) > 1:  # (an unclosed group: `regex` refuses it, count it as closed)
        done = stack.pop()
        stack[-1][1] += max(1, done[0] + done[1])
    return stack[0][0] + stack[0][1]


def check_pattern(pattern: str) -> int:
    """The pattern's units, refused over MAX_PATTERN_UNITS, or over MAX_FILE_UNITS with the file's
    patterns measured before it (inside `file_patterns`)."""
    units = pattern_units(pattern)
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
    units = check_pattern(pattern)
    return regex.compile(pattern, flags, cache_pattern=units <= MAX_CACHED_UNITS)


__all__ = ["MAX_FILE_UNITS", "MAX_PATTERN_UNITS", "PatternTooLarge", "check_pattern", "compile_file_pattern",
           "file_patterns", "pattern_units"]
