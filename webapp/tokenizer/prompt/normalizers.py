"""What an NFC-family normalizer lets appended text change at a text's end (the prompt-end proof's stage 2).

`normalizer_reach`: how many last characters may change; `held_back`: what the one character it holds back
may become; `compositions`: what a character composes into (docs/explain.md, "Where a prompt ends").
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any


def normalizer_reach(node: Any, text: str) -> int | None:
    """How many characters at the end of `text` appended text could change through the normalizer
    (None: a normalizer this proof does not follow)."""
    if not node:
        return 0
    kind = node.get("type")
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        at = _last_starter(text)
        if text and unicodedata.combining(text[at]):
            return len(text) - at  # (no starter at all: the first mark too may be reordered after an appended one)
        composes = kind in ("NFC", "NFKC") and at < len(text) and _composes_first(text[at])
        return len(text) - at if composes else max(len(text) - at - 1, 0)
    if kind in ("Lowercase", "Prepend"):
        return 0
    if kind == "Replace" and "String" in node.get("pattern", {}):
        return max(len(node["pattern"]["String"]) - 1, 0)
    if kind == "Strip" and not node.get("strip_right", True):
        return 0
    if kind == "SentencePiece" and not node.get("charsmap") and not node.get("remove_extra_whitespaces") \
            and not node.get("treat_whitespace_as_suffix"):
        return 0  # (escaping spaces and a dummy prefix change no character by what follows it)
    if kind == "Sequence":
        reaches = [normalizer_reach(child, text) for child in node.get("normalizers", [])]
        if any(r is None for r in reaches) or sum(1 for r in reaches if r) > 1:
            return None
        return max([r for r in reaches if r is not None], default=0)
    return None


def held_back(node: Any, model_text: str, fixed: int) -> list[str]:
    """What the character an NFC or NFKC normalizer holds back right after the kept text (the model's text's
    first `fixed` characters) may become in a longer text, when it is a starter and only marks follow it:
    itself or a character it composes into (marks after it are put in order, and the first it composes
    with joins it). Empty when that is not the case."""
    if fixed >= len(model_text) or not _only({"NFC", "NFKC"}, node):
        return []
    first, rest = model_text[fixed], model_text[fixed + 1:]
    if unicodedata.combining(first) or not all(unicodedata.combining(ch) for ch in rest):
        return []  # (a mark held back may be reordered after another one: anything may stand there)
    return [first, *compositions(first)]


def marks_follow(node: Any, text: str, model_text: str, reach: int, fixed: int) -> bool:
    """Does a mark (a character of nonzero combining class) stand right after the kept text (the model's
    text's first `fixed` characters) in every longer text? So it does when an NFC-family normalizer alone
    holds back the text's last `reach` characters and they are all marks: appended marks are put in order
    among them, so the first after the kept text's last starter is a mark (that starter composes with
    none: it would be held back too), and no mark starts a composition."""
    if not _only({"NFC", "NFKC", "NFD", "NFKD"}, node) or reach < 1 or fixed >= len(model_text):
        return False
    return all(unicodedata.combining(ch) for ch in text[len(text) - reach:] + model_text[fixed:])


@lru_cache(maxsize=1)
def marks() -> str:
    """Every character of nonzero combining class (each one's decompositions are such characters too)."""
    return "".join(chr(c) for c in range(0x110000) if unicodedata.combining(chr(c)))


def _only(kinds: set[str], node: Any) -> bool:
    """Is the normalizer made of these kinds alone (one, or a sequence of them)?"""
    found = {n.get("type") for n in (node.get("normalizers", []) if node and node.get("type") == "Sequence"
                                     else [node]) if n}
    return bool(found) and found <= kinds


def _last_starter(text: str) -> int:
    """The text's last starter (combining class 0) that does not compose with its left neighbour: no
    following character reorders anything before it, or composes with anything but it."""
    at = len(text)
    while at > 0:
        at -= 1
        ch = text[at]
        if unicodedata.combining(ch) == 0 and (at == 0 or len(unicodedata.normalize("NFC", text[at - 1:at + 1])) == 2):
            return at
    return 0


def _composes_first(ch: str) -> bool:
    """Can `ch` be the first of two characters that compose (a following character then changes it)?"""
    code = ord(ch)
    if 0x1100 <= code <= 0x1112 or 0xAC00 <= code <= 0xD7A3 and (code - 0xAC00) % 28 == 0:
        return True  # (a Hangul leading consonant takes a vowel; a syllable without a final takes one)
    return ch in _composition_firsts()


@lru_cache(maxsize=1)
def _composition_firsts() -> frozenset[str]:
    """Every character that begins a canonical composition (made once, from Python's Unicode tables)."""
    firsts = set()
    for code in range(0x110000):
        ch = chr(code)
        mapping = unicodedata.decomposition(ch)
        if mapping and not mapping.startswith("<") and len(mapping.split()) == 2 \
                and unicodedata.normalize("NFC", ch) == ch:  # (not excluded from composition)
            firsts.add(chr(int(mapping.split()[0], 16)))
    return frozenset(firsts)


@lru_cache(maxsize=1)
def _by_first() -> dict[str, list[str]]:
    """Every character with a canonical decomposition, by the first character of that decomposition."""
    out: dict[str, list[str]] = {}
    for code in range(0x110000):
        ch = chr(code)
        parts = unicodedata.normalize("NFD", ch)
        if parts != ch and not 0xD800 <= code < 0xE000 and unicodedata.normalize("NFC", ch) == ch:
            out.setdefault(parts[0], []).append(ch)
    return out


def compositions(ch: str) -> list[str]:
    """The characters `ch` composes into with marks after it (NFC: "e" + U+0301 is "é")."""
    own = unicodedata.normalize("NFD", ch)
    return [d for d in _by_first().get(own[0], []) if d != ch and unicodedata.normalize("NFD", d).startswith(own)
            and unicodedata.normalize("NFC", ch + unicodedata.normalize("NFD", d)[len(own):]) == d]


__all__ = ["compositions", "held_back", "marks", "marks_follow", "normalizer_reach"]
