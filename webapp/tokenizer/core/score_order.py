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

Many words at once (`merge_many`, what a batch of new pieces takes) merge in
rounds with numpy over all of them, with a table of every rule's pair key,
level and new id (`level_table`): one merge per word and round, the best pair
of each word. The batch tables of LibraryMerges are not used (its pair table
and early pairs give a rank, and its merging reads a rule's new id by rank:
here one level is shared by several pairs, so the new id is read by pair;
`pair_table()` is None).

What it does not do: map text to symbols (hf/model.py).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from itertools import accumulate

import numpy as np

from webapp.tokenizer.core.early_pairs import EarlyPairs
from webapp.tokenizer.core.engine import INF
from webapp.tokenizer.core.library_order import Firing, LibraryMerges, Lookups


#: From this many words, `ScoreMerges.merge_many` merges them in rounds with numpy (fewer: one by one).
BATCH_WORDS = 64
#: A batch's rounds stop once this few words still merge: those are finished one by one.
ROUNDS_FEW_LEFT = 8


class ScoreMerges(LibraryMerges):
    """Rules in score order with a level each (see the module doc)."""

    __slots__ = ("levels", "_level_table")

    def __init__(self, rules: Iterable[Sequence[int]] | np.ndarray, levels: Sequence[int] | np.ndarray) -> None:
        super().__init__(rules)
        steps = np.asarray(levels, dtype=np.int64)
        if len(steps) != self.count or (len(steps) > 1 and bool((steps[1:] < steps[:-1]).any())):
            raise ValueError("score order: one level per rule, never decreasing")
        if len(self.ranks) != self.count:
            raise ValueError("score order: a pair is listed twice")
        self.levels: list[int] = steps.tolist()
        self._level_table: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

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


    def level_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every rule's pair key (a * shift + b) sorted, with its level and its new id beside it (int64,
        made on first use): for looking many pairs up at once (`merge_many`)."""
        table = self._level_table
        if table is None:
            ranks = self.ranks
            keys = np.fromiter(ranks.keys(), dtype=np.int64, count=len(ranks))
            by_rank = np.fromiter(ranks.values(), dtype=np.int64, count=len(ranks))
            order = np.argsort(keys)
            table = self._level_table = (keys[order], np.asarray(self.levels, dtype=np.int64)[by_rank[order]],
                                         np.asarray(self.news, dtype=np.int64)[by_rank[order]])
        return table

    def make_tables(self) -> None:
        """The pair map, the new ids and `level_table` made now (a server, before it serves)."""
        super().make_tables()
        self.level_table()

    def merge_many(self, symbols: np.ndarray, ends: Sequence[int], early: EarlyPairs | None = None) -> list[list[int]]:
        """`merge` of many words at once (`symbols` in a row, int64, each below the shift; `ends` where each
        word ends), in rounds over all of them with numpy. Every neighbouring pair's level and new id
        are looked up in `level_table`; in each round, in every word that still has a pair, the best
        one ((level, position) least) fires, and a word with no pair left is done. That is `merge` of
        each word, one merge a round: the words are independent, and after a round the two pairs beside
        each new piece are looked up again, the only pairs a merge changes, so no level is stale. Once
        ROUNDS_FEW_LEFT words or fewer still merge, they are finished one by one (a long word would cost
        a round of numpy calls per merge). Fewer than BATCH_WORDS words go one by one. `early`: unused
        (this order has no early pairs)."""
        count = len(ends)
        if count < BATCH_WORDS or self.shift > 1 << 31 or not self.count:
            flat = symbols.tolist()
            return [self.merge(flat[a:b]) for a, b in zip([0, *ends[:-1]], ends)]
        keys, levels, news = self.level_table()
        shift, none = self.shift, self.levels[-1] + 1  # (`none`: above every level, a pair with no rule)

        def look_up(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            """(level, new id) of each pair of symbols (none, -1: no rule)."""
            pair = left * shift + right
            # (not sorted first, as LibraryMerges' big lookups are: tried on 15,762 words with the Mistral v1
            # model's 58,980 rules, the sort cost more than it saved)
            at = np.minimum(np.searchsorted(keys, pair), len(keys) - 1)
            hit = keys[at] == pair
            return np.where(hit, levels[at], none), np.where(hit, news[at], -1)

        out: list[list[int] | None] = [None] * count
        syms = np.array(symbols, dtype=np.int64)  # (a copy: merging writes into it)
        lengths: np.ndarray = np.diff(np.asarray(ends, dtype=np.int64), prepend=0).astype(np.int64)
        word = np.arange(count, dtype=np.int64)  # (which word each active word is)
        # By symbol: the level and new id of the pair it starts (none at a word's last symbol).
        level, new = look_up(syms[:-1], syms[1:])
        level, new = np.append(level, none), np.append(new, -1)
        level[np.cumsum(lengths)[:-1] - 1] = none
        while True:
            n = len(syms)
            starts = np.cumsum(lengths) - lengths
            best = np.minimum.reduceat(level * n + np.arange(n, dtype=np.int64), starts)
            done = best >= none * n
            if done.any():  # (words with no pair left: taken out)
                finished = np.flatnonzero(done)
                flat, sizes = syms[np.repeat(done, lengths)].tolist(), lengths[finished].tolist()
                bounds = [0, *accumulate(sizes)]
                for w, a, b in zip(word[finished].tolist(), bounds, bounds[1:]):
                    out[w] = flat[a:b]
            going = np.flatnonzero(~done)
            if len(going) <= ROUNDS_FEW_LEFT:
                flat = syms.tolist()
                for w, a, size in zip(word[going].tolist(), starts[going].tolist(), lengths[going].tolist()):
                    out[w] = self.merge(flat[a:a + size])
                break
            fire = best[going] % n  # (the left symbol of each word's best pair: it becomes the new piece)
            syms[fire] = new[fire]
            keep = np.repeat(~done, lengths)
            keep[fire + 1] = False
            merged = (np.cumsum(keep) - 1)[fire]  # (where each new piece is once the arrays are packed)
            syms, level, new = syms[keep], level[keep], new[keep]
            lengths, word = lengths[going] - 1, word[going]
            first = np.cumsum(lengths) - lengths
            # Only the pairs beside each new piece changed: looked up again (the one it starts, unless it
            # is its word's last symbol now; the one before it, unless it is its word's first).
            level[merged] = none
            changed = np.concatenate((merged[merged < first + lengths - 1], merged[merged > first] - 1))
            level[changed], new[changed] = look_up(syms[changed], syms[changed + 1])
        return out  # type: ignore[return-value]  # (every word was given its symbols)


def levels_from_runs(runs: Sequence[int]) -> np.ndarray:
    """Levels per rule (int64) from the number of rules at each level, in order."""
    counts = np.asarray(runs, dtype=np.int64)
    if len(counts) and int(counts.min()) < 0:
        raise ValueError("score order: a level has a negative number of rules")
    return np.repeat(np.arange(len(counts), dtype=np.int64), counts)


__all__ = ["ScoreMerges", "levels_from_runs"]
