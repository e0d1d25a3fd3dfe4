"""`VocabIndex`: every token of a loaded tokenizer, in the file's ids, with its rule and its uses.

What it does not do: encode (reach.py), count scripts (stats.py), or cache itself.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from webapp.tokenizer.loaded import LoadedTokenizer

#: A rule as the answers show it: (index in the merge list, left id, right id, new id).
Rule = tuple[int, int, int, int]


def token_bytes_table(tok: LoadedTokenizer, file_vocab: Mapping[int, bytes] | None) -> dict[int, bytes]:
    """{file id: bytes} of every token, special tokens as their text."""
    table = dict(file_vocab) if file_vocab else tok.unit.ordinary_bytes(tok)
    for token, token_id in tok.special_tokens.items():
        table.setdefault(token_id, token.encode("utf-8", "surrogatepass"))
    return table


@dataclass(frozen=True)
class VocabIndex:
    """See the module docstring. `ids` are sorted; arrays are indexed by file id."""

    ids: tuple[int, ...]
    data: dict[int, bytes]
    rules: np.ndarray  # (n, 3): left, right, new in file ids; -1 rows make nothing
    maker: np.ndarray  # id -> index of its rule, -1 for none
    uses: np.ndarray  # id -> how many rules take it as an operand
    first_use: np.ndarray  # id -> index of the first such rule, -1 for none
    special: frozenset[int]
    order: str  # "list" | "library"
    level: str  # "bytes" | "chars"

    @classmethod
    def build(cls, tok: LoadedTokenizer, file_vocab: Mapping[int, bytes] | None = None) -> "VocabIndex":
        data = token_bytes_table(tok, file_vocab)
        # (left, right, new) in file ids; a character-level rule naming a string the vocab lacks is a -1 row
        rules = tok.unit.file_rule_rows(tok)
        size = max([max(data, default=0), int(rules.max()) if rules.size else 0]) + 1
        special = frozenset(tok.special_tokens.values())
        base = np.zeros(size, dtype=bool)
        base[tok.unit.base_ids(tok)] = True  # (the bytes, at the byte level)
        for token_id in special:
            base[token_id] = True
        maker = np.full(size, -1, dtype=np.int64)
        if rules.size:
            valid = (rules[:, 2] >= 0) & ~base[np.maximum(rules[:, 2], 0)]
            valid &= np.isin(rules[:, 0], list(data)) & np.isin(rules[:, 1], list(data))
            made = np.nonzero(valid)[0]
            first_made = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(first_made, rules[made, 2], made)  # the first rule of each token
            maker = np.where(first_made == np.iinfo(np.int64).max, -1, first_made)
            ops = np.concatenate([rules[valid, 0], rules[valid & (rules[:, 1] != rules[:, 0]), 1]])
            uses = np.bincount(ops, minlength=size)[:size]
            first_use = np.full(size, np.iinfo(np.int64).max, dtype=np.int64)
            np.minimum.at(first_use, rules[valid, 0], made)
            np.minimum.at(first_use, rules[valid, 1], made)
            first_use[first_use == np.iinfo(np.int64).max] = -1
            rules = rules.copy()
            rules[~valid] = -1
        else:
            uses = np.zeros(size, dtype=np.int64)
            first_use = np.full(size, -1, dtype=np.int64)
        return cls(tuple(sorted(data)), data, rules, maker, uses, first_use, special,
                   "library" if tok.library_order else "list", tok.level)

    def __len__(self) -> int:
        return len(self.ids)

    def estimated_bytes(self) -> int:
        """About what it holds beyond the shared bytes table (arrays and the id tuple)."""
        return int(self.rules.nbytes + self.maker.nbytes + self.uses.nbytes + self.first_use.nbytes) + 8 * len(self.ids)

    def __contains__(self, token_id: object) -> bool:
        return isinstance(token_id, int) and not isinstance(token_id, bool) and token_id in self.data

    # --- one token --------------------------------------------------------------------------

    def text(self, token_id: int) -> str | None:
        """The token's text, None when its bytes are not valid UTF-8 on their own."""
        try:
            return self.data[token_id].decode("utf-8")
        except UnicodeDecodeError:
            return None

    def rank(self, token_id: int) -> int | None:
        index = int(self.maker[token_id]) if token_id < len(self.maker) else -1
        return index if index >= 0 else None

    def rule(self, index: int) -> Rule:
        left, right, new = (int(v) for v in self.rules[index])
        return index, left, right, new

    def made_from(self, token_id: int) -> tuple[int, int] | None:
        index = self.rank(token_id)
        if index is None:
            return None
        _, left, right, _ = self.rule(index)
        return left, right

    def used_by(self, token_id: int, some: int = 20) -> tuple[int, list[Rule]]:
        """(how many rules take it as an operand, the first `some` of them in list order)."""
        if token_id >= len(self.uses) or not self.uses[token_id]:
            return 0, []
        hits = np.nonzero((self.rules[:, 0] == token_id) | (self.rules[:, 1] == token_id))[0][:some]
        return int(self.uses[token_id]), [self.rule(int(i)) for i in hits]

    def tree(self, token_id: int) -> dict[str, Any]:
        """{"id", "children": [left, right]} down to base tokens (no children)."""
        root: dict[str, Any] = {"id": token_id, "children": []}
        stack: list[tuple[dict[str, Any], frozenset[int]]] = [(root, frozenset((token_id,)))]
        while stack:
            node, inside = stack.pop()
            parts = self.made_from(node["id"])
            if parts is None or any(p in inside for p in parts):
                continue
            for part in parts:
                child: dict[str, Any] = {"id": part, "children": []}
                node["children"].append(child)
                stack.append((child, inside | {part}))
        return root

    # --- many tokens ------------------------------------------------------------------------

    def search(self, q: bytes | None) -> list[int]:
        """The ids whose bytes contain `q`, in id order (every id for None)."""
        if q is None:
            return list(self.ids)
        data = self.data
        return [i for i in self.ids if q in data[i]]

