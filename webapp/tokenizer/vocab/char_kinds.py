"""The kinds of character a split pattern tells apart, over every code point (for vocab/pieces.py).

A kind is the set of the pattern's atoms (character classes as written, case-folded or not) that
match a character, as bits. Here: every code point but the surrogates, which of them each atom
matches (scanned once per atom and kept: the scan of 1.1 million characters is the cost), the
kinds of a set of atoms, and one character of each kind per UTF-8 start. What it does not do:
read a pattern (pieces.py finds its atoms).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
import regex

from webapp.tokenizer.caches import BoundedCache


@lru_cache(maxsize=1)
def code_points() -> tuple[np.ndarray, str]:
    """Every code point but the surrogates, as uint32 and as one string: the same for every pattern."""
    codes = np.concatenate((np.arange(0xD800), np.arange(0xE000, 0x110000))).astype(np.uint32)
    return codes, codes.tobytes().decode("utf-32-le")


#: Each atom's runs, kept for every pattern holding the atom: at most 256 atoms and 16 MB (a class a file
#: writes may alternate over many code points; the usual ones take a few kB).
_RUNS: BoundedCache[tuple[str, bool], np.ndarray] = BoundedCache(
    256, 16 * 2**20, weigh=lambda _key, runs: runs.nbytes, name="vocab.atom_runs")


def _atom_runs(atom: str, fold: bool) -> np.ndarray:
    """Where the characters one atom matches lie in `code_points`: its runs' bounds in order (start, end,
    start, ...)."""
    found = _RUNS.get((atom, fold))
    if found is None:
        _, every = code_points()
        runs = regex.compile(f"(?:{atom})+", regex.IGNORECASE if fold else 0)
        found = np.array([bound for m in runs.finditer(every) for bound in m.span()], dtype=np.int64)
        _RUNS.put((atom, fold), found)
    return found


def atom_kinds(atoms: Sequence[tuple[str, bool]]) -> np.ndarray:
    """Each code point's kind: bit i set when atoms[i] matches it (int64, or Python ints past 62 atoms)."""
    size = len(code_points()[0])
    kind = np.zeros(size, dtype=object) if len(atoms) > 62 else np.zeros(size, dtype=np.int64)
    for bit, (atom, fold) in enumerate(atoms):
        bounds = _atom_runs(atom, fold)
        # (outside, inside, outside, ...: the stretches between the bounds, alternately)
        inside = np.repeat(np.arange(len(bounds) + 1) % 2 == 1, np.diff(bounds, prepend=0, append=size))
        kind[inside] += 1 << bit
    return kind


def first_by_start(codes: np.ndarray, kind: np.ndarray, every: str) -> dict[bytes, list[str]]:
    """Each UTF-8 start of two or three bytes -> the first character (in code point order) of each kind
    among the characters that start so, in that order."""
    if kind.dtype != object:
        return _first_by_start_numpy(codes, kind, every)
    out: dict[bytes, dict[object, str]] = {}
    for i in np.nonzero(codes >= 0x800)[0].tolist():
        ch = every[i]
        data = ch.encode("utf-8")
        for size in range(2, len(data)):
            out.setdefault(data[:size], {}).setdefault(kind[i], ch)
    return {start: list(kinds.values()) for start, kinds in out.items()}


def _first_by_start_numpy(codes: np.ndarray, kind: np.ndarray, every: str) -> dict[bytes, list[str]]:
    """`first_by_start`'s table (the same keys, lists and orders) by numpy: the loop over 1.1 million code
    points took about 1.7 s. Each (start, kind) pair keeps its first character in the loop's order (code
    point, then the 2-byte start before the 3-byte one); the table is filled in that order."""
    at = np.flatnonzero(codes >= 0x800)
    c = codes[at].astype(np.int64)
    four = c >= 0x10000
    lead = np.where(four, 0xF0 | (c >> 18), 0xE0 | (c >> 12))
    second = 0x80 | np.where(four, c >> 12, c >> 6) & 0x3F
    third = 0x80 | (c[four] >> 6) & 0x3F
    index = np.concatenate([at, at[four]])
    # (a start as a number: two bytes, or three with bit 24 set)
    keys = np.concatenate([lead << 8 | second, 1 << 24 | lead[four] << 16 | second[four] << 8 | third])
    order = np.concatenate([2 * c, 2 * c[four] + 1])
    kinds = kind[index]
    ranked = np.lexsort((order, kinds, keys))
    new_pair = np.ones(len(ranked), dtype=bool)
    new_pair[1:] = (keys[ranked][1:] != keys[ranked][:-1]) | (kinds[ranked][1:] != kinds[ranked][:-1])
    chosen = ranked[new_pair]
    chosen = chosen[np.argsort(order[chosen], kind="stable")]
    out: dict[bytes, list[str]] = {}
    for key, i in zip(keys[chosen].tolist(), index[chosen].tolist()):
        start = (key & 0xFFFFFF).to_bytes(3, "big") if key >> 24 else key.to_bytes(2, "big")
        out.setdefault(start, []).append(every[i])
    return out
