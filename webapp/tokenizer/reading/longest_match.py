"""The longest of a set of keys starting at a position of a text, in time linear in the text.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

#: Trie steps a scanner takes per item of its text (plus WALK_SLACK) before it builds its table.
WALK_FACTOR = 8
WALK_SLACK = 4_096
_END = object()  # (the trie key of a whole key: no item is this object)


class Keys:
    """A set of keys, each with a value (what `Scanner.longest` answers with it); the first of equal keys wins."""

    def __init__(self, keys: Iterable[tuple[Sequence[Any], Any]]) -> None:
        self.trie: dict[Any, Any] = {}
        self._items: list[tuple[Sequence[Any], Any]] = []
        for key, value in keys:
            if not key:
                continue
            node = self.trie
            for item in key:
                node = node.setdefault(item, {})
            if _END not in node:
                node[_END] = value
                self._items.append((key, value))
        self._reverse: tuple[list[dict[Any, int]], list[int], list[int]] | None = None

    def __bool__(self) -> bool:
        return bool(self.trie)

    def first_items(self) -> list[Any]:
        return [item for item in self.trie if item is not _END]

    def scanner(self, text: Sequence[Any]) -> Scanner:
        return Scanner(self, text)

    def reverse_automaton(self) -> tuple[list[dict[Any, int]], list[int], list[int]]:
        """(goto, fail, longest key ending here) of the reversed keys' Aho-Corasick automaton, made once."""
        if self._reverse is None:
            goto: list[dict[Any, int]] = [{}]
            whole = [0]
            for key, _value in self._items:
                state = 0
                for item in reversed(key):
                    nxt = goto[state].get(item)
                    if nxt is None:
                        nxt = len(goto)
                        goto[state][item] = nxt
                        goto.append({})
                        whole.append(0)
                    state = nxt
                whole[state] = len(key)
            fail = [0] * len(goto)
            longest = list(whole)
            queue = list(goto[0].values())  # (their failure is the root)
            for state in queue:  # (breadth first: a state's failure is shallower, so already done)
                for item, child in goto[state].items():
                    f = fail[state]
                    while f and item not in goto[f]:
                        f = fail[f]
                    fail[child] = goto[f].get(item, 0)
                    longest[child] = whole[child] or longest[fail[child]]
                    queue.append(child)
            self._reverse = (goto, fail, longest)
        return self._reverse


class Scanner:
    """`longest(i)`: (length, value) of the longest key starting at text[i], or None."""

    def __init__(self, keys: Keys, text: Sequence[Any]) -> None:
        self.keys = keys
        self.text = text
        self.steps_left = WALK_FACTOR * len(text) + WALK_SLACK
        self.table: list[int] | None = None

    def longest(self, start: int) -> tuple[int, Any] | None:
        if self.table is not None:
            size = self.table[start]
            return (size, self._value(start, size)) if size else None
        text, node = self.text, self.keys.trie
        best: tuple[int, Any] | None = None
        i = start
        while i < len(text):
            child = node.get(text[i])
            if child is None:
                break
            node = child
            i += 1
            if _END in node:
                best = (i - start, node[_END])
        self.steps_left -= i - start + 1
        if self.steps_left < 0:  # (walks this long can be quadratic: one linear pass from now on)
            self.table = self._build_table()
        return best

    def _value(self, start: int, size: int) -> Any:
        node = self.keys.trie
        for item in self.text[start:start + size]:
            node = node[item]
        return node[_END]

    def _build_table(self) -> list[int]:
        """The length of the longest key at every position: one pass over the reversed text."""
        goto, fail, longest = self.keys.reverse_automaton()
        text = self.text
        table = [0] * len(text)
        state = 0
        for j in range(len(text) - 1, -1, -1):
            item = text[j]
            while state and item not in goto[state]:
                state = fail[state]
            state = goto[state].get(item, 0)
            table[j] = longest[state]
        return table


__all__ = ["Keys", "Scanner", "WALK_FACTOR", "WALK_SLACK"]
