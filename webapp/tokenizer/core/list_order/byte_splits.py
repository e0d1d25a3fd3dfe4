"""Split points of a byte-level merge list: where no rule can ever join two bytes.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from itertools import chain

import numpy as np

from webapp.tokenizer.validation import ByteRule


def _bits(mask: int) -> list[int]:
    """The positions of the set bits of a non-negative int."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def edge_bytes(rules: tuple[ByteRule, ...]) -> tuple[dict[int, int], dict[int, int], dict[int, int] | None]:
    """For each id, bitmasks of the bytes a token with that id can start / end with."""
    first = {b: 1 << b for b in range(256)}
    last = dict(first)
    read: set[int] = set()
    settled = True
    starts_after: dict[int, int] = {}
    for left, right, new in rules:
        read.add(left)
        read.add(right)
        add_first = first.get(left, 0)
        add_last = last.get(right, 0)
        ends = last.get(left, 0)
        starts = first.get(right, 0)
        if ends and starts:
            starts_after[ends] = starts_after.get(ends, 0) | starts
        old_first = first.get(new, 0)
        old_last = last.get(new, 0)
        if add_first | old_first != old_first or add_last | old_last != old_last:
            first[new] = old_first | add_first
            last[new] = old_last | add_last
            if new in read:
                settled = False
    if settled:
        return first, last, starts_after
    _propagate(rules, first, last)
    return first, last, None


def _propagate(rules: tuple[ByteRule, ...], first: dict[int, int], last: dict[int, int]) -> None:
    """Worklist fixpoint; each mask only grows, so it ends after at most 256 growths per id."""
    as_left: dict[int, list[int]] = {}
    as_right: dict[int, list[int]] = {}
    for left, right, new in rules:
        as_left.setdefault(left, []).append(new)
        as_right.setdefault(right, []).append(new)
    for masks, edges in ((first, as_left), (last, as_right)):
        work = [source for source in edges if masks.get(source)]
        while work:
            source = work.pop()
            mask = masks[source]
            for target in edges.get(source, ()):
                old = masks.get(target, 0)
                if old | mask != old:
                    masks[target] = old | mask
                    if target in edges:
                        work.append(target)


def rules_array(rules: tuple[ByteRule, ...]) -> np.ndarray | None:
    """The rules as an n x 3 int64 array, or None when an id does not fit in 64 bits."""
    try:
        return np.fromiter(chain.from_iterable(rules), dtype=np.int64, count=3 * len(rules)).reshape(len(rules), 3)
    except OverflowError:
        return None


def split_table_well_formed(rules: tuple[ByteRule, ...], flat: np.ndarray | None = None) -> np.ndarray | None:
    """`split_table` with numpy for a well-formed list, None for any other list."""
    if flat is None:
        flat = rules_array(rules)
        if flat is None:
            return None
    count = len(flat)
    left, right, new = flat[:, 0], flat[:, 1], flat[:, 2]
    top = int(flat.max())
    if top > 16 * count + 4096 or int(new.min()) < 256:
        return None  # ids too sparse for dense arrays, or a rule redefines a byte
    made_by = np.full(top + 1, -2, dtype=np.int64)  # -2: never made; -1: a byte
    made_by[:256] = -1
    order = np.arange(count)
    made_by[new] = order
    # Each slot keeps one index, so a `new` listed twice leaves some rule's index unread.
    if not np.array_equal(made_by[new], order):
        return None
    for side in (left, right):
        when = made_by[side]
        if ((when == -2) | (when >= order)).any():
            return None
    ends: list[np.ndarray] = []
    for side in (left, right):
        parent = np.arange(top + 1)
        parent[new] = side
        while True:  # each round doubles the distance followed
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped
        ends.append(parent)
    first_byte, last_byte = ends
    joinable = np.zeros((256, 256), dtype=bool)
    joinable[last_byte[left], first_byte[right]] = True
    return ~joinable


def split_table(rules: tuple[ByteRule, ...], flat: np.ndarray | None = None) -> np.ndarray:
    """256x256 booleans: True where no rule can ever join byte x (left) to byte y (right).

    `flat` is `rules_array(rules)` when the caller already has it.
    """
    fast = split_table_well_formed(rules, flat) if rules else None
    if fast is not None:
        return fast
    return split_table_fixpoint(rules)


def split_table_fixpoint(rules: tuple[ByteRule, ...]) -> np.ndarray:
    """`split_table` for any list, from the `edge_bytes` fixpoint."""
    first, last, starts_after = edge_bytes(rules)
    if starts_after is None:
        # Grouped by the left side's possible last bytes (one byte for most ids).
        starts_after = {}
        for left, right, _new in rules:
            ends = last.get(left, 0)
            starts = first.get(right, 0)
            if ends and starts:
                starts_after[ends] = starts_after.get(ends, 0) | starts
    rows = [0] * 256
    for ends, starts in starts_after.items():
        for x in _bits(ends):
            rows[x] |= starts
    raw = b"".join(row.to_bytes(32, "little") for row in rows)
    joinable = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little").reshape(256, 256)
    table: np.ndarray = joinable == 0
    return table
