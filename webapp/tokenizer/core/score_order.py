"""SentencePiece's merge order: the pair whose joined piece scores highest fires next, the leftmost on ties.

A SentencePiece BPE model (`bpe_model.cc`) has no merge list: any two
neighbouring symbols whose concatenation is a piece of the model may merge,
and at each step the pair with the highest piece score fires, the leftmost
among equal scores, even when the two pairs make different pieces (Mistral's
and Llama's whitespace pieces `▁▁`, `▁▁▁▁`, ... all share one score).

`ScoreMerges` takes rules (left, right, new) listed in score order (the
formats module writes one rule per way of splitting each piece in two) and a
level per rule (0 for the best score; rules of equal score share a level).
It merges like `LibraryMerges` (the same heap of (priority, position) entries
checked when popped), the priority being the level instead of the rank, so
equal levels go by position. A popped entry is taken when the pair now at its
position has the entry's level: that pair's own entry has the same priority,
so the pair fired is the one with the best (level, position), as in
sentencepiece, whose check (the two symbols' lengths add up to the pair's) accepts
the same pairs.

What it does not do: map text to symbols (hf/model.py), the batch tables of
LibraryMerges (its pair table and early pairs assume one rank per pair: they
are off here, `pair_table()` is None).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import numpy as np

from webapp.tokenizer.core.engine import INF
from webapp.tokenizer.core.library_order import Firing, LibraryMerges, Lookups


class ScoreMerges(LibraryMerges):
    """Rules in score order with a level each (see the module doc)."""

    __slots__ = ("levels",)

    def __init__(self, rules: Iterable[Sequence[int]] | np.ndarray, levels: Sequence[int] | np.ndarray) -> None:
        super().__init__(rules)
        steps = np.asarray(levels, dtype=np.int64)
        if len(steps) != self.count or (len(steps) > 1 and bool((steps[1:] < steps[:-1]).any())):
            raise ValueError("score order: one level per rule, never decreasing")
        if len(self.ranks) != self.count:
            raise ValueError("score order: a pair is listed twice")
        self.levels: list[int] = steps.tolist()

    def pair_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        return None  # (no batch tables: see the module doc)

    def _merge_ranked(
        self, words: Iterable[tuple[list[int], list[int]]], lookups: Lookups | None = None,
    ) -> list[list[int]]:
        """Each word merged by a scan per merge over its pairs' levels (the ranks given are turned into levels).

        `lookups` is taken for the base class's calls and not used: this order has no stored pair
        table, so the pair map is always made (the same answers)."""
        get, shift, news, levels = self.ranks.get, self.shift, self.news, self.levels
        out = []
        for syms, ranks in words:
            lv = [levels[r] if r != INF else INF for r in ranks]
            left = len(lv)
            while left:
                best = min(lv)
                if best == INF:
                    break
                i = lv.index(best)  # the leftmost of the best level
                rank = get(syms[i] * shift + syms[i + 1])
                assert rank is not None
                new = news[rank]
                syms[i] = new
                del syms[i + 1]
                del lv[i]
                left -= 1
                if i:
                    r = get(syms[i - 1] * shift + new)
                    lv[i - 1] = levels[r] if r is not None else INF
                if i < left:
                    r = get(new * shift + syms[i + 1])
                    lv[i] = levels[r] if r is not None else INF
            out.append(syms)
        return out

    def _merge_heap(
        self, syms: list[int], firings: list[Firing] | None, first: list[int] | None = None,
        lookups: Lookups | None = None,
    ) -> list[int]:
        """`syms` merged with a heap of (level, position); `firings` records (rank, left, right) of each merge
        (`lookups`: as for `_merge_ranked`, not used)."""
        get, shift, news, levels = self.ranks.get, self.shift, self.news, self.levels
        n = len(syms)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        alive = [True] * n
        if first is None:
            first = [get(a * shift + b, INF) for a, b in zip(syms, syms[1:])]
        heap = [(levels[r], i) for i, r in enumerate(first) if r != INF]
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            level, i = pop(heap)
            if not alive[i]:
                continue
            j = nxt[i]
            rank = get(syms[i] * shift + syms[j]) if j >= 0 else None
            if rank is None or levels[rank] != level:
                continue  # stale: the pair at i changed since it was pushed
            syms[i] = new = news[rank]
            alive[j] = False
            k = nxt[j]
            nxt[i] = k
            if k >= 0:
                prv[k] = i
            if firings is not None:
                firings.append((rank, i, j))
            p = prv[i]
            if p >= 0 and (pr := get(syms[p] * shift + new)) is not None:
                push(heap, (levels[pr], p))
            if k >= 0 and (kr := get(new * shift + syms[k])) is not None:
                push(heap, (levels[kr], i))
        return [s for s, keep in zip(syms, alive) if keep]


def levels_from_runs(runs: Sequence[int]) -> np.ndarray:
    """Levels per rule (int64) from the number of rules at each level, in order."""
    counts = np.asarray(runs, dtype=np.int64)
    if len(counts) and int(counts.min()) < 0:
        raise ValueError("score order: a level has a negative number of rules")
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


__all__ = ["ScoreMerges", "levels_from_runs"]
