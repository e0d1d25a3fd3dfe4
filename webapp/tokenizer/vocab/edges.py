"""A token that ends inside a character: does that character always take its last byte first?

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from webapp.tokenizer.vocab.index import VocabIndex

#: The second bytes a lead byte allows (UTF-8: no overlong form, no surrogate, nothing past U+10FFFF).
_SECOND = {0xE0: range(0xA0, 0xC0), 0xED: range(0x80, 0xA0), 0xF0: range(0x90, 0xC0), 0xF4: range(0x80, 0x90)}


# (pair -> when it fires; left operand -> [(when, right operand)] in firing order)
Tables = tuple[dict[tuple[int, int], int], dict[int, list[tuple[int, int]]]]


def list_order_tables(rules: Iterable[tuple[int, int, int]]) -> Tables:
    """List order: each pair's and each left operand's first rule index (rows with new < 0 make nothing)."""
    pairs: dict[tuple[int, int], int] = {}
    for at, (left, right, new) in enumerate(rules):
        if new >= 0:
            pairs.setdefault((left, right), at)
    return pairs, _by_left(pairs)


def rank_tables(rules: Iterable[tuple[int, int, int]]) -> Tables:
    """The libraries' ranks: a pair's last listing is its rank; a left operand's lowest rank."""
    pairs: dict[tuple[int, int], int] = {}
    for rank, (left, right, _) in enumerate(rules):
        pairs[(int(left), int(right))] = rank
    return pairs, _by_left(pairs)


def _by_left(pairs: dict[tuple[int, int], int]) -> dict[int, list[tuple[int, int]]]:
    lefts: dict[int, list[tuple[int, int]]] = {}
    for (left, right), at in pairs.items():
        lefts.setdefault(left, []).append((at, right))
    for rules in lefts.values():
        rules.sort()
    return lefts


class LastByte:
    """`self(token)`: is the token's last byte always taken by its character first (module docstring)?"""

    def __init__(self, data: Mapping[int, bytes], byte_ids: Mapping[int, int], inside: Callable[[str], bool] | None,
                 tables: Callable[[], Tables], free_until: Callable[[int], int | None],
                 starting: Callable[[bytes], list[str]] | None = None) -> None:
        """`starting`: one character of each kind the split pattern tells apart, among those whose UTF-8
        starts with given bytes (pieces.starting_with)."""
        self.data = data
        self.starting = starting
        self.byte_ids = byte_ids
        self.inside = inside
        self.make_tables = tables
        self.free_until = free_until
        self._tables: Tables | None = None

    def _open_char(self, data: bytes) -> tuple[int, int, range] | None:
        """(where the unfinished last character starts, bytes it still lacks, the next byte's values), or
        None when the token ends with a whole character."""
        cut = len(data) - 1
        while cut >= 0 and len(data) - cut <= 4 and 0x80 <= data[cut] < 0xC0:
            cut -= 1
        if cut < 0 or not 0xC2 <= data[cut] <= 0xF4 or data[-1] not in self.byte_ids:
            return None
        lead = data[cut]
        missing = (2 if lead < 0xE0 else 3 if lead < 0xF0 else 4) - (len(data) - cut)
        if missing < 1:
            return None
        return cut, missing, _SECOND.get(lead, range(0x80, 0xC0)) if cut == len(data) - 1 else range(0x80, 0xC0)

    def __call__(self, token: int) -> bool:
        data = self.data[token]
        opened = self._open_char(data) if data else None
        if opened is None:
            return False
        cut, missing, nexts = opened
        until = self.free_until(token)  # (None for a lone byte: it is never merged into the token)
        if until is None and len(data) > 1:
            return False
        if self._tables is None:
            self._tables = self.make_tables()
        pairs, lefts = self._tables
        before = data[:cut].decode("utf-8", "replace")
        for second in nexts:
            try:  # (the byte completes the character: the character is known)
                char = (data[cut:] + bytes([second])).decode("utf-8") if missing == 1 else None
            except UnicodeDecodeError:
                continue  # (no character has these bytes)
            if self.inside is not None and "\ufffd" not in before:
                # (only a character that can follow the text before it in one piece)
                chars = [char] if char is not None else (
                    self.starting(data[cut:] + bytes([second])) if self.starting is not None else None)
                if chars is not None and not any(self.inside(before + ch) for ch in chars):
                    continue
            byte = self.byte_ids.get(second)
            if byte is None:
                return False
            taken = self._takers(lefts.get(byte, ()), before, char)
            if not (_first(pairs.get((self.byte_ids[data[-1]], byte)), taken, until)
                    or _first(pairs.get((token, byte)), taken, None)):
                return False
        return True

    def _takers(self, rules: Iterable[tuple[int, int]], before: str, char: str | None) -> int | None:
        """When the first rule (next byte, y) that can meet its y fires: after the byte that completes the
        character comes the next character's first byte (which the split pattern may rule out);
        else another continuation byte."""
        for at, right in rules:
            follow = self.data.get(right, b"")
            if not follow:
                continue
            if (0x80 <= follow[0] < 0xC0) != (char is None):
                continue  # (that byte can never be there)
            if char is not None and self.inside is not None and "\ufffd" not in before:
                try:
                    if not self.inside(before + char + follow.decode("utf-8")):
                        continue
                except UnicodeDecodeError:
                    pass  # (half a character: it may follow)
            return at
        return None


    def hints(self, token: int, most: int = 64) -> list[str]:
        """Texts where a rule takes the byte after the token's last one first (what keeps the proof
        from holding): the token's bytes, that byte, then what the rule joins it with."""
        data = self.data[token]
        opened = self._open_char(data) if data else None
        if opened is None:
            return []
        if self._tables is None:
            self._tables = self.make_tables()
        _, lefts = self._tables
        out: list[str] = []
        for second in opened[2]:
            for _, right in lefts.get(self.byte_ids.get(second, -1), ())[:4]:
                try:
                    out.append((data + bytes([second]) + self.data.get(right, b"")).decode("utf-8"))
                except UnicodeDecodeError:
                    continue
        return out[:most]


def _first(at: int | None, first_use: int | None, until: int | None) -> bool:
    """Does the pair firing at `at` (before `until`) find its second byte still lone (no rule taking that
    byte as a left operand fires before)?"""
    if at is None or (until is not None and at >= until):
        return False
    return first_use is None or first_use >= at


def tree_free_until(index: VocabIndex) -> Callable[[int], int | None]:
    """List order, a plain list: the visit that first merges the token's last byte is its merge tree's
    lowest node above that byte."""
    def free_until(token: int) -> int | None:
        node = index.tree(token)
        parent = None
        while node["children"]:
            parent, node = node, node["children"][-1]
        return index.rank(parent["id"]) if parent is not None else None
    return free_until
