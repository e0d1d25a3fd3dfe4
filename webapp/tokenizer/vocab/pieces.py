"""Can a text lie inside one piece of a split pattern? `inside_a_match(pattern)(text)`, proven when False.

The pattern (GPT-2's, cl100k's, o200k's: every character of a text is in some match, so
the pieces are exactly the matches) is read into a small automaton over character classes,
with every lookahead dropped and possessive or lazy quantifiers read as plain ones: it then
accepts every string any match can be, and more. `text` lies inside some match only if the
automaton, started in any state, can read it and still reach its end; when it cannot, no
piece of any text holds `text`, and merges never cross pieces.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import regex

Pred = Callable[[str], bool]


class _Automaton:
    def __init__(self) -> None:
        self.eps: list[list[int]] = []
        self.moves: list[list[tuple[Pred, int]]] = []

    def state(self) -> int:
        self.eps.append([])
        self.moves.append([])
        return len(self.eps) - 1


class _Reader:
    """A recursive-descent reader of the patterns' regex subset, building `_Automaton` fragments."""

    def __init__(self, pattern: str, auto: _Automaton) -> None:
        self.p, self.i, self.auto = pattern, 0, auto

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
