"""One Python int object per id or rank, shared by the big tables of every tokenizer in the process.

What it does not do: intern values at or above `POOL_LIMIT` (ids from a file
can be any size up to 2^63; such values keep their own objects), or shrink
(the pool grows to the largest number asked for, at most `POOL_LIMIT` objects,
about 36 MB).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from itertools import islice

#: Numbers below this are shared (the largest preset: 515k ranks, 262k ids).
POOL_LIMIT = 1 << 20

# (a list, grown in place: as a tuple replaced when it grew, it raised gemma3's peak memory by 9 MB)
_POOL: list[int] = list(range(65_536))
_LOCK = threading.Lock()


def _pool(size: int) -> list[int]:
    """The pool, holding at least `size` numbers (size <= POOL_LIMIT)."""
    pool = _POOL
    if len(pool) < size:
        with _LOCK:
            if len(pool) < size:
                # Doubling: a few extensions in all. Only appended to, so readers never see a gap.
                pool.extend(range(len(pool), min(POOL_LIMIT, max(size, 2 * len(pool)))))
    return pool


def interned(values: list[int]) -> tuple[int, ...]:
    """`values` (non-negative ints) as a tuple, each one the pool's object for its number when all are
    below POOL_LIMIT (else the values' own objects). A tuple, as the tables made from it live long."""
    if not values:
        return ()
    top = max(values)
    if top >= POOL_LIMIT or min(values) < 0:
        return tuple(values)
    return tuple(map(_pool(top + 1).__getitem__, values))


def shared_range(count: int) -> Iterator[int]:
    """0..count-1 as the pool's objects (a plain range when count is over POOL_LIMIT)."""
    if count > POOL_LIMIT:
        return iter(range(count))
    return islice(_pool(count), count)


__all__ = ["POOL_LIMIT", "interned", "shared_range"]
