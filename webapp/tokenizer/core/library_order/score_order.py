"""SentencePiece's merge order: the pair whose joined piece scores highest fires next, the leftmost on ties.

What it does not do: map text to symbols (models/library.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from itertools import accumulate, chain

import numpy as np

from webapp.tokenizer.core.library_order.early_pairs import EarlyPairs
from webapp.tokenizer.core.ranks import INF
from webapp.tokenizer.core.library_order.merges import SHORT_WORD, Firing, LibraryMerges, Lookups


#: From this many words, `ScoreMerges.merge_many` merges them in rounds with numpy (fewer: one by one).
BATCH_WORDS = 64
#: A batch's rounds stop once this few words still merge: those are finished one by one. (A round costs
#: about as much as merging 30 short words in Python; the last words often have several rounds to go.)
ROUNDS_FEW_LEFT = 64
#: At most this many cells (int64) in `ScoreMerges.atom_grid`; rules that need more are looked up in `level_table` alone.
ATOM_GRID_CELLS = 1 << 19
#: A `PairIndex` whose keys crowd its hash table more than this keeps them sorted instead.
PROBE_LIMIT = 32
#: Up to this many keys not in their home slot, a lookup compares each one's every possible slot at once
#: (a few numpy calls, where probing a slot a pass takes several passes); more are probed a slot a pass.
WINDOW_KEYS = 512
_FIBONACCI = np.int64(0x9E3779B97F4A7C15 - (1 << 64))  # (2**64 over the golden ratio, as int64: spreads keys apart)


class ScoreMerges(LibraryMerges):
    """Rules in score order with a level each (see the module doc)."""

    __slots__ = ("levels", "_level_table", "_atom_grid", "_grid_tried")

    def __init__(self, rules: Iterable[Sequence[int]] | np.ndarray, levels: Sequence[int] | np.ndarray) -> None:
        super().__init__(rules)
        steps = np.asarray(levels, dtype=np.int64)
        if len(steps) != self.count or (len(steps) > 1 and bool((steps[1:] < steps[:-1]).any())):
            raise ValueError("score order: one level per rule, never decreasing")
        if len(self.ranks) != self.count:
            raise ValueError("score order: a pair is listed twice")
        self.levels: list[int] = steps.tolist()
        self._level_table: PairIndex | None = None
        self._atom_grid: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._grid_tried = False

    def pair_table(self) -> tuple[np.ndarray, np.ndarray] | None:
        return None  # (no batch tables: see the module doc)

    def _merge_ranked(
        self, words: Iterable[tuple[list[int], list[int]]], lookups: Lookups | None = None,
    ) -> list[list[int]]:
        """Each word merged by `_merge_levels`, the ranks given turned into levels.

        `lookups` is taken for the base class's calls and not used: this order has no stored pair
        table, so the pair map is always made (the same answers)."""
        levels = self.levels
        return [self._merge_levels(syms, [levels[r] if r != INF else INF for r in ranks]) for syms, ranks in words]

    def _merge_levels(self, syms: list[int], lv: list[int]) -> list[int]:
        """`syms` merged by a scan per merge over its pairs' levels (`lv`, INF where no rule has the pair)."""
        get, shift, news, levels = self.ranks.get, self.shift, self.news, self.levels
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
        return syms

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


    def level_table(self) -> PairIndex:
        """Every rule's pair key (a * shift + b) with its level and its new id, in a `PairIndex` (made
        on first use): for looking many pairs up at once (`merge_many`)."""
        table = self._level_table
        if table is None:
            ranks = self.ranks
            keys = np.fromiter(ranks.keys(), dtype=np.int64, count=len(ranks))
            by_rank = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
            table = self._level_table = PairIndex(keys, np.asarray(self.levels, dtype=np.int64)[by_rank],
                                                  np.asarray(self.news, dtype=np.int64)[by_rank],
                                                  self.levels[-1] + 1 if self.levels else 0)
        return table

    def atom_grid(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The rules joining two atoms (ids no rule makes: a word's first symbols) as a grid of
        `level_table()`'s packed values: (by id, its row's first cell; by id, its column; the cells).
        An atom that starts (ends) no such rule has a row (column) of `missing`; any other id a row
        (column) of -1: ask `level_table`. None when it would pass ATOM_GRID_CELLS. Made on first use."""
        if not self._grid_tried:
            self._grid_tried = True
            keys, shift, index = self.pair_keys(), self.shift, self.level_table()
            left, right = keys // shift, keys % shift
            made = np.zeros(shift, dtype=bool)
            made[np.asarray(self.news, dtype=np.int64)] = True
            atoms = ~made[left] & ~made[right]
            row_ids, column_ids = sorted_distinct(left[atoms]), sorted_distinct(right[atoms])
            height, width = len(row_ids) + 2, len(column_ids) + 2  # (then the row of `missing`, the row of -1)
            if height * width <= ATOM_GRID_CELLS:
                rows = np.where(made, (height - 1) * width, (height - 2) * width).astype(np.int32)
                rows[row_ids] = np.arange(len(row_ids), dtype=np.int32) * width
                columns = np.where(made, width - 1, width - 2).astype(np.int32)
                columns[column_ids] = np.arange(len(column_ids), dtype=np.int32)
                cells = np.full((height, width), index.missing, dtype=np.int64)
                cells[-1, :] = cells[:, -1] = -1
                cells.ravel()[rows[left[atoms]] + columns[right[atoms]]] = index.packed(keys[atoms])
                self._atom_grid = rows, columns, cells.ravel()
        return self._atom_grid

    def packed_pairs(self, left: np.ndarray, right: np.ndarray) -> np.ndarray:
        """`level_table().packed` of each pair (left, right ids, int64, below the shift): the pairs of two
        atoms read from `atom_grid`, the others from the table."""
        index, grid = self.level_table(), self.atom_grid()
        if grid is None:
            return index.packed(left * self.shift + right)
        rows, columns, cells = grid
        out: np.ndarray = cells[rows[left] + columns[right]]
        other = (out < 0).nonzero()[0]
        if len(other):
            out[other] = index.packed(left[other] * self.shift + right[other])
        return out

    def make_tables(self) -> None:
        """The pair map, the new ids and `level_table` made now (a server, before it serves)."""
        super().make_tables()
        self.level_table()
        self.atom_grid()

    def merge_many(self, symbols: np.ndarray, ends: Sequence[int], early: EarlyPairs | None = None) -> list[list[int]]:
        """`merge` of many words at once (`symbols` in a row, int64, each below the shift; `ends` where each
        word ends): `merge_many_flat`, as one list per word. `early`: unused (this order has no early pairs)."""
        flat, sizes = self.merge_many_flat(symbols, ends)
        ids = flat.tolist()
        bounds = [0, *accumulate(sizes.tolist())]
        return [ids[a:b] for a, b in zip(bounds, bounds[1:])]

    def merge_many_flat(self, symbols: np.ndarray, ends: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """`merge` of many words at once: (every word's merged symbols in a row, int64; each word's count
        of them). `symbols`: the words in a row (int64, each below the shift), `ends`: where each ends
        (every word non-empty).
        """
        count = len(ends)
        bounds = np.asarray(ends, dtype=np.int64)
        lengths = bounds.copy()
        lengths[1:] -= bounds[:-1]
        if count < BATCH_WORDS or self.shift > 1 << 31 or not self.count:
            flat = np.asarray(symbols, dtype=np.int64).tolist()
            merged = [self.merge(flat[a:b]) for a, b in zip([0, *bounds[:-1].tolist()], bounds.tolist())]
            sizes = np.fromiter(map(len, merged), dtype=np.int64, count=count)
            return np.fromiter(chain.from_iterable(merged), dtype=np.int64, count=int(sizes.sum())), sizes
        index, shift = self.level_table(), self.shift
        none = index.none
        syms = np.array(symbols, dtype=np.int64)  # (a copy: merging writes into it)
        # By symbol: the pair it starts, as its level << 32 | its new id (`index.missing` at a word's last
        # symbol and where no rule has the pair): one array for both, moved and compared as one. Every word
        # stays in the row, in order, to the end: one with no pair left has no candidate in a round.
        pair = np.concatenate((self.packed_pairs(syms[:-1], syms[1:]), [index.missing]))
        pair[bounds[:-1] - 1] = index.missing
        while True:
            n = len(syms)
            starts = lengths.cumsum() - lengths
            key = (pair >> 32) * n + np.arange(n, dtype=np.int64)  # ((level, position): the literal order's key)
            best = np.minimum.reduceat(key, starts)
            going = best < none * n  # (words with a pair left)
            if np.count_nonzero(going) <= ROUNDS_FEW_LEFT:
                return self._finish(syms, pair, starts, lengths, going)
            syms, pair, lengths = _merge_round(syms, pair, lengths, starts, key, best, index, shift)

    def _finish(self, syms: np.ndarray, pair: np.ndarray, starts: np.ndarray, lengths: np.ndarray,
                going: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`merge_many_flat`'s answer once few words have a pair left (`going`): those merged in Python
        (`_merge_levels`, their levels read from `pair`; the long ones `merge`) and put back in their places."""
        if not going.any():
            return syms, lengths
        at = going.nonzero()[0]
        flat, level = syms.tolist(), pair >> 32
        lv = np.where(level >= self.level_table().none, INF, level).tolist()
        done = [self._merge_levels(flat[a:a + size], lv[a:a + size - 1]) if size <= SHORT_WORD
                else self.merge(flat[a:a + size]) for a, size in zip(starts[at].tolist(), lengths[at].tolist())]
        counts = np.fromiter(map(len, done), dtype=np.int64, count=len(done))
        sizes = lengths.copy()
        sizes[at] = counts
        firsts = sizes.cumsum() - sizes  # (where each word's symbols go in the answer)
        row = np.empty(int(firsts[-1] + sizes[-1]), dtype=np.int64)
        stay = (~going).repeat(lengths)  # (the symbols of the words already done)
        row[((firsts - starts).repeat(lengths) + np.arange(len(syms), dtype=np.int64))[stay]] = syms[stay]
        within = np.arange(int(counts.sum()), dtype=np.int64) - (counts.cumsum() - counts).repeat(counts)
        row[firsts[at].repeat(counts) + within] = np.fromiter(chain.from_iterable(done), dtype=np.int64,
                                                                 count=len(within))
        return row, sizes


def sorted_distinct(values: np.ndarray) -> np.ndarray:
    """`np.unique(values)` of a 1-D array without numpy.ma, which np.unique's first call in a process imports
    (about 10 ms, landing in a first encode)."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    distinct: np.ndarray = ordered[np.concatenate(([True], ordered[1:] != ordered[:-1]))]
    return distinct


def _merge_round(
    syms: np.ndarray, pair: np.ndarray, lengths: np.ndarray, starts: np.ndarray,
    key: np.ndarray, best: np.ndarray, index: PairIndex, shift: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One round of `merge_many_flat` over words in a row: (symbols, pairs, lengths) after it."""
    missing = index.missing
    rising = key[:-1] < key[1:]  # (keys are distinct: a position each)
    candidate = pair < (index.none << 32)  # (a pair some rule has)
    candidate[:-1] &= rising
    candidate[1:] &= ~rising
    c = candidate.nonzero()[0]
    word = starts.searchsorted(c, side="right") - 1
    # (a symbol before the pair in its word, and one after it)
    has_left, has_right = c > starts[word], c + 2 < starts[word] + lengths[word]
    adjacent = has_right[:-1] & (c[1:] - c[:-1] == 2)  # (candidates j and j + 1 one symbol apart)
    made = pair[c] & 0xFFFFFFFF
    left, right, both = has_left.nonzero()[0], has_right.nonzero()[0], adjacent.nonzero()[0]
    found = index.packed(np.concatenate((
        syms[c[left] - 1] * shift + made[left], made[right] * shift + syms[c[right] + 2],
        made[both] * shift + made[both + 1])))
    # Per candidate, each pair its merge can make (`missing` where it makes none), packed as `pair`.
    left_pair, right_pair, both_pair = (np.full(len(c), missing, dtype=np.int64) for _ in range(3))
    left_pair[left] = found[:len(left)]
    right_pair[right] = found[len(left):len(left) + len(right)]
    both_pair[both] = found[len(left) + len(right):]
    near = candidate.copy()  # (a candidate or next to one)
    near[1:] |= candidate[:-1]
    near[:-1] |= candidate[1:]
    blocking = np.where(near, missing, pair)
    blocking[c] = np.minimum(np.minimum(left_pair, right_pair), both_pair)  # (least packed: least level)
    block = np.minimum.reduceat(blocking, starts) >> 32
    fire = ((pair[c] >> 32) < block[word]) | (key[c] == best[word])
    fired = c[fire]
    with_next = np.concatenate((fire[1:] & adjacent, [False]))  # (the new piece after it is made too: their pair)
    with_prev = np.concatenate(([False], fire[:-1] & adjacent))
    syms[fired] = made[fire]
    pair[fired] = np.where(with_next, both_pair, right_pair)[fire]
    before = fire & has_left & ~with_prev  # (the pair ending at the new piece; a new piece before: done above)
    pair[c[before] - 1] = left_pair[before]
    keep = np.ones(len(syms), dtype=bool)
    keep[fired + 1] = False
    return syms[keep], pair[keep], lengths - np.bincount(word[fire], minlength=len(lengths))


class PairIndex:
    """Pair keys (int64, not negative) -> (level, new id), looked up many at a time with numpy."""

    __slots__ = ("none", "bits", "slots", "values", "sorted_keys", "missing", "steps")

    def __init__(self, keys: np.ndarray, levels: np.ndarray, news: np.ndarray, none: int) -> None:
        """`none`: the level answered for a key that is not there (above every level)."""
        self.none = none
        self.missing = (none << 32) | 0xFFFFFFFF
        packed = (levels.astype(np.int64) << 32) | news.astype(np.int64)  # (levels and ids below 2**31)
        self.bits = max(4, len(keys).bit_length() + 2)
        size = (1 << self.bits) + PROBE_LIMIT + 1  # (room past the last home slot: probes never wrap)
        slots = np.full(size, -1, dtype=np.int64)
        values = np.full(size, self.missing, dtype=np.int64)
        pending = np.arange(len(keys), dtype=np.int64)
        at = self._home(keys)
        for _ in range(PROBE_LIMIT):  # (each pass, every key still waiting takes its slot if free and first)
            if not len(pending):
                break
            where = at[pending]
            free = slots[where] < 0
            slot, first = np.unique(where[free], return_index=True)
            won = pending[free][first]
            slots[slot], values[slot] = keys[won], packed[won]
            placed = np.zeros(len(keys), dtype=bool)
            placed[won] = True
            pending = pending[~placed[pending]]
            at[pending] += 1
        runs = np.diff(np.concatenate(([0], (slots >= 0).view(np.int8), [0]))).nonzero()[0]
        longest = int((runs[1::2] - runs[::2]).max(initial=0))
        self.sorted_keys: tuple[np.ndarray, np.ndarray] | None = None
        if len(pending) or longest >= PROBE_LIMIT:
            order = np.argsort(keys)
            self.sorted_keys = (keys[order], packed[order])
        self.slots, self.values = slots, values
        # (a key sits fewer slots past its home than the longest run of taken slots: the offsets to look at)
        self.steps = np.arange(1, max(longest, 1), dtype=np.int64)

    def _home(self, keys: np.ndarray) -> np.ndarray:
        # (the top `bits` bits of key * _FIBONACCI mod 2**64, in int64: the product wraps the same way,
        # and the mask drops what the arithmetic shift copies of the sign)
        home: np.ndarray = ((keys * _FIBONACCI) >> (64 - self.bits)) & ((1 << self.bits) - 1)
        return home

    def look_up(self, pairs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(level, new id) of each pair key (int64): `none` and an id no rule makes when no rule has it."""
        packed = self.packed(pairs)
        return packed >> 32, packed & 0xFFFFFFFF

    def has(self, pairs: np.ndarray) -> np.ndarray:
        """Whether each pair key (int64) is one of the index's keys (bool)."""
        if self.sorted_keys is not None:
            found: np.ndarray = self.packed(pairs) != self.missing  # (a key's level is below `none`)
            return found
        return self._slots_of(pairs) >= 0  # (no value read)

    def packed(self, pairs: np.ndarray) -> np.ndarray:
        """level << 32 | new id of each pair key (int64); `missing` when no rule has it."""
        if self.sorted_keys is not None:
            keys, packed = self.sorted_keys
            if not len(keys):
                return np.full(len(pairs), self.missing, dtype=np.int64)
            at = np.minimum(keys.searchsorted(pairs), len(keys) - 1)
            return np.where(keys[at] == pairs, packed[at], self.missing)
        at = self._slots_of(pairs)
        out: np.ndarray = np.where(at >= 0, self.values[at], self.missing)  # (slot -1 reads the last, unused)
        return out

    def _slots_of(self, pairs: np.ndarray) -> np.ndarray:
        """The slot of each pair key (int64) in the hash table, -1 when it is not there."""
        slots = self.slots
        at = self._home(pairs)
        found = slots[at]
        hit = found == pairs
        out = np.where(hit, at, -1)
        pending = (~hit & (found >= 0)).nonzero()[0]  # (another key in its home slot: the next ones)
        if len(pending) <= WINDOW_KEYS and len(self.steps):
            # (every slot a key can be in, past its home, compared at once: each key is in one slot, and a
            # slot that is free or holds another key never matches; one pass where probing took several)
            where = at[pending, None] + self.steps
            row, col = np.nonzero(slots[where] == pairs[pending, None])
            out[pending[row]] = where[row, col]
            return out
        where = at[pending] + 1
        while len(pending):  # (at most PROBE_LIMIT passes: no run of taken slots is that long)
            found = slots[where]
            hit = found == pairs[pending]
            out[pending[hit]] = where[hit]
            go = ~hit & (found >= 0)
            pending, where = pending[go], where[go] + 1
        return out


def levels_from_runs(runs: Sequence[int]) -> np.ndarray:
    """Levels per rule (int64) from the number of rules at each level, in order."""
    counts = np.asarray(runs, dtype=np.int64)
    if len(counts) and int(counts.min()) < 0:
        raise ValueError("score order: a level has a negative number of rules")
    return np.arange(len(counts), dtype=np.int64).repeat(counts)


__all__ = ["PairIndex", "ScoreMerges", "levels_from_runs"]
