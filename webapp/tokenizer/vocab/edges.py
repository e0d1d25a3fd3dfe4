"""A token that ends with a character's lead byte: does that character always take the byte first?

List order, a plain rule list (forms.plain). If token t ends with a lead byte L, every text
follows L with a continuation byte c1 of the same character. Say t appears: then (forms.py's
argument) its span evolves as its bytes merged alone, so L is a lone symbol until the visit
that first merges it there (`free_until`, read from t's merge tree) and never pairs with c1.
But the visit of a rule (L, c1) before that finds L lone and, unless c1 was already taken by
a rule (c1, x) visited earlier (c1's left neighbour is L, so only such a rule can take it),
merges L with c1 across the span's end: a contradiction. Or, later: once t is made, a rule
(t, c1) visited before any rule (c1, x) finds both lone and side by side (unless t was taken
already) and takes t: t is not a final token. So when one of the two holds for every c1
that can follow (a character's second byte; with a split pattern, only those whose character
can follow the token's text inside one piece), no text gives t. `LastByte(index, inside)(t)`.
"""

from __future__ import annotations

from typing import Callable

from webapp.tokenizer.vocab.index import VocabIndex

#: The second bytes a lead byte allows (UTF-8: no overlong form, no surrogate, nothing past U+10FFFF).
_SECOND = {0xE0: range(0xA0, 0xC0), 0xED: range(0x80, 0xA0), 0xF0: range(0x90, 0xC0), 0xF4: range(0x80, 0x90)}


class LastByte:
    """`self(token)`: is the token's last byte always taken by its character first (module docstring)?"""

    def __init__(self, index: VocabIndex, byte_ids: dict[int, int], inside: Callable[[str], bool] | None) -> None:
        self.index = index
        self.byte_ids = byte_ids  # byte -> its file id
        self.inside = inside
        self._pairs: dict[tuple[int, int], int] | None = None
        self._lefts: dict[int, int] = {}

    def _tables(self) -> dict[tuple[int, int], int]:
        if self._pairs is None:  # (made on first use: the first rule index of each pair and of each left operand)
            pairs: dict[tuple[int, int], int] = {}
            for at, (left, right, new) in enumerate(self.index.rules.tolist()):
                if new >= 0:
                    pairs.setdefault((left, right), at)
                    self._lefts.setdefault(left, at)
            self._pairs = pairs
        return self._pairs

    def free_until(self, token: int) -> int | None:
        """The visit that first merges the token's last byte with what is before it (its merge tree)."""
        node = self.index.tree(token)
        parent = None
        while node["children"]:
            parent, node = node, node["children"][-1]
        return self.index.rank(parent["id"]) if parent is not None else None

    def __call__(self, token: int) -> bool:
        data = self.index.data[token]
        lead = data[-1] if data else 0
        if not 0xC2 <= lead <= 0xF4:
            return False
        until = self.free_until(token)
        if until is None:
            return False
        pairs = self._tables()
        before = data[:-1].decode("utf-8", "replace")
        for second in _SECOND.get(lead, range(0x80, 0xC0)):
            if self.inside is not None and lead < 0xE0 and "\ufffd" not in before:
                # (a two-byte character: with a split pattern, only one that can follow the text in a piece)
                if not self.inside(before + bytes([lead, second]).decode("utf-8")):
                    continue
            if not (self._taken_first(pairs.get((self.byte_ids[lead], self.byte_ids[second])), second, until)
                    or self._taken_first(pairs.get((token, self.byte_ids[second])), second, None)):
                return False
        return True

    def _taken_first(self, at: int | None, second: int, until: int | None) -> bool:
        """Does the rule visited at `at` (before `until`) find the byte `second` still lone?"""
        if at is None or (until is not None and at >= until):
            return False
        first_use = self._lefts.get(self.byte_ids[second])
        return first_use is None or first_use >= at
