"""The library's merge order: at each step the lowest-ranked pair present fires.

A Hugging Face BPE file is not an ordered rule list that is visited once per
rule (the playground's seed algorithm, engine.py). The `tokenizers` library
reads it as a map pair -> (rank, new id), the rank being the rule's position
in the file (when a pair is listed twice the last listing is the one kept),
and merges a word like this:

    while some neighbouring pair (a, b) has a rule:
        take the pair with the lowest rank; among equal ones, the leftmost;
        replace that one occurrence by the rule's new id

So a rule may fire after a later rule made one of its operands (gemma3's rule
1300, `▁▁ ▁▁`, needs `▁▁` from rule 1393), and a rule may fire again after a
lower one. `reference.library_order_merge` states this literally; this module
does the same faster: a plain scan for short words (a list of pair ranks,
updated around each merge) and, for long ones, a heap of (rank, position)
entries checked for staleness when popped (the library's own structure).

Equal to the library's `merge_all` without dropout: the library validates a
popped entry by its new id rather than its rank, but a pair at a position can
only change into a longer one, whose joined token is another vocab string
with another id, so both checks accept exactly the same entries.

What it does not do: map text to symbols (hf/model.py does: vocab, byte
fallback, unknown token), pre-tokenization, dropout.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

import numpy as np

from webapp.tokenizer.core.early_pairs import EarlyPairs
from webapp.tokenizer.core.engine import INF
from webapp.tokenizer.core.int_pool import interned, shared_range

#: Up to this many symbols a word is merged by scanning its list of pair ranks.
SHORT_WORD = 48

#: From this many pair keys, a lookup sorts them first.
SORTED_SEARCH = 256

#: One merge as it fired: (rank, left symbol index, right symbol index), indices into the initial symbols.
Firing = tuple[int, int, int]


class LibraryMerges:
    """Rules (left, right, new) as the library's pair map: pair -> rank (its last listing) and new id."""

    __slots__ = ("shift", "ranks", "news", "count", "_pairs")

    def __init__(self, rules: Iterable[Sequence[int]] | np.ndarray) -> None:
        """`rules`: (left, right, new) triples of non-negative ids, or an n x 3 integer array of them."""
        flat = rules if isinstance(rules, np.ndarray) else np.array(list(rules), dtype=object).reshape(-1, 3)
        self.count = count = len(flat)
        # (over the new ids too: a merged symbol is then always below the shift, so only the
        # initial symbols need checking before their pair key is made)
        top = int(flat.max()) if count else 0
        self.shift = shift = 1 << max(1, top.bit_length())
        if top < 1 << 31:  # the usual case: keys fit in int64, made by numpy
            narrow = flat.astype(np.int64)
            keys = (narrow[:, 0] * shift + narrow[:, 1]).tolist()
            self.news: list[int] = interned(narrow[:, 2].tolist())
        else:
            keys = [int(a) * shift + int(b) for a, b, _ in flat.tolist()]
            self.news = [int(n) for n in flat[:, 2].tolist()]
        # dict() keeps the last value of a repeated key: the last listing of a pair wins, as in the library.
        # The ranks are the shared int objects 0..count-1 (core/int_pool.py): one set for every list.
        self.ranks: dict[int, int] = dict(zip(keys, shared_range(count)))
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None

    def __len__(self) -> int:
        return self.count

    def merge(self, symbols: Sequence[int], firings: list[Firing] | None = None) -> list[int]:
        """`symbols` after every merge, in the library's order; `firings` (if given) records each merge."""
        if len(symbols) < 2:
            return list(symbols)
        syms = list(symbols)
        shift = self.shift
        if max(syms) < shift:  # (the usual case: every pair key a * shift + b is then a rule's key or no key)
            if len(syms) <= SHORT_WORD and firings is None:
                return self._merge_short(syms)
            return self._merge_heap(syms, firings)
        # A symbol no rule names (at or above the shift: every rule's ids are below it, see __init__)
        # is moved past shift**2 for the merging, so that any key made with it is above every rule's
        # key (below shift**2), and moved back after.
        far = shift * shift
        merged = self._merge([s + far if s >= shift else s for s in syms], firings)
        return [s - far if s >= far else s for s in merged]

    def _merge(self, syms: list[int], firings: list[Firing] | None) -> list[int]:
        if len(syms) <= SHORT_WORD and firings is None:
            return self._merge_short(syms)
        return self._merge_heap(syms, firings)

    def _merge_short(self, syms: list[int]) -> list[int]:
        get, shift = self.ranks.get, self.shift
        return self._merge_ranked([(syms, [get(a * shift + b, INF) for a, b in zip(syms, syms[1:])])])[0]

    def _merge_ranked(self, words: Iterable[tuple[list[int], list[int]]]) -> list[list[int]]:
        """Each word's symbols merged, given the ranks of its neighbouring pairs (INF: no rule): a scan
        per merge. (One loop for many words: a call per word measured 14% slower on a chat's words.)"""
        get = self.ranks.get
        shift = self.shift
        news = self.news
        out = []
        for syms, ranks in words:
            left = len(ranks)  # (pairs left)
            while left:
                best = min(ranks)
                if best == INF:
                    break
                i = ranks.index(best)  # the leftmost: one rank is one pair
                new = news[best]
                syms[i] = new
                del syms[i + 1]
                del ranks[i]
                left -= 1
                if i:
                    ranks[i - 1] = get(syms[i - 1] * shift + new, INF)
                if i < left:
                    ranks[i] = get(new * shift + syms[i + 1], INF)
            out.append(syms)
        return out

    def pair_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Every rule's pair key (a * shift + b) sorted, and its rank beside it (numpy, made on first
        use; a preset's stored form brings it): for looking many pairs up at once. None when the keys
        do not fit in int64."""
        if self._pairs is None and self.shift <= 1 << 31:
            keys = np.fromiter(self.ranks.keys(), dtype=np.int64, count=len(self.ranks))
            order = np.argsort(keys)
            self._pairs = (keys[order], np.fromiter(self.ranks.values(), dtype=np.int64, count=len(self.ranks))[order])
        return self._pairs

    def set_pair_table(self, keys: np.ndarray, ranks: np.ndarray) -> None:
        """Keep a stored `pair_table()` (checked: as many pairs as rules have keys, sorted)."""
        unsorted = len(keys) > 1 and bool((keys[1:] <= keys[:-1]).any())
        if len(keys) != len(self.ranks) or len(ranks) != len(keys) or unsorted:
            raise ValueError("the stored pair table does not match the rules")
        self._pairs = (keys, ranks)

    def merge_many(self, symbols: np.ndarray, ends: Sequence[int], early: EarlyPairs | None = None) -> list[list[int]]:
        """`merge` of many words at once: `symbols` their symbols in a row (int64, each below the
        shift), `ends` where each word ends. The first rank of every neighbouring pair is looked up
        in one numpy pass (`pair_table`) and, given `early` (core/early_pairs.py), every word's early
        pairs are merged at once; then each word is merged on its own. The same results as `merge`
        of each. Falls back to `merge` one by one when there is no pair table."""
        table = self.pair_table()
        if table is None or not len(table[0]) or len(symbols) < 2:
            flat = symbols.tolist()
            return [self.merge(flat[a:b]) for a, b in zip([0, *ends[:-1]], ends)]
        if early is None:
            rank = self._first_ranks(symbols, table)
        else:  # (a word's first symbols are mostly one-unit tokens: their pairs' ranks in a 256 x 256 table)
            rank = early.unit_pair_ranks(symbols)
            others = np.flatnonzero(rank < 0)
            if len(others):
                rank[others] = self._ranks_of(symbols[others] * self.shift + symbols[others + 1], table)
            rank[np.asarray(ends[:-1], dtype=np.int64) - 1] = INF  # (pairs across two words)
            merged, lengths = early.merge_early(symbols, rank, np.diff(np.asarray(ends, dtype=np.int64), prepend=0))
            if len(merged) < len(symbols):
                symbols, ends = merged, np.cumsum(lengths).tolist()
                rank = self._first_ranks(symbols, table)
        flat, first = symbols.tolist(), rank.tolist()  # (pairs across two words: never read)
        bounds = list(zip([0, *ends[:-1]], ends))
        short = iter(self._merge_ranked((flat[a:b], first[a:b - 1]) for a, b in bounds if b - a <= SHORT_WORD))
        return [next(short) if b - a <= SHORT_WORD else self._merge_heap(flat[a:b], None, first[a:b - 1])
                for a, b in bounds]

    def _first_ranks(self, symbols: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The rank of each neighbouring pair of `symbols` (INF: no rule), looked up in the pair table."""
        return self._ranks_of(symbols[:-1] * self.shift + symbols[1:], table)

    @staticmethod
    def _ranks_of(wanted: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        """The rank of each pair key (INF: no rule), searched in the sorted pair table."""
        keys, ranks = table
        if len(wanted) >= SORTED_SEARCH:  # (searched in key order: the sorted keys walked once, cache-friendly)
            order = wanted.argsort()
            found = np.empty(len(wanted), dtype=np.int64)
            found[order] = _searched(keys, ranks, wanted[order])
            return found
        return _searched(keys, ranks, wanted)

    def _merge_heap(self, syms: list[int], firings: list[Firing] | None, first: list[int] | None = None) -> list[int]:
        """`syms` merged with a heap of (rank, position); `first`: the ranks of its pairs, if known."""
        get = self.ranks.get
        shift = self.shift
        news = self.news
        n = len(syms)
        nxt = list(range(1, n + 1))
        nxt[-1] = -1
        prv = list(range(-1, n - 1))
        alive = [True] * n
        if first is None:
            first = [get(a * shift + b, INF) for a, b in zip(syms, syms[1:])]
        heap = [(r, i) for i, r in enumerate(first) if r != INF]
        heapq.heapify(heap)
        pop, push = heapq.heappop, heapq.heappush
        while heap:
            r, i = pop(heap)
            if not alive[i]:
                continue
            j = nxt[i]
            if j < 0 or get(syms[i] * shift + syms[j], INF) != r:
                continue  # stale: the pair at i changed since it was pushed
            syms[i] = new = news[r]
            alive[j] = False
            k = nxt[j]
            nxt[i] = k
            if k >= 0:
                prv[k] = i
            if firings is not None:
                firings.append((r, i, j))
            p = prv[i]
            if p >= 0 and (pr := get(syms[p] * shift + new, INF)) != INF:
                push(heap, (pr, p))
            if k >= 0 and (kr := get(new * shift + syms[k], INF)) != INF:
                push(heap, (kr, i))
        return [s for s, keep in zip(syms, alive) if keep]


def _searched(keys: np.ndarray, ranks: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    at = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    found: np.ndarray = np.where(keys[at] == wanted, ranks[at], INF)
    return found


__all__ = ["Firing", "INF", "LibraryMerges", "SHORT_WORD"]
