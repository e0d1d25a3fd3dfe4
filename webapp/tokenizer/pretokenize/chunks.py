"""Fast, exact pre-tokenization: cut the text into chunks the pattern never crosses, split each.

What it does not do: the "none" scheme (no split), BPE, byte offsets.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import re
from typing import Any

import regex

from webapp.tokenizer.pretokenize.class_split import TEKKEN, ClassSplit
from webapp.tokenizer.pretokenize.patterns import PATTERNS, check_scheme

_WS = r"\t\n\v\f\r "  # the regex package's \s, restricted to ASCII
_CONTRACTION_ASCII = r"'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])"

_ASCII_SOURCES: dict[str, str] = {
    "gpt2": (
        r"'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+"
        rf"| ?[^{_WS}A-Za-z0-9]+|[{_WS}]+(?![^{_WS}])|[{_WS}]+"
    ),
    "cl100k": (
        rf"{_CONTRACTION_ASCII}|[^\r\nA-Za-z0-9]?[A-Za-z]+|[0-9]{{1,3}}"
        rf"| ?[^{_WS}A-Za-z0-9]+[\r\n]*|[{_WS}]*[\r\n]+|[{_WS}]+(?![^{_WS}])|[{_WS}]+"
    ),
    "o200k": (
        rf"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?:{_CONTRACTION_ASCII})?"
        rf"|[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?:{_CONTRACTION_ASCII})?"
        rf"|[0-9]{{1,3}}| ?[^{_WS}A-Za-z0-9]+[\r\n/]*|[{_WS}]*[\r\n]+|[{_WS}]+(?![^{_WS}])|[{_WS}]+"
    ),
}
ASCII_PATTERNS: dict[str, re.Pattern[str]] = {name: re.compile(source) for name, source in _ASCII_SOURCES.items()}
_FULL: dict[str, regex.Pattern[str]] = {name: regex.compile(pattern) for name, pattern in PATTERNS.items()}

#: Known patterns split over character classes, by the scheme name encoding uses for them.
CLASS_SPLITS: dict[str, ClassSplit] = {TEKKEN.name: TEKKEN}

# Where a chunk may end: (pattern, cut after the match?) - see the module docstring.
_CUTS: dict[str, tuple[Any, bool]] = {
    "gpt2": (regex.compile(r"\n(?=\S)"), False),
    "cl100k": (regex.compile(r"\n(?=\S)"), True),
    "o200k": (regex.compile(r"\n(?=[^\s/])"), True),
}
_CUTS[TEKKEN.name] = _CUTS["o200k"]


# split_strided: characters between the cuts it looks for (a cut then ends the stretch).
STRIDE = 1 << 13

_ASCII_CUTS: dict[str, re.Pattern[str]] = {
    "gpt2": re.compile(rf"\n(?=[^{_WS}])"),
    "cl100k": re.compile(rf"\n(?=[^{_WS}])"),
    "o200k": re.compile(rf"\n(?=[^{_WS}/])"),
}
_ASCII_CUTS[TEKKEN.name] = _ASCII_CUTS["o200k"]


def chunk_bounds(text: str, scheme: str) -> list[int]:
    """0, every cut (a character offset), len(text); [0] for an empty text.

    Unknown patterns (a scheme this module has no proof for) get no cuts.
    """
    n = len(text)
    if not n:
        return [0]
    cut = _CUTS.get(scheme)
    if cut is None:
        return [0, n]
    finder, after = cut
    if "\n" not in text:  # (every cut pattern matches at a newline: no regex run for a text without one)
        return [0, n]
    if text.isascii():  # the same cuts with `re` and \S spelled out for ASCII: faster
        finder = _ASCII_CUTS[scheme]
    offsets = [m.end() for m in finder.finditer(text)] if after else [m.start() for m in finder.finditer(text)]
    bounds = [0]
    bounds.extend(offset for offset in offsets if 0 < offset < n)
    bounds.append(n)
    return bounds


def split_chunk(chunk: str, scheme: str) -> list[str]:
    """The pre-tokens of one chunk (or any text): ASCII fast form when it applies."""
    classes = CLASS_SPLITS.get(scheme)
    if classes is not None:
        return classes.pieces(chunk)
    fast = ASCII_PATTERNS.get(scheme)
    if fast is not None and chunk.isascii():
        pretokens: list[str] = fast.findall(chunk)
        return pretokens
    full = _FULL.get(scheme)
    if full is None:
        check_scheme(scheme)
        return [chunk] if chunk else []  # "none"
    found: list[str] = full.findall(chunk)
    return found


def split_chunks(chunks: list[str], scheme: str) -> list[list[str]]:
    """`split_chunk` of each chunk; all-ASCII chunks in one C-level map over the fast form."""
    classes = CLASS_SPLITS.get(scheme)
    if classes is not None:
        return classes.pieces_of(chunks)
    fast = ASCII_PATTERNS.get(scheme)
    if fast is not None and "".join(chunks).isascii():
        return list(map(fast.findall, chunks))
    return [split_chunk(chunk, scheme) for chunk in chunks]


def split_strided(text: str, scheme: str, stride: int = STRIDE) -> list[str]:
    """All pre-tokens of `text` (equal to the published pattern's findall), for long texts."""
    fast = ASCII_PATTERNS.get(scheme)
    if fast is not None and text.isascii():
        pretokens: list[str] = fast.findall(text)
        return pretokens
    cut = _CUTS.get(scheme)
    if cut is None:
        return split_chunk(text, scheme)
    finder, after = cut
    n = len(text)
    out: list[str] = []
    start = 0
    while start < n:
        end = n
        if start + stride < n:
            match = finder.search(text, start + stride)
            if match is not None:
                end = match.end() if after else match.start()
        out.extend(split_chunk(text[start:end], scheme))
        start = end
    return out


def split_text(text: str, scheme: str) -> list[str]:
    """All pre-tokens of `text`, chunk by chunk; equal to the published pattern's findall."""
    if text.isascii():
        return split_chunk(text, scheme)  # one C call: cuts would only add work
    bounds = chunk_bounds(text, scheme)
    out: list[str] = []
    for start, end in zip(bounds, bounds[1:]):
        out.extend(split_chunk(text[start:end], scheme))
    return out


__all__ = ["ASCII_PATTERNS", "CLASS_SPLITS", "STRIDE", "chunk_bounds", "split_chunk", "split_chunks", "split_strided", "split_text"]
