"""Can a text lie inside one piece of a split pattern? `inside_a_match(pattern)(text)`, proven when False.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Sequence

import numpy as np
import regex

from webapp.tokenizer.explain.alternatives import top_alternatives
from webapp.tokenizer.vocab.char_kinds import atom_kinds, code_points, first_by_start

Pred = Callable[[str], bool]


class _Automaton:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[Pred, int]]] = []
        self.atoms: set[tuple[str, bool]] = set()  # (each character class as written, case-folded?)

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1


class _Reader:
    """A recursive-descent reader of the patterns' regex subset, building `_Automaton` fragments."""

    def __init__(self, pattern: str, auto: _Automaton, reads: bool = False) -> None:
        self.p, self.i, self.auto = pattern, 0, auto
        self.reads = reads  # keep what a lookahead reads, as a branch that never continues the match

    def alt(self, fold: bool) -> tuple[int, int]:
        start, end = self.auto.state(), self.auto.state()
        while True:
            a, b = self.seq(fold)
            self.auto.eps[start].append(a)
            self.auto.eps[b].append(end)
            if self.i < len(self.p) and self.p[self.i] == "|":
                self.i += 1
                continue
            return start, end

    def seq(self, fold: bool) -> tuple[int, int]:
        start = cur = self.auto.state()
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            a, b = self.quantified(fold)
            self.auto.eps[cur].append(a)
            cur = b
        return start, cur

    def quantified(self, fold: bool) -> tuple[int, int]:
        at = self.i
        a, b = self.atom(fold)
        low, high = 1, 1
        if self.i < len(self.p) and self.p[self.i] in "?*+{":
            ch = self.p[self.i]
            if ch == "{":
                close = self.p.index("}", self.i)
                parts = self.p[self.i + 1:close].split(",")
                low = int(parts[0])
                high = int(parts[-1]) if parts[-1] else -1
                self.i = close + 1
            else:
                low, high = {"?": (0, 1), "*": (0, -1), "+": (1, -1)}[ch]
                self.i += 1
            if self.i < len(self.p) and self.p[self.i] in "?+":  # (lazy or possessive: read as plain)
                self.i += 1
        if (low, high) == (1, 1):
            return a, b
        end = self.i
        copies = [(a, b)] + [self._again(at, fold) for _ in range(max(low, 1, high if high > 0 else 1) - 1)]
        self.i = end
        start = cur = self.auto.state()
        for k, (x, y) in enumerate(copies):
            if k >= low:
                self.auto.eps[cur].append(y)  # (an optional copy may be skipped)
            self.auto.eps[cur].append(x)
            cur = y
        if high < 0:
            last = copies[-1]
            self.auto.eps[last[1]].append(last[0])  # (unbounded: the last copy repeats)
        if low == 0:
            self.auto.eps[start].append(cur)
        return start, cur

    def _again(self, at: int, fold: bool) -> tuple[int, int]:
        self.i = at
        return self.atom(fold)

    def atom(self, fold: bool) -> tuple[int, int]:
        p = self.p
        if p[self.i] == "(":
            self.i += 1
            look = False
            if p.startswith("?:", self.i):
                self.i += 2
            elif p.startswith("?i:", self.i):
                self.i += 3
                fold = True
            elif p[self.i:self.i + 2] in ("?!", "?="):
                self.i += 2
                look = True
            a, b = self.alt(fold)
            self.i += 1  # ")"
            if look and self.reads:  # (its characters are read, then the match goes on where it began)
                s = self.auto.state()
                self.auto.eps[s].append(a)
                return s, s
            if look:  # (a lookahead is dropped: the language only grows)
                s = self.auto.state()
                return s, s
            return a, b
        start = self.i
        if p[self.i] == "[":
            self.i += 1
            while p[self.i] != "]":
                self.i += 2 if p[self.i] == "\\" else 1
                if p[self.i - 1] == "p" and p[self.i - 2] == "\\" or p[self.i - 1] == "P" and p[self.i - 2] == "\\":
                    self.i = p.index("}", self.i) + 1
            self.i += 1
        elif p[self.i] == "\\":
            self.i += 2
            if p[self.i - 1] in "pP":
                self.i = p.index("}", self.i) + 1
        else:
            self.i += 1
        pred = _pred(p[start:self.i], fold)
        self.auto.atoms.add((p[start:self.i], fold))
        a, b = self.auto.state(), self.auto.state()
        self.auto.moves[a].append((pred, b))
        return a, b


@lru_cache(maxsize=256)
def _pred(atom: str, fold: bool) -> Pred:
    compiled = regex.compile(atom, regex.IGNORECASE if fold else 0)
    return lambda ch: compiled.fullmatch(ch) is not None


def _closure(auto: _Automaton, states: set[int]) -> set[int]:
    stack, seen = list(states), set(states)
    while stack:
        for nxt in auto.eps[stack.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return seen


@lru_cache(maxsize=8)
def inside_a_match(pattern: str) -> Callable[[str], bool]:
    """`text` -> can it lie inside some match of `pattern` (False is proven; see the module docstring)?"""
    _check_supported(pattern)
    auto = _Automaton()
    start, end = _Reader(pattern, auto).alt(False)
    back: dict[int, list[int]] = {}
    for q in range(len(auto.eps)):
        for t in auto.eps[q] + [t for _, t in auto.moves[q]]:
            back.setdefault(t, []).append(q)
    finishing = {end}
    stack = [end]
    while stack:
        for q in back.get(stack.pop(), ()):
            if q not in finishing:
                finishing.add(q)
                stack.append(q)
    everywhere = set(range(len(auto.eps)))

    def inside(text: str) -> bool:
        current = everywhere
        for ch in text:
            current = _closure(auto, {t for q in current for pred, t in auto.moves[q] if pred(ch)})
            if not current:
                return False
        return bool(current & finishing)
    return inside


#: The most (states, character) moves one pattern's `reach_of` keeps.
STEPS_KEPT = 50_000


class _Reach:
    """The states a match attempt can be in, with their moves on a character made once each (memoised)."""

    def __init__(self, pattern: str) -> None:
        _check_supported(pattern)
        self.auto = _Automaton()
        start, _ = _Reader(pattern, self.auto, reads=True).alt(False)
        self.start = frozenset(_closure(self.auto, {start}))
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}
        self.moving: dict[frozenset[int], bool] = {}
        self.pattern = pattern
        self.dfa: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        found = self.steps.get((states, ch))
        if found is None:
            if len(self.steps) > STEPS_KEPT:  # (bounded: a text of many distinct characters starts afresh)
                self.steps.clear()
            moved = {t for q in states for pred, t in self.auto.moves[q] if pred(ch)}
            found = self.steps[(states, ch)] = frozenset(_closure(self.auto, moved))
        return found

    def moves(self, states: frozenset[int]) -> bool:
        found = self.moving.get(states)
        if found is None:
            found = self.moving[states] = any(self.auto.moves[q] for q in states)
        return found

    def stops_before(self, text: str, start: int, end: int) -> bool:
        """Does every path of an attempt at `start` (lookaheads included) stop reading before `end`?"""
        states, at = self.start, start
        while self.moves(states):
            if at >= end:
                return False
            states = self.step(states, text[at])
            at += 1
        return True

    def all_stop_before(self, text: str, starts: Sequence[int], end: int) -> np.ndarray:
        """`stops_before` for every start at once: the attempts walk together, one character a round,
        through the automaton made deterministic over the kinds of character the pattern tells apart."""
        table, moving, kind_of = self._table()
        codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        kinds = kind_of[np.minimum(codes, len(kind_of) - 1)]
        at = np.asarray(starts, dtype=np.int64)
        state = np.zeros(len(at), dtype=np.int64)
        stopped = np.zeros(len(at), dtype=bool)
        walking = np.arange(len(at))
        while len(walking):
            on = moving[state[walking]]
            stopped[walking[~on]] = True
            walking = walking[on]
            walking = walking[at[walking] < end]  # (one that still moves at `end` reads past it: not stopped)
            state[walking] = table[state[walking], kinds[at[walking]]]
            at[walking] += 1
        return stopped

    def _table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(next state by state and kind, does a state move, each code point's kind), made once."""
        if self.dfa is None:
            codes, kind, every = _kinds(self.pattern)
            ids, first, inverse = np.unique(kind, return_index=True, return_inverse=True)
            kind_of = np.zeros(0x110000, dtype=np.int32)
            kind_of[codes] = inverse
            samples = [every[i] for i in first.tolist()]
            states: list[frozenset[int]] = [self.start]
            index = {self.start: 0}
            rows: list[list[int]] = []
            for current in states:  # (grows while new state sets appear)
                row = []
                for ch in samples:
                    nxt = self.step(current, ch)
                    if nxt not in index:
                        index[nxt] = len(states)
                        states.append(nxt)
                    row.append(index[nxt])
                rows.append(row)
            table = np.array(rows, dtype=np.int64)
            moving = np.array([self.moves(st) for st in states], dtype=bool)
            self.dfa = (table, moving, kind_of)
        return self.dfa


class Prefixes:
    """`prefixes(text)`: can some match of the pattern begin with `text`? (False is proven: lookaheads are
    dropped, so the automaton accepts every match and more.) `after` and `step` expose its states."""

    def __init__(self, pattern: str) -> None:
        _check_supported(pattern)
        self.auto = _Automaton()
        start, _ = _Reader(pattern, self.auto).alt(False)
        self.first = frozenset(_closure(self.auto, {start}))
        self.steps: dict[tuple[frozenset[int], str], frozenset[int]] = {}

    def step(self, states: frozenset[int], ch: str) -> frozenset[int]:
        found = self.steps.get((states, ch))
        if found is None:
            if len(self.steps) > STEPS_KEPT:
                self.steps.clear()
            moved = {t for q in states for pred, t in self.auto.moves[q] if pred(ch)}
            found = self.steps[(states, ch)] = frozenset(_closure(self.auto, moved))
        return found

    def after(self, text: str) -> frozenset[int]:
        """The states after reading `text` from the start (empty: no match begins so)."""
        states = self.first
        for ch in text:
            states = self.step(states, ch)
            if not states:
                break
        return states

    def __call__(self, text: str) -> bool:
        return bool(self.after(text))


@lru_cache(maxsize=8)
def match_prefix(pattern: str) -> Prefixes:
    """The `Prefixes` of `pattern`, made once."""
    return Prefixes(pattern)


def kinds_between(pattern: str, low: int, high: int) -> list[str]:
    """One character of each kind `pattern` tells apart (see `_kinds`) among the code points low..high."""
    codes, kind, every = _kinds(pattern)
    # (the bounds as uint32, as `codes` is: an int64 list would make numpy copy all 1.1 million codes to
    # int64 on every call; clipped first, which moves no bound across a code point)
    bounds = np.clip(np.array([low, high + 1], dtype=np.int64), 0, 0x110000).astype(np.uint32)
    a, b = codes.searchsorted(bounds).tolist()
    _, first = np.unique(kind[a:b], return_index=True)
    return [every[a + i] for i in first.tolist()]


def kinds_among(pattern: str, chars: str) -> list[str]:
    """One character of each kind `pattern` tells apart (see `_kinds`) among `chars`."""
    _, kind, _ = _kinds(pattern)
    out: dict[object, str] = {}
    for ch in chars:
        code = ord(ch)
        if not 0xD800 <= code < 0xE000:
            out.setdefault(kind[code - 0x800 if code >= 0xE000 else code], ch)
    return list(out.values())


@lru_cache(maxsize=64)  # (the prompt-end proof asks for each top-level alternative of a few patterns too)
def reach_of(pattern: str) -> Callable[[str, int, int], bool]:
    """`(text, start, end)` -> True when a match attempt of `pattern` at `start` reads no character at or past
    `end` (proven: the automaton keeps every path the engine may try and every character a lookahead
    reads), so text appended at `end` cannot change what the attempt finds."""
    return _reach(pattern).stops_before


def reaches_of(pattern: str) -> Callable[[str, Sequence[int], int], np.ndarray]:
    """`reach_of` for many starts at once: `(text, starts, end)` -> a bool array."""
    return _reach(pattern).all_stop_before


@lru_cache(maxsize=64)
def _reach(pattern: str) -> "_Reach":
    return _Reach(pattern)


def _check_supported(pattern: str) -> None:
    """A ValueError for anything outside the subset `_Reader` follows (anchors, lookbehinds, `.`, ...)."""
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if not in_class and pattern[i + 1:i + 2] in tuple("bBAzZG123456789"):
                raise ValueError(f"pattern: {pattern[i:i + 2]} is not read")
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch in "^$.":
            raise ValueError(f"pattern: {ch} is not read")
        elif ch == "(" and pattern[i + 1:i + 2] == "?" and not pattern.startswith(("(?:", "(?i:", "(?!", "(?="), i):
            raise ValueError("pattern: only (?: (?i: (?! (?= groups are read")
        i += 1


@lru_cache(maxsize=4)
def _kinds(pattern: str) -> tuple[np.ndarray, np.ndarray, str]:
    """(every code point but the surrogates, its kind: which of the pattern's classes hold it, as bits,
    those code points as one string; char_kinds.py)."""
    _check_supported(pattern)
    auto = _Automaton()
    _Reader(pattern, auto).alt(False)
    codes, every = code_points()
    return codes, atom_kinds(sorted(auto.atoms)), every


@lru_cache(maxsize=8)
def gapless(pattern: str) -> bool:
    """Is every character of every text inside some match (so the pieces are exactly the matches)?"""
    plain = [alt for alt in top_alternatives(pattern) if "(?=" not in alt and "(?!" not in alt]
    if not plain:
        return False
    compiled = regex.compile("|".join(f"(?:{alt})" for alt in plain))
    _, kind, every = _kinds(pattern)
    _, first = np.unique(kind, return_index=True)
    return all(compiled.match(every[i]) is not None for i in first.tolist())


@lru_cache(maxsize=4)
def _by_start(pattern: str) -> dict[bytes, list[str]]:
    return first_by_start(*_kinds(pattern))


def starting_with(pattern: str) -> Callable[[bytes], list[str]]:
    """`start` (a character's first two or three UTF-8 bytes) -> one character of each kind (see
    `_kinds`) among the characters whose UTF-8 starts so; none when no character does."""
    table = _by_start(pattern)
    return lambda start: table.get(start, [])
