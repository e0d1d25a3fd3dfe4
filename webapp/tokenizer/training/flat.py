"""The corpus trainer: BPE over distinct pre-tokens laid out in one flat array of symbol positions.

What it does not do: no runner-up lists or traces (the Train page's
`words.train_trace` does that for small inputs), no pre-tokenization, no
validation of its inputs (the corpus module checks them), no more than 2**31
positions (characters of the distinct words plus one per word) in all.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from array import array
from collections import defaultdict
from collections.abc import Mapping

import numpy as np
import numpy.typing as npt

# A pair key is left << SHIFT | right; ids stay far below 2**31.
SHIFT = 32
LOW = (1 << SHIFT) - 1
# A merge with at least this many listed positions runs vectorised (numpy calls
# cost microseconds each, a position in Python about one).
VECTOR_MIN = 48
# Runs of new positions at least this long are kept as numpy chunks, shorter ones as Python ints.
CHUNK_MIN = 16
# The heap is rebuilt once it holds this many more entries than four per live pair.
HEAP_REBUILD_SLACK = 4096

Ints = npt.NDArray[np.int64]
Positions = npt.NDArray[np.intc]


def _view(buffer: array[int], dtype: type[np.generic]) -> npt.NDArray[np.generic]:
    """A numpy array over the same memory as `buffer` (writes go to both)."""
    return np.frombuffer(buffer, dtype=dtype)


class FlatTrainer:
    """The state of one training run (see the module docstring for the layout and invariants)."""

    def __init__(self, freq: Mapping[str, int], *, vector_min: int | None = None,
                 chunk_min: int | None = None) -> None:
        """Start from each distinct word's frequency (words of fewer than two characters, or count 0, are left out).

        `vector_min` and `chunk_min` (default: the constants) only move work
        between the two paths; the tests set them to reach both on small inputs.
        """
        self.vector_min = VECTOR_MIN if vector_min is None else vector_min
        self.chunk_min = CHUNK_MIN if chunk_min is None else chunk_min
        words = [word for word, n in freq.items() if len(word) >= 2 and n > 0]
        freqs = np.fromiter((freq[word] for word in words), dtype=np.int64, count=len(words))
        lengths = np.fromiter(map(len, words), dtype=np.int64, count=len(words))
        joined = "".join(words)
        try:
            codes: npt.NDArray[np.integer] = np.frombuffer(joined.encode("latin-1"), dtype=np.uint8)
        except UnicodeEncodeError:
            codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        alphabet, ids = np.unique(codes, return_inverse=True)
        self.tok: list[str] = [chr(c) for c in alphabet.tolist()]
        self.id_of: dict[str, int] = {s: i for i, s in enumerate(self.tok)}

        # Character j of word w sits at (characters before it) + w + 1: one separator per word before it.
        size = len(codes) + len(words) + 1
        if size >= 1 << 31:
            # Positions are C ints; the corpus limits (LIMIT_CORPUS_BYTES) keep far below this.
            raise ValueError(f"corpus training: {size:,} positions in the distinct pre-tokens, over 2**31")
        owner = np.repeat(np.arange(len(words), dtype=np.int64), lengths)
        pos = np.arange(len(codes), dtype=np.int64) + owner + 1
        sym = np.full(size, -1, dtype=np.intc)
        sym[pos] = ids
        wf = np.zeros(size, dtype=np.int64)
        wf[pos] = freqs[owner]
        links = np.arange(size, dtype=np.intc)
        # The canonical storage is array.array (fast items from Python); numpy views share its memory.
        self.sym = array("i", sym.tobytes())
        self.nxt = array("i", np.minimum(links + 1, size - 1).astype(np.intc).tobytes())
        self.prv = array("i", np.maximum(links - 1, 0).astype(np.intc).tobytes())
        self.wf = array("q", wf.tobytes())
        self.mark = array("b", bytes(size))  # scratch for the vectorised merge, all 0 between merges
        self.v_sym = _view(self.sym, np.intc)
        self.v_nxt = _view(self.nxt, np.intc)
        self.v_prv = _view(self.prv, np.intc)
        self.v_wf = _view(self.wf, np.int64)
        self.v_mark = _view(self.mark, np.int8)
        self.merged_away = 0  # symbols taken away by merges, repeats counted (each match takes one)

        # Every adjacent pair inside a word: its count and its positions, grouped per key by one sort.
        starts = pos[(sym[pos] >= 0) & (sym[np.minimum(pos + 1, size - 1)] >= 0)]
        keys = (sym[starts].astype(np.int64) << SHIFT) | sym[starts + 1].astype(np.int64)
        order = np.argsort(keys, kind="stable")
        keys, starts = keys[order], starts[order].astype(np.intc)
        self.counts: dict[int, int] = {}
        self.index: defaultdict[int, list[int]] = defaultdict(list)
        self.chunks: defaultdict[int, list[Positions]] = defaultdict(list)
        if len(keys):
            first = _group_starts(keys)
            totals = np.add.reduceat(wf[starts], first)
            lows = first.tolist()
            for key, total, lo, hi in zip(keys[first].tolist(), totals.tolist(), lows, lows[1:] + [len(keys)]):
                self.counts[key] = total
                self.chunks[key].append(starts[lo:hi])
        tok = self.tok
        self.heap: list[tuple[int, str, str, int]] = [
            (-c, tok[k >> SHIFT], tok[k & LOW], k) for k, c in self.counts.items()]
        heapq.heapify(self.heap)

    def pair_count(self, first: str, second: str) -> int:
        """The current count of the pair of these two token strings (0 if either is unknown)."""
        a, b = self.id_of.get(first), self.id_of.get(second)
        if a is None or b is None:
            return 0
        return self.counts.get(a << SHIFT | b, 0)

    def take_best(self) -> tuple[tuple[str, str], int, int] | None:
        """The best pair (taken off the heap: merge it next), its count and the best other pair's count (0 if none)."""
        heap, counts = self.heap, self.counts
        while heap:
            neg, a, b, key = heapq.heappop(heap)
            c = counts.get(key, 0)
            if c == -neg:
                break
            if c and c < -neg:
                heapq.heappush(heap, (-c, a, b, key))
        else:
            return None
        while heap:
            neg2, a2, b2, key2 = heap[0]
            c = counts.get(key2, 0)
            if c == -neg2 and key2 != key:
                return (a, b), -neg, -neg2
            heapq.heappop(heap)  # stale, or the winner's pair pushed twice with the same count
            if c and c < -neg2 and key2 != key:
                heapq.heappush(heap, (-c, a2, b2, key2))
        return (a, b), -neg, 0

    def merge(self, pair: tuple[str, str]) -> None:
        """Merge every occurrence of `pair` (left to right in each word) and update counts, index and heap."""
        first, second = pair
        id_of = self.id_of
        a, b = id_of[first], id_of[second]
        made = first + second
        new = id_of.get(made)
        if new is None:
            new = id_of[made] = len(self.tok)
            self.tok.append(made)
        key = a << SHIFT | b
        listed = self.index.pop(key, [])
        chunks = self.chunks.pop(key, [])
        many = len(listed) + sum(map(len, chunks))
        if many >= self.vector_min and many:
            if listed:
                chunks.append(np.array(listed, dtype=np.intc))
            delta = self._merge_vectorised(np.concatenate(chunks), a, b, new)
        else:
            for chunk in chunks:
                listed += chunk.tolist()
            delta = self._merge_listed(listed, a, b, new)
        self._apply(delta, key)

    def _merge_listed(self, listed: list[int], a: int, b: int, new: int) -> dict[int, int]:
        """The merge one position at a time; the count changes per pair key."""
        if a == b:
            # Left to right, so that of overlapping matches ("aaa") the left one is taken:
            # merging it kills the next position, which then fails the check.
            listed.sort()
        sym, nxt, prv, wf = self.sym, self.nxt, self.prv, self.wf
        delta: defaultdict[int, int] = defaultdict(int)
        index = self.index
        b_key = b << SHIFT
        new_key = new << SHIFT
        away = 0
        for p in listed:
            if sym[p] != a:
                continue
            q = nxt[p]
            if sym[q] != b:
                continue
            f = wf[p]
            away += f
            left = prv[p]
            x = sym[left]
            if x >= 0:
                x <<= SHIFT
                delta[x | a] -= f
                k = x | new
                delta[k] += f
                index[k].append(left)
            r = nxt[q]
            y = sym[r]
            if y >= 0:
                delta[b_key | y] -= f
                k = new_key | y
                delta[k] += f
                index[k].append(p)
            sym[p] = new
            sym[q] = -1
            nxt[p] = r
            prv[r] = p
        self.merged_away += away
        return delta

    def _merge_vectorised(self, listed: Positions, a: int, b: int, new: int) -> dict[int, int]:
        """The same merge as `_merge_listed`, as whole-array operations; the count changes per pair key."""
        sym, nxt, prv, wf, mark = self.v_sym, self.v_nxt, self.v_prv, self.v_wf, self.v_mark
        if a == b:
            listed = np.sort(listed)
        nexts = nxt[listed]
        hit = (sym[listed] == a) & (sym[nexts] == b)
        p, q = listed[hit], nexts[hit]
        if a == b and len(p) > 1:
            # Runs of overlapping matches (a a a a: starts at 0, 1, 2 chained by q[i-1] == p[i]):
            # the literal scan takes the 1st, 3rd, ... of each run.
            i = np.arange(len(p))
            chained = np.zeros(len(p), dtype=bool)
            chained[1:] = p[1:] == q[:-1]
            run_start = np.where(chained, 0, i)
            np.maximum.accumulate(run_start, out=run_start)
            take = ((i - run_start) & 1) == 0
            p, q = p[take], q[take]
        if not len(p):
            return {}
        left, right = prv[p], nxt[q]
        f = wf[p]
        self.merged_away += int(f.sum())
        x, y = sym[left].astype(np.int64), sym[right].astype(np.int64)
        mark[p] = 1
        mark[q] = 2
        # Left neighbour: the pair (x, a) becomes (x, new). When the left neighbour is the
        # right half of another match (a b a b), it is (b, a) that goes and (new, new) that
        # comes, at that match's start; that match does not count its right side then.
        has_left = x >= 0
        left_matched = mark[left] == 2
        has_right = (y >= 0) & (mark[right] != 1)
        mark[p] = 0
        mark[q] = 0
        fl, fr = f[has_left], f[has_right]
        xl, yr = x[has_left], y[has_right]
        after_matched = left_matched[has_left]
        new_left = np.where(after_matched, new, xl)
        new_left_at = np.where(after_matched, prv[left[has_left]], left[has_left])
        made_keys = np.concatenate(((new_left << SHIFT) | new, (new << SHIFT) | yr))
        made_at = np.concatenate((new_left_at, p[has_right])).astype(np.intc)
        keys = np.concatenate(((xl << SHIFT) | a, (b << SHIFT) | yr, made_keys))
        weights = np.concatenate((-fl, -fr, fl, fr))
        # Rewrite the links (after every read above).
        sym[p] = new
        sym[q] = -1
        nxt[p] = right
        prv[right] = p
        self._index_made(made_keys, made_at)
        return _sum_per_key(keys, weights)

    def _index_made(self, keys: Ints, at: Positions) -> None:
        """List each new pair's positions under its key (numpy chunks for long runs, ints for short ones)."""
        if not len(keys):
            return
        order = np.argsort(keys, kind="stable")
        keys, at = keys[order], at[order]
        starts = _group_starts(keys)
        lows = starts.tolist()
        listed = at.tolist()  # one conversion; short runs are list slices
        index, chunks, chunk_min = self.index, self.chunks, self.chunk_min
        for key, lo, hi in zip(keys[starts].tolist(), lows, lows[1:] + [len(keys)]):
            if hi - lo >= chunk_min:
                chunks[key].append(at[lo:hi])
            else:
                index[key] += listed[lo:hi]

    def _apply(self, delta: Mapping[int, int], merged: int) -> None:
        """Add the count changes; a rise pushes a heap entry, a pair at zero leaves counts and index."""
        counts, heap, tok = self.counts, self.heap, self.tok
        index, chunks = self.index, self.chunks
        for k, d in delta.items():
            if d == 0 or k == merged:
                continue
            c = counts.get(k, 0) + d
            if c > 0:
                counts[k] = c
                if d > 0:  # a decrease keeps its older, higher entry: fixed when it surfaces
                    heapq.heappush(heap, (-c, tok[k >> SHIFT], tok[k & LOW], k))
            else:
                counts.pop(k, None)
                index.pop(k, None)
                chunks.pop(k, None)
        # Every occurrence of the merged pair is gone (a leftover a a would have been matched).
        counts.pop(merged, None)
        if len(heap) > 4 * len(counts) + HEAP_REBUILD_SLACK:
            # Mostly stale entries: rebuild, so memory stays proportional to the live pairs.
            self.heap = [(-c, tok[k >> SHIFT], tok[k & LOW], k) for k, c in counts.items()]
            heapq.heapify(self.heap)


def _sum_per_key(keys: Ints, weights: Ints) -> dict[int, int]:
    """The weights summed per distinct key."""
    if not len(keys):
        return {}
    order = np.argsort(keys, kind="stable")
    keys, weights = keys[order], weights[order]
    starts = _group_starts(keys)
    sums = np.add.reduceat(weights, starts)
    return dict(zip(keys[starts].tolist(), sums.tolist()))


def _group_starts(keys: Ints) -> Ints:
    """Where each run of equal values starts in sorted, non-empty `keys` (np.r_ costs several microseconds more)."""
    changes = np.flatnonzero(keys[1:] != keys[:-1])
    changes += 1
    return np.concatenate((np.zeros(1, dtype=changes.dtype), changes))
