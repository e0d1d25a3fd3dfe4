"""One piece's merges replayed, recording every pair that met at every offset (for the boundary explanations).

What it does not do: decide a boundary's cause (causes.py), text, offsets in
bytes or characters, special tokens or pre-tokenization (stages.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Sequence

from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.core.ranks import INF
from webapp.tokenizer.core.library_order.merges import LibraryMerges

#: Side names of a pair: the token ending at the offset ("left") or starting there ("right").
LEFT, RIGHT = "left", "right"


@dataclass
class Meeting:
    """Two tokens that were neighbours across one offset, and for how long."""

    left: int
    right: int
    start: int  # the time of the merge that made one side (-1: both were initial symbols)
    made: str | None  # which side that merge made (None from the start)
    lstart: int = 0  # the initial symbol where the left token starts
    rend: int = 0  # the initial symbol after the right token's end
    end: int | None = None  # the time of the merge that took one side (None: they still meet at the end)
    took: str | None = None  # which side that merge took
    taker: tuple[int, int, int] | None = None  # that merge's operands as initial symbols: [a, b) and [b, c)


@dataclass
class Replay:
    """A piece's final symbols, where each starts (index of its first initial symbol), and the meetings."""

    symbols: list[int]
    starts: list[int]
    meetings: dict[int, list[Meeting]] = field(default_factory=dict)
    fired: list[int] = field(default_factory=list)  # library order: the rank of each step; list order: unused
    # Every merge in firing order: (time, a, b, c, new), its operands as initial symbols [a, b) and [b, c).
    merges: list[tuple[int, int, int, int, int]] = field(default_factory=list)


def _start(n: int, symbols: Sequence[int]) -> tuple[list[int], list[int], list[int], dict[int, list[Meeting]]]:
    nxt = list(range(1, n + 1))
    nxt[-1] = -1
    prv = list(range(-1, n - 1))
    meetings = {p: [Meeting(symbols[p - 1], symbols[p], -1, None, p - 1, p + 1)] for p in range(1, n)}
    return list(symbols), nxt, prv, meetings


def _merged(
    syms: list[int], nxt: list[int], prv: list[int], meetings: dict[int, list[Meeting]], i: int, j: int, new: int,
    time: int, log: list[tuple[int, int, int, int, int]],
) -> int:
    """Join the tokens at i and j (its right neighbour) into `new` at `time`; the offsets around record it.

    Returns the position after the new token (-1 at the end)."""
    del meetings[j]  # joined: no longer a boundary
    k = nxt[j]
    p = prv[i]
    n = len(syms)
    stop = k if k >= 0 else n
    taker = (i, j, stop)
    log.append((time, i, j, stop, new))
    syms[i] = new
    if p >= 0:
        old = meetings[i][-1]
        old.end, old.took, old.taker = time, RIGHT, taker
        meetings[i].append(Meeting(syms[p], new, time, RIGHT, p, stop))
    if k >= 0:
        old = meetings[k][-1]
        old.end, old.took, old.taker = time, LEFT, taker
        after = nxt[k]
        meetings[k].append(Meeting(new, syms[k], time, LEFT, i, after if after >= 0 else n))
        prv[k] = i
    nxt[i] = k
    return k


def _finish(syms: list[int], nxt: list[int], meetings: dict[int, list[Meeting]], fired: list[int],
            log: list[tuple[int, int, int, int, int]]) -> Replay:
    symbols, starts = [], []
    i = 0
    while i >= 0:
        symbols.append(syms[i])
        starts.append(i)
        i = nxt[i]
    return Replay(symbols, starts, meetings, fired, log)


def replay_list(symbols: Sequence[int], table: RuleTable) -> Replay:
    """The contract's list order over `symbols` (ids), recording the meetings; time = rule index."""
    n = len(symbols)
    if n < 2 or not table.count:
        return Replay(list(symbols), list(range(n)), _start(n, symbols)[3] if n else {})
    first, shift, top, news = table.first, table.shift, table.top, table.news

    def rank(a: int, b: int, time: int) -> int:
        if a > top or b > top:
            return INF
        key = a * shift + b
        r = first.get(key, INF)
        if r < time:
            r = table.rank_after(key, time)
        return r

    syms, nxt, prv, meetings = _start(n, symbols)
    born = [-1] * n
    log: list[tuple[int, int, int, int, int]] = []
    alive = [True] * n
    heap = [(r, i) for i in range(n - 1) if (r := rank(syms[i], syms[i + 1], 0)) != INF]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        r, i = pop(heap)
        j = nxt[i] if alive[i] else -1
        if j < 0 or born[i] >= r or born[j] >= r or rank(syms[i], syms[j], r) != r:
            continue  # stale, or a product of this very visit (not rescanned by it)
        alive[j] = False
        born[i] = r
        k = _merged(syms, nxt, prv, meetings, i, j, news[r], r, log)
        p = prv[i]
        if p >= 0 and (pr := rank(syms[p], syms[i], r + 1)) != INF:
            push(heap, (pr, p))
        if k >= 0 and (kr := rank(syms[i], syms[k], r + 1)) != INF:
            push(heap, (kr, i))
    return _finish(syms, nxt, meetings, [], log)


def replay_library(symbols: Sequence[int], merges: LibraryMerges) -> Replay:
    """The library's order over `symbols` (a file's ids), recording the meetings; time = step number."""
    n = len(symbols)
    if n < 2:
        return Replay(list(symbols), list(range(n)), {})
    get, shift, news = merges.ranks.get, merges.shift, merges.news

    def rank(a: int, b: int) -> int:
        if a >= shift or b >= shift:
            return INF
        return get(a * shift + b, INF)

    syms, nxt, prv, meetings = _start(n, symbols)
    alive = [True] * n
    heap = [(r, i) for i in range(n - 1) if (r := rank(syms[i], syms[i + 1])) != INF]
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    fired: list[int] = []
    log: list[tuple[int, int, int, int, int]] = []
    while heap:
        r, i = pop(heap)
        j = nxt[i] if alive[i] else -1
        if j < 0 or rank(syms[i], syms[j]) != r:
            continue  # stale: the pair at i changed since it was pushed
        alive[j] = False
        k = _merged(syms, nxt, prv, meetings, i, j, news[r], len(fired), log)
        fired.append(r)
        p = prv[i]
        if p >= 0 and (pr := rank(syms[p], syms[i])) != INF:
            push(heap, (pr, p))
        if k >= 0 and (kr := rank(syms[i], syms[k])) != INF:
            push(heap, (kr, i))
    return _finish(syms, nxt, meetings, fired, log)


__all__ = ["LEFT", "RIGHT", "Meeting", "Replay", "replay_library", "replay_list"]
