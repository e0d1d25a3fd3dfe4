"""Fast exact splitting for a few known patterns: match over a string of character classes.

What it does not do: other patterns (the caller falls back to the `regex`
package), byte-level mapping or encoding.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from typing import Sequence

import numpy as np
import regex

#: Characters whose class is kept once worked out (the table stays bounded; a
#: character past it is classified again each time it is seen).
MAX_CLASSIFIED = 1 << 16
#: From this many characters the pieces are cut with numpy rather than sliced one by one.
NUMPY_CUT = 2048
#: From this many characters a text's classes are looked up with numpy rather than str.translate.
NUMPY_CLASSES = 256
_OTHER = "x"


class ClassTable(dict[int, int]):
    """`str.translate` table: code point -> the ordinal of its class letter, filled on demand."""

    def __init__(self, classes: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        # One alternative per class, in order: the first that matches names the character.
        self._find = regex.compile("|".join(f"({cls})" for _letter, cls in classes))
        self._letters = [ord(letter) for letter, _cls in classes]
        # The Basic Multilingual Plane's letters, 0 until classified (`classes`).
        self._letters_by_code = np.zeros(0x10000, dtype=np.uint8)
        for code in range(128):
            self[code]  # ASCII: classified now, so the table is never empty of the common case

    def __missing__(self, code: int) -> int:
        found = self._find.match(chr(code))
        letter = self._letters[found.lastindex - 1] if found is not None and found.lastindex else ord(_OTHER)
        if len(self) < MAX_CLASSIFIED:
            self[code] = letter
        return letter

    def classes(self, text: str) -> str:
        """`text.translate(self)`; from NUMPY_CLASSES characters of the Basic Multilingual Plane, with a
        numpy copy of the table (filled from the dict, so each character is still classified once)."""
        if len(text) < NUMPY_CLASSES:
            return text.translate(self)
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        if int(codes.max()) >= len(self._letters_by_code):
            return text.translate(self)
        letters = self._letters_by_code[codes]
        if not letters.all():  # (characters not classified yet: 0 in the copy)
            for code in np.unique(codes[letters == 0]).tolist():
                self._letters_by_code[code] = self[code]
            letters = self._letters_by_code[codes]
        return letters.tobytes().decode("ascii")


@dataclass
class ClassSplit:
    """A published pattern (or fused sequence of patterns) as classes and a pattern over their letters."""

    name: str
    classes: tuple[tuple[str, str], ...]  # (letter, `regex` class), first match wins; others are "x"
    letters_pattern: str  # over the letters; with its gap alternatives, it matches the whole text
    published: tuple[str, ...]  # the Split regexes it replaces, in order
    # A letter whose characters are always one-character pieces (Tekken's and Qwen's numbers): the
    # letters pattern matches their runs whole, which are then cut into characters (fewer matches).
    singles: str = ""
    _table: ClassTable | None = None
    _compiled: re.Pattern[str] | None = None

    def table(self) -> ClassTable:
        if self._table is None:
            self._table = _TABLES.get(self.classes) or _TABLES.setdefault(self.classes, ClassTable(self.classes))
        return self._table

    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.letters_pattern)
        return self._compiled

    def pieces(self, text: str) -> list[str]:
        """The pieces the published split(s) give, every match and gap its own piece, in order."""
        return self.pieces_of([text])[0] if text else []

    def pieces_of(self, texts: Sequence[str]) -> list[list[str]]:
        """`pieces` of each text, with one translation of them all and one `findall` call per text
        (`endpos` ends each: matching sees the end of its text there, as on the text alone)."""
        joined = "".join(texts)
        classes = self.table().classes(joined)
        bounds = list(accumulate(map(len, texts), initial=0))
        found = list(map(self.compiled().findall, repeat(classes), bounds, bounds[1:]))
        ends = list(accumulate(map(len, chain.from_iterable(found))))
        if joined and (len(joined) >= NUMPY_CUT or (self.singles and self.singles in classes)):
            flat, counts = self._cut(joined, classes, ends, bounds)
        else:
            flat = [joined[a:b] for a, b in zip([0, *ends], ends)]
            counts = list(accumulate(map(len, found), initial=0))
        return [flat[a:b] for a, b in zip(counts, counts[1:])]

    def piece_ends(self, texts: Sequence[str]) -> tuple[str, np.ndarray, list[int]]:
        """`pieces_of` as offsets, for a caller that cuts another spelling of the text: (the texts
        joined, where each piece ends in it (int64 character offsets, all texts' pieces in a row),
        how many pieces come before each text, then in all)."""
        joined = "".join(texts)
        classes = self.table().classes(joined)
        bounds = list(accumulate(map(len, texts), initial=0))
        found = list(map(self.compiled().findall, repeat(classes), bounds, bounds[1:]))
        ends = np.fromiter(accumulate(map(len, chain.from_iterable(found))), dtype=np.int64)
        if self.singles and self.singles in classes:  # (each character of those runs a piece)
            last = np.zeros(len(joined), dtype=bool)
            last[ends - 1] = True
            last |= np.frombuffer(classes.encode("ascii"), dtype=np.uint8) == ord(self.singles)
            before = np.cumsum(last)
            return joined, np.flatnonzero(last) + 1, [0, *(int(before[b - 1]) if b else 0 for b in bounds[1:])]
        return joined, ends, list(accumulate(map(len, found), initial=0))

    def _cut(self, joined: str, classes: str, ends: list[int], bounds: list[int]) -> tuple[list[str], list[int]]:
        """The pieces (all texts' in a row) and where each text's start, from the matches' `ends`.
        Runs of the `singles` class were matched whole: each of their characters is a piece of its
        own. With numpy: a NUL is written after every piece's last character and the string split
        there, cheaper than a slice per piece (texts holding a NUL: by slicing)."""
        n = len(joined)
        last = np.zeros(n, dtype=bool)  # the last character of a piece
        last[np.array(ends, dtype=np.int64) - 1] = True
        if self.singles:
            last |= np.frombuffer(classes.encode("ascii"), dtype=np.uint8) == ord(self.singles)
        before = np.cumsum(last)  # pieces ended up to and including each character
        counts = [0, *(int(before[b - 1]) if b else 0 for b in bounds[1:])]
        if "\x00" in joined:
            flat: list[str] = []
            for a, b in zip([0, *ends], ends):
                piece = joined[a:b]
                if self.singles and classes[a] == self.singles:
                    flat.extend(piece)
                else:
                    flat.append(piece)
            return flat, counts
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        out = np.zeros(n + int(before[-1]), dtype=np.uint32)
        out[np.arange(n) + before - last] = codes  # (each character moves right by the NULs before it)
        flat = out.tobytes().decode("utf-32-le", "surrogatepass").split("\x00")
        flat.pop()  # (after the last NUL)
        return flat, counts


# The tables by their classes: splits with the same partition share one.
_TABLES: dict[tuple[tuple[str, str], ...], ClassTable] = {}


def _gaps(alternatives: str, worlds: Sequence[str]) -> str:
    """Gap alternatives: runs of characters where no alternative matches, one per world (a set of letters)."""
    return "|".join(f"(?:(?!{alternatives}){world})+" for world in worlds)


# --------------------------------------------------------------------------
# mistral-common's Tekken pattern (tekken_240911.json)

TEKKEN_PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
# r \r, n \n, " " space, s other whitespace, U Lu/Lt, l Ll, b Lm/Lo, M marks, d numbers, / itself, x the rest.
_TEKKEN_ALTS = (
    r"[^rnUlbd]?[UbM]*[lbM]+|[^rnUlbd]?[UbM]+[lbM]*|d+| ?[^ srnUlbd]+[rn/]*|[ srn]*[rn]+|[ srn]+(?![^ srn])|[ srn]+"
)
TEKKEN = ClassSplit(
    "tekken",
    (("r", r"\r"), ("n", r"\n"), (" ", " "), ("s", r"\s"), ("U", r"[\p{Lu}\p{Lt}]"), ("l", r"\p{Ll}"),
     ("b", r"[\p{Lm}\p{Lo}]"), ("M", r"\p{M}"), ("d", r"\p{N}"), ("/", "/")),
    # (every character starts a match: "x", "/" and marks by the punctuation or letter
    # alternatives; the gap alternative is there so the pieces cover the text whatever happens)
    _TEKKEN_ALTS + "|" + _gaps(_TEKKEN_ALTS, ["(?s:.)"]),
    (TEKKEN_PATTERN,),
    singles="d",  # (\p{N} alone: no other alternative takes a number, so a run of them is single ones)
)

# --------------------------------------------------------------------------
# DeepSeek-V3's pre-tokenizer: three Isolated Splits (then ByteLevel)

DEEPSEEK_V3_PATTERNS = (
    r"\p{N}{1,3}",
    r"[一-龥぀-ゟ゠-ヿ]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
    "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
)
_CJK = "[一-龥぀-ゟ゠-ヿ]"
# d numbers; CJK: C letter, K mark, Q punctuation/symbol, X other; outside it: r \r, n \n,
# " " space, s other whitespace, a ASCII letter, p ASCII punctuation, L letter, M mark,
# P punctuation/symbol, x the rest.
_DEEPSEEK_ALTS = (
    r"d{1,3}"
    r"|[KX]?[CK]+|Q+"
    r"|pa+|[^rnaLpPdCKQX]?[aLM]+| ?[pP]+[rn]*|[ srn]*[rn]+|[ srn]+(?![^ srndCKQX])|[ srn]+"
)
DEEPSEEK_V3 = ClassSplit(
    "deepseek_v3",
    (("d", r"\p{N}"), ("C", rf"(?={_CJK})\p{{L}}"), ("K", rf"(?={_CJK})\p{{M}}"),
     ("Q", rf"(?={_CJK})[\p{{P}}\p{{S}}]"), ("X", _CJK),
     ("r", r"\r"), ("n", r"\n"), (" ", " "), ("s", r"\s"), ("a", "[A-Za-z]"),
     ("p", "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~]"), ("L", r"\p{L}"), ("M", r"\p{M}"),
     ("P", r"[\p{P}\p{S}]")),
    _DEEPSEEK_ALTS + "|" + _gaps(_DEEPSEEK_ALTS, ["[^CKQX]", "[CKQX]"]),
    DEEPSEEK_V3_PATTERNS,
)

# --------------------------------------------------------------------------
# cl100k's pattern (Llama 3's), its one-digit form (Qwen's) and o200k's (gpt-oss's)

CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN_PATTERN = CL100K_PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""", r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""", r"""\s*[\r\n]+""", r"""\s+(?!\S)""", r"""\s+""",
])
# One partition serves the three. The contractions' letters keep their own letter, by case:
# "s" for the characters (?i:s) matches that are Ll (s, and the long s U+017F), "S" for the
# others (S), and so on for t r e v m l d; then U other Lu/Lt, a other Ll, o Lm/Lo, k marks,
# 0 numbers, ' the apostrophe, \r \n space and \t (other whitespace) for themselves, / itself,
# x the rest. (Every character (?i:x) matches is a letter: the tests check it.)
_WORD_CLASSES = (
    ("\r", r"\r"), ("\n", r"\n"), (" ", " "), ("\t", r"\s"), ("/", "/"), ("'", "'"),
    *((x, rf"(?=\p{{Ll}})(?i:{x})") for x in "strevmld"),
    *((x.upper(), rf"(?i:{x})") for x in "strevmld"),
    ("U", r"[\p{Lu}\p{Lt}]"), ("a", r"\p{Ll}"), ("o", r"[\p{Lm}\p{Lo}]"), ("k", r"\p{M}"), ("0", r"\p{N}"),
)
_L = "strevmldSTREVMLDUao"  # \p{L}
_UPPERISH = "STREVMLDUok"  # [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]
_LOWERISH = "strevmldaok"  # [\p{Ll}\p{Lm}\p{Lo}\p{M}]
_CONTRACTION = "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]"
_WS_ALTS = r"[ \t\r\n]*[\r\n]+|[ \t\r\n]+(?![^ \t\r\n])|[ \t\r\n]+"


def _cl100k_alts(numbers: str) -> str:
    return (f"{_CONTRACTION}|[^\r\n{_L}0]?[{_L}]+|{numbers}| ?[^ \t\r\n{_L}0]+[\r\n]*|{_WS_ALTS}")


_O200K_ALTS = (
    f"[^\r\n{_L}0]?[{_UPPERISH}]*[{_LOWERISH}]+(?:{_CONTRACTION})?"
    f"|[^\r\n{_L}0]?[{_UPPERISH}]+[{_LOWERISH}]*(?:{_CONTRACTION})?"
    f"|0{{1,3}}| ?[^ \t\r\n{_L}0]+[\r\n/]*|{_WS_ALTS}"
)
# (each of these matches every character, as Tekken's does; the gap alternative is for safety)
CL100K = ClassSplit("cl100k", _WORD_CLASSES, _cl100k_alts("0{1,3}") + "|" + _gaps(_cl100k_alts("0{1,3}"), ["(?s:.)"]),
                    (CL100K_PATTERN,))
QWEN = ClassSplit("qwen", _WORD_CLASSES, _cl100k_alts("0+") + "|" + _gaps(_cl100k_alts("0+"), ["(?s:.)"]), (QWEN_PATTERN,),
                  singles="0")  # (as Tekken's: \p{N} alone, and no other alternative takes a number)
O200K = ClassSplit("o200k", _WORD_CLASSES, _O200K_ALTS + "|" + _gaps(_O200K_ALTS, ["(?s:.)"]), (O200K_PATTERN,))

KNOWN: tuple[ClassSplit, ...] = (TEKKEN, DEEPSEEK_V3, CL100K, QWEN, O200K)


def known_split(patterns: Sequence[str]) -> ClassSplit | None:
    """The ClassSplit doing exactly these Isolated Split regexes one after another, or None."""
    for split in KNOWN:
        if tuple(patterns) == split.published:
            return split
    return None


__all__ = ["CL100K", "DEEPSEEK_V3", "KNOWN", "O200K", "QWEN", "TEKKEN", "ClassSplit", "ClassTable", "known_split"]
