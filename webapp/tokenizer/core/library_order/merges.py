"""The library's merge order: at each step the lowest-ranked pair present fires.

What it does not do: map text to symbols (models/library.py does: vocab, byte
fallback, unknown token), pre-tokenization, dropout.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Sequence

import numpy as np

from webapp.tokenizer.core.library_order.early_pairs import EarlyPairs
from webapp.tokenizer.core.ranks import INF
from webapp.tokenizer.core.int_pool import interned, shared_range

#: Up to this many symbols a word is merged by scanning its list of pair ranks.
SHORT_WORD = 48

#: From this many pair keys, a lookup sorts them first.
SORTED_SEARCH = 256

#: A list read from a stored pair table merges this many words (a first encode's) with binary
#: searches in that table before it makes its pair map (LibraryMerges._lookups): a search costs a
#: few µs a pair, the map a third of a second for gemma3's 514,906 rules, so the map is made once
#: about as much time went into searching as making it costs.
SEARCHED_WORDS = 20_000


class _Column:
    """A column of the rules' array read as Python ints (the new ids, before `LibraryMerges.news` is made)."""

    __slots__ = ("values",)

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def __getitem__(self, index: int) -> int:
        return int(self.values[index])

    def __len__(self) -> int:
        return len(self.values)


#: How a word merged on its own finds a pair's rank and a rule's new id (`LibraryMerges._lookups`).
Lookups = tuple[Callable[[int, int], int], tuple[int, ...] | _Column]

#: One merge as it fired: (rank, left symbol index, right symbol index), indices into the initial symbols.
Firing = tuple[int, int, int]


class LibraryMerges:
    """Rules (left, right, new) as the library's pair map: pair -> rank (its last listing) and new id."""

    __slots__ = ("shift", "_ranks", "_news", "count", "_pairs", "_flat", "_searched_words")

    def __init__(
        self, rules: Iterable[Sequence[int]] | np.ndarray, pair_table: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        """`rules`: (left, right, new) triples of non-negative ids, or an n x 3 integer array of them."""
        flat = rules if isinstance(rules, np.ndarray) else np.array(list(rules), dtype=object).reshape(-1, 3)
        self.count = count = len(flat)
        # (over the new ids too: a merged symbol is then always below the shift, so only the
        # initial symbols need checking before their pair key is made)
        top = int(flat.max()) if count else 0
        self.shift = shift = 1 << max(1, top.bit_length())
        self._ranks: dict[int, int] | None = None
        self._news: tuple[int, ...] | None = None
        self._pairs: tuple[np.ndarray, np.ndarray] | None = None
        self._flat: np.ndarray | None = None
        self._searched_words = 0
        if pair_table is not None and top < 1 << 31:
            keys, ranks = pair_table
            unsorted = len(keys) > 1 and bool((keys[1:] <= keys[:-1]).any())
            if len(ranks) != len(keys) or len(keys) > count or (count and not len(keys)) or unsorted:
                raise ValueError("the stored pair table does not match the rules")
            self._pairs = (keys, ranks)
            self._flat = flat
            return
        if top < 1 << 31:  # the usual case: keys fit in int64, made by numpy
            narrow = flat.astype(np.int64)
            keys_list = (narrow[:, 0] * shift + narrow[:, 1]).tolist()
            self._news = interned(narrow[:, 2].tolist())
        else:
            keys_list = [int(a) * shift + int(b) for a, b, _ in flat.tolist()]
            self._news = tuple(int(n) for n in flat[:, 2].tolist())
        # dict() keeps the last value of a repeated key: the last listing of a pair wins, as in the library.
        # The ranks are the shared int objects 0..count-1 (core/int_pool.py): one set for every list.
        self._ranks = dict(zip(keys_list, shared_range(count)))

    @property
    def ranks(self) -> dict[int, int]:
        """The library's pair map: pair key (a * shift + b) -> rank of the pair's last listing."""
        ranks = self._ranks
        if ranks is None:  # (from a stored pair table: the same map; two threads may both make it)
            keys, values = self._pairs  # type: ignore[misc]
            ranks = self._ranks = dict(zip(keys.tolist(), interned(values.tolist())))
        return ranks

    def pair_keys(self) -> np.ndarray:
        """Every rule's pair key (int64), read from a stored pair table when there is one (no pair map made)."""
        if self._pairs is not None:
            return self._pairs[0]
        return np.fromiter(self.ranks.keys(), dtype=np.int64, count=len(self.ranks))

    @property
    def news(self) -> tuple[int, ...]:
        """Each rule's new id, by rank."""
        news = self._news
        if news is None:
            flat = self._flat
            assert flat is not None  # (kept exactly when the new ids are made on first use)
            news = self._news = interned(flat[:, 2].astype(np.int64).tolist())
        return news

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
            return self._merge_heap(syms, firings, None, self._lookups())
        # A symbol no rule names (at or above the shift: every rule's ids are below it, see __init__)
        # is moved past shift**2 for the merging, so that any key made with it is above every rule's
        # key (below shift**2), and moved back after.
        far = shift * shift
        merged = self._merge([s + far if s >= shift else s for s in syms], firings)
        return [s - far if s >= far else s for s in merged]

    def _merge(self, syms: list[int], firings: list[Firing] | None) -> list[int]:
        if len(syms) <= SHORT_WORD and firings is None:
            return self._merge_short(syms)
        return self._merge_heap(syms, firings, None, self._lookups())

    def _merge_short(self, syms: list[int]) -> list[int]:
        get, news = self._lookups()
        shift = self.shift
        return self._merge_ranked([(syms, [get(a * shift + b, INF) for a, b in zip(syms, syms[1:])])], (get, news))[0]

    def _lookups(self, words: int = 1) -> Lookups:
        """How one word merged on its own finds pair ranks and new ids: the pair map and the new ids,
        or, for the first SEARCHED_WORDS words of a list read from a stored pair table, binary
        searches in that table and the rules' array (the same answers, without making the map)."""
        if self._ranks is None and self._flat is not None:
            self._searched_words += words
            if self._searched_words <= SEARCHED_WORDS:
                return self._searched_rank, _Column(self._flat[:, 2])
        return self.ranks.get, self.news

    def _searched_rank(self, key: int, default: int) -> int:
        """`ranks.get(key, default)` by a binary search in the stored pair table."""
        if key >= self.shift * self.shift:  # (no rule's key: see `merge`)
            return default
        keys, ranks = self._pairs  # type: ignore[misc]
        at = int(keys.searchsorted(key))
        return int(ranks[at]) if at < len(keys) and int(keys[at]) == key else default

    def _merge_ranked(
        self, words: Iterable[tuple[list[int], list[int]]],
        lookups: Lookups | None = None,
    ) -> list[list[int]]:
        """Each word's symbols merged, given the ranks of its neighbouring pairs (INF: no rule): a scan
        per merge. (One loop for many words: a call per word measured 14% slower on a chat's words.)
        `lookups`: (pair rank lookup, new ids) when not the pair map's (`_lookups`)."""
        get, news = lookups if lookups is not None else (self.ranks.get, self.news)
        shift = self.shift
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
        if (self._ranks is not None and len(keys) != len(self._ranks)) or len(ranks) != len(keys) or unsorted:
            raise ValueError("the stored pair table does not match the rules")
        self._pairs = (keys, ranks)

    def merge_many(self, symbols: np.ndarray, ends: Sequence[int], early: EarlyPairs | None = None) -> list[list[int]]:
        """`merge` of many words at once: `symbols` their symbols in a row (int64, each below the
        shift), `ends` where each word ends. The first rank of every neighbouring pair is looked up
        in one numpy pass (`pair_table`) and, given `early` (core/library_order/early_pairs.py), every word's early
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
        lookups = self._lookups(len(bounds))
        short = iter(self._merge_ranked(((flat[a:b], first[a:b - 1]) for a, b in bounds if b - a <= SHORT_WORD),
                                        lookups))
        return [next(short) if b - a <= SHORT_WORD else self._merge_heap(flat[a:b], None, first[a:b - 1], lookups)
                for a, b in bounds]

    def make_tables(self) -> None:
        """Make the pair map and the new ids now (a server, before it serves: see `_lookups`)."""
        _ = self.ranks, self.news

    @property
    def tables_made(self) -> bool:
        """Are the pair map and the new ids made (so no word is merged by binary searches)?"""
        return self._ranks is not None and self._news is not None

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

    def _merge_heap(
        self, syms: list[int], firings: list[Firing] | None, first: list[int] | None = None,
        lookups: Lookups | None = None,
    ) -> list[int]:
        """`syms` merged with a heap of (rank, position); `first`: the ranks of its pairs, if known;
        `lookups` as for `_merge_ranked`."""
        get, news = lookups if lookups is not None else (self.ranks.get, self.news)
        shift = self.shift
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
