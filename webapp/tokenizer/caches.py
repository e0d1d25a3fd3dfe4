"""The one in-process cache class and its policy, used by every cache of the app.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable
from itertools import islice
from operator import itemgetter
from typing import Any, Callable, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


_first = itemgetter(0)


def key_length(key: object, value: object) -> int:
    """The default weight: the length of the key (a segment's bytes or a pre-token's characters)."""
    return len(key)  # type: ignore[arg-type]


def value_length(key: object, value: object) -> int:
    """The weight of a value by its length (the presets' caches: rules, to hold every preset once)."""
    return len(value)  # type: ignore[arg-type]


def estimated_bytes(key: object, value: object) -> int:
    """The weight of a compiled list or an opened tokenizer: its own estimate of the bytes it holds
    once everything it builds on use is built (`value.estimated_bytes()`). It must not change
    while the entry is stored: the cache takes the same figure off its total when the entry goes."""
    return int(value.estimated_bytes())  # type: ignore[attr-defined]


class BoundedCache(Generic[K, V]):
    """A dict bounded by entries and by total weight; see the module docstring for the policy."""

    def __init__(
        self,
        max_entries: int,
        max_weight: int | None = None,
        *,
        weigh: Callable[[K, V], int] = key_length,
        name: str | None = None,
        budget: CacheBudget | None = None,
    ) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self.weigh = weigh
        self._by_key = weigh is key_length  # the segment and pre-token caches: len(key), inlined on the hot paths
        self.weight = 0  # kept only when max_weight is given
        self.data: dict[K, V] = {}
        self._lock = threading.Lock()
        self.name = name
        if name is not None:
            NAMED[name] = self
        self.budget = budget
        self.budget_key = 0
        if budget is not None:
            budget.join(self)

    def get(self, key: K) -> V | None:
        """The value for `key` (None if absent), now the most recently used."""
        data = self.data
        value = data.get(key)
        if value is not None:
            try:
                data[key] = data.pop(key)  # to the end: the last to go
            except KeyError:
                pass  # evicted by another thread meanwhile
        return value

    def put(self, key: K, value: V) -> None:
        """Store one entry, evicting the oldest first if it would not fit."""
        data = self.data
        limit = self.max_weight
        weight = 0 if limit is None else len(key) if self._by_key else self.weigh(key, value)  # type: ignore[arg-type]
        if limit is not None and weight > limit:
            return  # heavier than the whole cache: never stored
        before = self.weight
        if len(data) >= self.max_entries or (limit is not None and self.weight + weight > limit):
            self._evict(1, weight)
        if limit is not None:
            if key in data:
                self.weight -= len(key) if self._by_key else self.weigh(key, data[key])  # type: ignore[arg-type]
            self.weight += weight
        data[key] = value  # one dict store: atomic under the GIL, so no lock when nothing goes
        if self.budget is not None:
            self.budget.add(self, self.weight - before)

    def put_many(self, items: list[tuple[K, V]]) -> None:
        """`put` for each item with one bound check (and one eviction) for the whole batch.

        A batch over half a bound goes through `put` one item at a time.
        """
        if not items:
            return
        data = self.data
        limit = self.max_weight
        count = len(items)
        if limit is None:
            added = 0
        elif self._by_key:
            added = sum(map(len, map(_first, items)))
        else:
            added = sum(self.weigh(k, v) for k, v in items)
        if 2 * count > self.max_entries or (limit is not None and 2 * added > limit):
            for key, value in items:
                self.put(key, value)
            return
        before = self.weight  # (the budget is told the change, the eviction's included)
        if len(data) + count > self.max_entries or (limit is not None and self.weight + added > limit):
            self._evict(count, added)
        entries = len(data)
        data.update(items)
        if limit is not None:
            if len(data) - entries == count:
                self.weight += added
            else:  # some keys were there already (or another thread stored them): count exactly
                self.weight = self._total()
        if self.budget is not None:
            self.budget.add(self, self.weight - before)

    def _total(self) -> int:
        if self._by_key:
            return sum(map(len, list(self.data)))  # type: ignore[arg-type]
        weigh = self.weigh
        return sum(weigh(k, v) for k, v in list(self.data.items()))

    def touch(self) -> None:
        """Mark this cache used (for its budget's order) without storing: hot loops read `data` directly."""
        if self.budget is not None:
            self.budget.touch(self)

    def _evict(self, count: int, weight: int) -> None:
        """Drop the oldest entries, a quarter of the cache at a time, until `count` entries of `weight` fit."""
        data = self.data
        limit = self.max_weight
        with self._lock:
            while data and (
                len(data) + count > self.max_entries or (limit is not None and self.weight + weight > limit)
            ):
                self._drop_oldest_quarter(weighed=limit is not None)

    def shed(self, weight: int) -> int:
        """Drop the oldest entries, a quarter at a time, until `weight` is gone or nothing is left; the weight dropped."""
        data = self.data
        with self._lock:
            before = self.weight
            while data and before - self.weight < weight:
                self._drop_oldest_quarter(weighed=True)
            return before - self.weight

    def _drop_oldest_quarter(self, *, weighed: bool) -> None:
        """Drop the oldest quarter of the entries (at least one); the caller holds the lock.
        `weighed`: take their weight off the total (a cache with no weight limit keeps none)."""
        data = self.data
        old = list(islice(data, max(1, len(data) // 4)))
        if not weighed:
            for key in old:
                del data[key]
        elif self._by_key:
            for key in old:
                del data[key]
            self.weight -= sum(map(len, old))  # type: ignore[arg-type]
        else:
            weigh = self.weigh
            for key in old:
                self.weight -= weigh(key, data.pop(key))

    def clear(self) -> None:
        with self._lock:
            dropped = self.weight
            self.data.clear()
            self.weight = 0
        if self.budget is not None:
            self.budget.add(self, -dropped)

    def __len__(self) -> int:
        return len(self.data)


class CacheBudget:
    """A bound on the total weight of many caches; see the module docstring for the policy.

    `limit` may be changed at any time (the app sets it from CACHE_BUDGET_MB);
    None means no bound.
    """

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.total = 0
        # Least recently used first: key -> weak reference to the cache.
        self._order: OrderedDict[int, weakref.ref[BoundedCache[Any, Any]]] = OrderedDict()
        self._keys = itertools.count(1)
        self._dead: list[int] = []  # keys of caches gone since the last sweep (appended by weakref callbacks)
        self._lock = threading.Lock()
        self.evictions = 0

    def join(self, cache: BoundedCache[Any, Any]) -> None:
        key = cache.budget_key = next(self._keys)
        dead = self._dead
        self._order[key] = weakref.ref(cache, lambda _ref: dead.append(key))

    def touch(self, cache: BoundedCache[Any, Any]) -> None:
        try:
            self._order.move_to_end(cache.budget_key)  # one C call: atomic under the GIL
        except KeyError:  # swept meanwhile
            pass

    def add(self, cache: BoundedCache[Any, Any], delta: int) -> None:
        """`cache` changed by `delta` weight and is now the most recently used; evict if over."""
        self.total += delta
        try:
            self._order.move_to_end(cache.budget_key)
        except KeyError:
            pass
        limit = self.limit
        if (limit is not None and self.total > limit) or self._dead:
            self._rebalance()

    def caches(self) -> list[BoundedCache[Any, Any]]:
        """The live caches, least recently used first."""
        return [cache for ref in list(self._order.values()) if (cache := ref()) is not None]

    def _rebalance(self) -> None:
        """Forget dead caches, sum the total afresh, and if it is over, shed the least recently used entries."""
        with self._lock:
            dead = self._dead
            while dead:  # pop, not clear: a callback may append meanwhile
                self._order.pop(dead.pop(), None)
            live = self.caches()
            self.total = total = sum(cache.weight for cache in live)
            limit = self.limit
            if limit is None or total <= limit:
                return
            self.evictions += 1
            excess = total - limit * 7 // 8
            for cache in live:  # least recently used first
                if excess <= 0:
                    break
                dropped = cache.shed(excess)
                excess -= dropped
                self.total -= dropped


#: The one budget of the caches inside compiled lists (segments, pre-tokens,
#: chunks), in units of their weights (bytes or characters). The app sets the
#: limit from CACHE_BUDGET_MB / BUDGET_BYTES_PER_UNIT (webapp/__init__.py).
BUDGET_BYTES_PER_UNIT = 100
LIST_BUDGET = CacheBudget(400 * 2**20 // BUDGET_BYTES_PER_UNIT)

#: The app's process-wide caches by name (each compiled list's own segment
#: cache is not named: its bound is per list).
NAMED: dict[str, BoundedCache[Any, Any]] = {}
