"""What an NFC-family normalizer lets appended text change at a text's end (the prompt-end proof's stage 2).

`normalizer_reach`: how many last characters may change; `held_back`: what the one character it holds back
may become (`mark_after`: with a mark after it); `compositions`: what a character composes into
(docs/explain.md, "Where a prompt ends").
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any, Literal


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
        composes = kind in ("NFC", "NFKC") and at < len(text) and not _stays(kind, text[at:])
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
    itself or a character its base composes into with the marks, existing and appended (`futures`). Empty
    when that is not the case."""
    if fixed >= len(model_text) or not _only({"NFC", "NFKC"}, node):
        return []
    first, rest = model_text[fixed], model_text[fixed + 1:]
    if unicodedata.combining(first) or not all(unicodedata.combining(ch) for ch in rest):
        return []  # (a mark held back may be reordered after another one: anything may stand there)
    return futures(first, rest)


def futures(first: str, rest: str, decomposed: Literal["NFD", "NFKD"] = "NFD") -> list[str]:
    """What a starter followed by the marks `rest` may be in the normal form of a longer text (itself first):
    alone, itself or a character it composes into (NFC: "e" + U+0301 is "é"); before marks, see `_paths`."""
    run = unicodedata.normalize(decomposed, first + rest)
    if len(run) < 2 or any(not unicodedata.combining(ch) for ch in run[1:]) or unicodedata.combining(run[0]):
        return [first, *compositions(first)]  # (and Hangul: only a neighbour composes)
    found, _ = _paths(run[0], run[1:])
    return [first, *(ch for ch in found if ch != first)]


@lru_cache(maxsize=256)
def _paths(base: str, run: str) -> tuple[tuple[str, ...], bool]:
    """(what `base` followed by the marks `run` (canonical order) may compose into once marks are appended,
    may every mark of `run` be composed). Canonical ordering puts the appended marks of a class after the
    run's; the composition takes the classes in order, and a mark is blocked from the starter by one left
    between them of class 0 or of a class at least its own (Unicode): so the run's first mark of a class
    is never blocked, and one left uncomposed blocks every later mark of its class."""
    states = {(base, True)}  # (the starter so far, every mark of the run composed)
    for kind in sorted({unicodedata.combining(ch) for ch in run} | _pair_classes()):
        mine = [ch for ch in run if unicodedata.combining(ch) == kind]
        after: set[tuple[str, bool]] = set()
        for starter, whole in states:
            left = False
            for mark in mine:
                made = None if left else _pairs().get(starter, {}).get(mark)
                starter, left = (starter, True) if made is None else (made, left)
            after.add((starter, whole and not left))
            if not left:  # (appended marks of this class: any chain of compositions)
                after |= {(ch, whole) for ch in _closure(starter, kind)}
        states = after
    found = dict.fromkeys(sorted(starter for starter, _ in states))
    for starter, whole in sorted(states):
        if whole:  # (then an appended starter stands next to it: anything may follow)
            found.update(dict.fromkeys(_closure(starter, None)))
    return tuple(found), any(whole for _, whole in states)


def _closure(starter: str, kind: int | None) -> list[str]:
    """Every character `starter` composes into with marks of this class (None: any characters) in a row."""
    out, todo = [], [starter]
    while todo:
        for mark, made in _pairs().get(todo.pop(), {}).items():
            if (kind is None or unicodedata.combining(mark) == kind) and made not in out:
                out.append(made)
                todo.append(made)
    return out


@lru_cache(maxsize=1)
def _pairs() -> dict[str, dict[str, str]]:
    """Every canonical composition of two characters (not excluded), by its first, then its second."""
    out: dict[str, dict[str, str]] = {}
    for code in range(0x110000):
        mapping = unicodedata.decomposition(chr(code))
        if mapping and not mapping.startswith("<") and len(mapping.split()) == 2 \
                and unicodedata.normalize("NFC", chr(code)) == chr(code):
            first, second = (chr(int(part, 16)) for part in mapping.split())
            out.setdefault(first, {})[second] = chr(code)
    return out


@lru_cache(maxsize=1)
def _pair_classes() -> frozenset[int]:
    return frozenset(unicodedata.combining(m) for seconds in _pairs().values() for m in seconds) - {0}


def _stays(kind: Literal["NFC", "NFKC"], run: str) -> bool:
    """Does the starter beginning `run` (then marks) stand as itself in the normal form of every longer text?
    It does when it does in the run's own and it has no other future ("5"; "か" before U+309A: blocked)."""
    first = run[0]
    if len(run) < 2 and _composes_first(first) or unicodedata.normalize(kind, first) != first \
            or not unicodedata.normalize(kind, run).startswith(first):
        return False  # ("é" alone may still become "ẹ": U+0323 is put before its U+0301)
    return futures(first, run[1:], "NFKD" if kind == "NFKC" else "NFD") == [first]


def mark_after(model_text: str, fixed: int, held: list[str]) -> bool:
    """Does a mark stand right after the held-back starter (at `fixed`), whatever it becomes (`held`)? It does
    when no future composes every mark after it (`_paths`): one is left there."""
    run = unicodedata.normalize("NFD", model_text[fixed:])
    if not held or len(run) < 2 or any(not unicodedata.combining(ch) for ch in run[1:]) \
            or unicodedata.combining(run[0]):
        return False
    return not _paths(run[0], run[1:])[1]


def marks_follow(node: Any, text: str, model_text: str, reach: int, fixed: int) -> bool:
    """Does a mark (a character of nonzero combining class) stand right after the kept text (the model's
    text's first `fixed` characters) in every longer text? So it does when an NFC-family normalizer alone
    holds back the text's last `reach` characters and they are all marks: appended marks are put in order
    among them, so the first after the kept text's last starter is a mark (that starter composes with
    none, or only blocked: it would be held back too), and no mark starts a composition."""
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


__all__ = ["compositions", "futures", "held_back", "mark_after", "marks", "marks_follow", "normalizer_reach"]
