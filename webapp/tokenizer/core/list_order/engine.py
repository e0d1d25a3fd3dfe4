"""The exact merge engine shared by the byte level and the character level.

What it does not do: validation, text handling or vocab lookup (the callers do).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from webapp.tokenizer.core.int_pool import interned, shared_range
from webapp.tokenizer.core.ranks import INF

_DEAD = -1  # rank of a position that a merge consumed
# Segments up to this many symbols use the list-rebuild loop; longer ones the heap.
SMALL_SEGMENT = 32

Event = tuple[int, int, int]  # (rule index, start of left operand, start of right operand)

class RuleTable:
    """Rules `(left, right, new)` over non-negative int symbols, indexed for the engine."""

    def __init__(self, rules: Sequence[tuple[int, int, int]] | None, max_symbol: int, flat: Any = None) -> None:
        """`flat`, optional, is the rules as an n x 3 int64 numpy array (a faster build).

        `rules` may be None when `flat` is given (then only `flat` is read).
        The indexes (`first`, `later`, `news`) are built on first use: a cold
        byte-level encode of a well-formed list may never need them.
        """
        self.rules = rules
        self._flat = flat
        self.count = count = len(flat) if flat is not None else len(rules)  # type: ignore[arg-type]
        if flat is not None and count:
            top = max(max_symbol, int(flat.max()))
        else:
            top = max(max_symbol, max(map(max, rules))) if rules else max_symbol
        self.top = top
        self.shift = 1 << max(8, top.bit_length())
        self._first: dict[int, int] | None = None
        self._later: dict[int, list[int]] = {}
        self._news: tuple[int, ...] = ()

    def _build(self) -> dict[int, int]:
        shift = self.shift
        flat = self._flat
        rules = self.rules
        if flat is not None and self.count and self.top < 1 << 31:  # keys fit in int64
            news = interned(flat[:, 2].tolist())  # (one object per id: core/int_pool.py)
            keys = (flat[:, 0] * shift + flat[:, 1]).tolist()
        else:
            if rules is None:  # ids too large for int64 keys: Python ints from the array
                rules = flat.tolist()
            news = tuple(rule[2] for rule in rules)
            keys = [left * shift + right for left, right, _new in rules]
        # Built from the end so the smallest index of each pair wins (C-level loop).
        first = dict(zip(reversed(keys), reversed(list(shared_range(len(keys))))))
        later: dict[int, list[int]] = {}
        if len(first) < len(keys):  # some pair is listed more than once
            for index, key in enumerate(keys):
                later.setdefault(key, []).append(index)
            later = {key: indices for key, indices in later.items() if len(indices) > 1}
        self._news = news
        self._later = later
        self._first = first  # set last: other threads read `later` / `news` once this is set
        return first

    @property
    def built(self) -> bool:
        """Whether the indexes exist yet (building them costs tens of ms for a real vocabulary)."""
        return self._first is not None

    @property
    def first(self) -> dict[int, int]:
        """Pair key -> the smallest rule index of that pair."""
        first = self._first
        return first if first is not None else self._build()

    @property
    def later(self) -> dict[int, list[int]]:
        """Pair key -> all its rule indices, for pairs listed more than once."""
        if self._first is None:
            self._build()
        return self._later

    @property
    def news(self) -> tuple[int, ...]:
        """Rule index -> the id it makes."""
        if self._first is None:
            self._build()
        return self._news

    def rank_after(self, key: int, time: int) -> int:
        """The rank of pair `key` at `time` when its first rule is already behind: INF, or a later duplicate."""
        indices = self.later.get(key)
        if indices is None:
            return INF
        at = bisect_left(indices, time)
        return indices[at] if at < len(indices) else INF

    def run(self, symbols: Sequence[int], events: list[Event] | None = None) -> list[int]:
        """The symbols after every rule; merge events appended to `events` if given."""
        if len(symbols) < 2 or not self.count:
            return list(symbols)
        if len(symbols) <= SMALL_SEGMENT:
            return self.run_short(list(symbols), None, events)
        return self._run_heap(symbols, events)

    def run_short(self, seq: list[int], ranks: list[int] | None = None,
                  events: list[Event] | None = None) -> list[int]:
        """Merge `seq` (len >= 2) in place on Python lists: ranks[i] is the rank of pair (seq[i], seq[i+1])."""
        first_get = self.first.get
        rank_after = self.rank_after
        shift = self.shift
        news = self.news
        starts = list(range(len(seq))) if events is not None else None
        if ranks is None:
            ranks = [first_get(a * shift + b, INF) for a, b in zip(seq, seq[1:])]
        while True:
            k = min(ranks)
            if k == INF:
                return seq
            new = news[k]
            time = k + 1
            i = ranks.index(k)
            while True:
                if starts is not None:
                    events.append((k, starts[i], starts[i + 1]))  # type: ignore[union-attr]
                    del starts[i + 1]
                seq[i] = new
                del seq[i + 1]
                del ranks[i]
                if i < len(ranks):
                    key = new * shift + seq[i + 1]
                    rank = first_get(key, INF)
                    ranks[i] = rank if rank >= time else rank_after(key, time)
                if i:
                    key = seq[i - 1] * shift + new
                    rank = first_get(key, INF)
                    ranks[i - 1] = rank if rank >= time else rank_after(key, time)
                if k in ranks:  # C-level scan; most rules match once per segment
                    i = ranks.index(k, i)  # ranks[i] was just re-ranked past k
                else:
                    break
            if not ranks:
                return seq

    def _run_heap(self, symbols: Sequence[int], events: list[Event] | None) -> list[int]:
        """Linked list plus a bucket queue: rank -> positions, and a heap of the ranks present."""
        shift = self.shift
        news = self.news
        rank_after = self.rank_after
        first_get = self.first.get
        vals = list(symbols)
        n = len(vals)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        rank = [first_get(a * shift + b, INF) for a, b in zip(vals, vals[1:])]
        rank.append(INF)
        buckets: dict[int, list[int]] = {}
        for i, r in enumerate(rank):
            if r != INF:
                bucket = buckets.get(r)
                if bucket is None:
                    buckets[r] = [i]
                else:
                    bucket.append(i)
        order = list(buckets)
        heapq.heapify(order)
        pop = heapq.heappop
        push = heapq.heappush
        bucket_of = buckets.get
        while order:
            k = pop(order)
            batch = buckets.pop(k)
            if len(batch) > 1:
                batch.sort()
            new = news[k]
            time = k + 1
            for p in batch:
                if rank[p] != k:
                    continue  # stale entry, or consumed by the previous match
                q = nxt[p]
                if events is not None:
                    events.append((k, p, q))
                vals[p] = new
                r = nxt[q]
                nxt[p] = r
                rank[q] = _DEAD
                if r != -1:
                    prv[r] = p
                    key = new * shift + vals[r]
                    rp = first_get(key, INF)
                    if rp < time:
                        rp = rank_after(key, time)
                    rank[p] = rp
                    if rp != INF:
                        bucket = bucket_of(rp)
                        if bucket is None:
                            buckets[rp] = [p]
                            push(order, rp)
                        else:
                            bucket.append(p)
                else:
                    rank[p] = INF
                left = prv[p]
                if left != -1:
                    key = vals[left] * shift + new
                    rl = first_get(key, INF)
                    if rl < time:
                        rl = rank_after(key, time)
                    rank[left] = rl
                    if rl != INF:
                        bucket = bucket_of(rl)
                        if bucket is None:
                            buckets[rl] = [left]
                            push(order, rl)
                        else:
                            bucket.append(left)
        out = []
        i = 0
        while i != -1:
            out.append(vals[i])
            i = nxt[i]
        return out
