"""Witnesses: a text whose encode holds a token that its own text does not give.

`find_witness(encode, token_id, data)` tries texts made of the token's bytes - completed to
whole characters when they are half of one (`completions`) - between a few characters
before and after (`AROUND`: a space, letters, digits, punctuation, line breaks, the
characters the split patterns treat apart), and returns the first whose encode holds the
token: checked by the same encode as everything else, so a witness is never a guess. None
when no tried text gives it (the caller then says "undecided" unless a proof says more).
"""

from __future__ import annotations

from itertools import islice, product
from typing import Callable, Iterator

Encode = Callable[[str], list[int]]

#: The characters tried before and after a token's text, the likelier first.
AROUND: tuple[str, ...] = (
    "", " ", "a", "M", "A", "1", ".", "<", "(", "\n", "'", "s", "x", "-", "/", "_", "!", "\t", "\r\n",
    "é", "中", "α", "\u3000", "\u00a0", "0", "#", "$", "\"", "?", ")", ">", "\\", "=", "*", ",",
)
#: The most texts tried for one token (about a millisecond each at worst).
BUDGET = 8_000
#: Cores (a half character's completions) tried in light contexts, and how many of them in all contexts.
CORES = 4_096
LIGHT_CORES = 64
FULL_CORES = 2
LIGHT: tuple[tuple[str, str], ...] = (("", ""), (" ", ""), ("", " "), ("a", ""), ("", "a"), ("1", ""), ("\n", ""))
_CONT = bytes(range(0x80, 0xC0))
_LEADS = {2: range(0xC2, 0xE0), 3: range(0xE0, 0xF0), 4: range(0xF0, 0xF5)}


def _needs(data: bytes) -> tuple[int, int]:
    """(continuation bytes at the start, continuation bytes missing at the end) of `data`."""
    start = len(data) - len(data.lstrip(_CONT))
    tail = 0
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte >= 0xC0:
            size = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            tail = max(0, size - back)
            break
        if byte < 0x80:
            break
    return start, tail


def completions(data: bytes) -> Iterator[str]:
    """Texts of whole characters whose UTF-8 holds `data` (itself when it is whole), fewest bytes first."""
    start, tail = _needs(data)
    if start == len(data):  # (only continuation bytes: inside one character, anywhere after its lead)
        heads = [(size, before) for size in (2, 3, 4) for before in range(size - start)]
    else:
        heads = [(size, size - 1 - start) for size in (2, 3, 4) if size - 1 >= start] if start else [(0, 0)]
    for size, before in heads:
        after = tail if start < len(data) else size - 1 - before - start
        if size and after < 0:
            continue
        leads = _LEADS.get(size, [None])
        for lead in leads:
            for fill in product(_CONT, repeat=(before if size else 0) + after):
                front = (bytes([lead]) if lead is not None else b"") + bytes(fill[:len(fill) - after])
                back = bytes(fill[len(fill) - after:])
                try:
                    yield (front + data + back).decode("utf-8")
                except UnicodeDecodeError:
                    continue


def cores(data: bytes, metaspace: bool) -> Iterator[str]:
    """The texts to put in context: the token's text (or its completions), and for a file that writes
    spaces as "\u2581" the text without its first space (the file's normalizer puts one back)."""
    seen: set[str] = set()
    for text in completions(data):
        for core in (text, text[1:] if metaspace and text.startswith(" ") else text):
            if core and core not in seen:
                seen.add(core)
                yield core


def _texts(data: bytes, metaspace: bool) -> Iterator[str]:
    """The texts tried: every core alone (up to `CORES`), the first `LIGHT_CORES` in a few light
    contexts, the first `FULL_CORES` between every pair of `AROUND`, then (half a character at the
    end) each core followed by one more character of the same block."""
    some: list[str] = []
    for core in islice(cores(data, metaspace), CORES):
        if len(some) < LIGHT_CORES:
            some.append(core)
        yield core
    for core in some[:LIGHT_CORES]:
        for before, after in LIGHT:
            yield before + core + after
    for core in some[:FULL_CORES]:
        for before, after in product(AROUND, AROUND):
            yield before + core + after
    if _needs(data)[1]:
        for core in some[:LIGHT_CORES]:
            last = core[-1].encode("utf-8")
            for cont in _CONT:
                try:
                    yield core + (last[:-1] + bytes([cont])).decode("utf-8")
                except UnicodeDecodeError:
                    continue


def find_witness(encode: Encode, token_id: int, data: bytes, metaspace: bool = False,
                 budget: int = BUDGET) -> str | None:
    """The first text tried whose encode holds the token (see the module docstring), or None."""
    seen: set[str] = set()
    for text in islice(_texts(data, metaspace), budget):
        if text in seen:
            continue
        seen.add(text)
        try:
            if token_id in encode(text):
                return text
        except ValueError:  # (a character-level vocab that lacks a symbol of this text)
            continue
    return None
