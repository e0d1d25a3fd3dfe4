"""Character-level BPE training: learn merge rules from a list of words.

What it does not do: no splitting of text into words, no normalisation, no
byte-level training, no minimum frequency. Inputs come through the shared
validators in `validation.py`; arguments are never modified.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import heapq
from sys import intern
from array import array
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import accumulate, chain, count, pairwise
from operator import add

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.traces import PairCount, TrainingStep, TrainingTrace
from webapp.tokenizer.validation import validate_char_merges, validate_num_merges, validate_words

Pair = tuple[str, str]

DEFAULT_RUNNERS_UP = 3
DEFAULT_MAX_STEPS = 200
# The heap is rebuilt from the live counts once it holds this many more
# entries than four per live pair (stale entries pile up with every update).
HEAP_REBUILD_SLACK = 4096
# Words of at least this many characters get a position index (see _LongWord):
# a merge then costs them time per match, not per symbol.
LONG_WORD = 512


class _Trainer:
    """The incremental state of one training run over distinct words."""

    def __init__(self, freq: Mapping[str, int]) -> None:
        """Start from each distinct word's frequency (all positive)."""
        distinct = [word for word in freq if len(word) >= 2]  # shorter words never hold a pair
        self.words = distinct
        # A word's symbol list is made the first time a merge touches it.
        self.symbols: list[list[str] | _LongWord | None] = [None] * len(distinct)
        self.freq: list[int] = [freq[word] for word in distinct]
        # The smallest code point no word holds: one set of the characters present,
        # not a scan of all the text per candidate (a word holding every code
        # point would make that quadratic).
        present = set().union(*distinct)
        separator = next(ch for ch in map(chr, range(len(present) + 1)) if ch not in present)
        self.text = separator.join(distinct)
        # starts[w] is where word w begins in `text` (its length plus one separator per
        # earlier word); one extra entry closes the last word.
        self.starts: list[int] = list(map(add, accumulate(map(len, distinct), initial=0), count()))
        self.counts: dict[Pair, int] = _weighted_pair_counts(distinct, self.freq)
        self.where: defaultdict[Pair, set[int]] = defaultdict(set)
        self.heap: list[tuple[int, str, str]] = [(-c, a, b) for (a, b), c in self.counts.items()]
        heapq.heapify(self.heap)

    def top(self, k: int) -> list[PairCount]:
        """The k best distinct pairs (count desc, then (first, second) asc); the heap is left intact."""
        found: list[PairCount] = []
        popped: list[tuple[int, str, str]] = []
        seen: set[Pair] = set()
        heap, counts = self.heap, self.counts
        while heap and len(found) < k:
            entry = heapq.heappop(heap)
            neg, a, b = entry
            c = counts.get((a, b), 0)
            if c != -neg:
                if 0 < c < -neg:
                    heapq.heappush(heap, (-c, a, b))  # decreased since: its entry now
                continue  # stale: the count changed after this entry was pushed
            popped.append(entry)
            if (a, b) in seen:
                continue  # the same current count pushed twice
            seen.add((a, b))
            found.append(PairCount(pair=(a, b), count=-neg))
        for entry in popped:
            heapq.heappush(heap, entry)
        return found

    def take_best(self) -> tuple[PairCount, int] | None:
        """The best pair (taken off the heap: merge it next) and the count of the best other pair (0 if none)."""
        heap, counts = self.heap, self.counts
        while heap:
            neg, a, b = heapq.heappop(heap)
            c = counts.get((a, b), 0)
            if c == -neg:
                break
            if c and c < -neg:
                heapq.heappush(heap, (-c, a, b))  # decreased since: its entry now
        else:
            return None
        while heap:
            neg2, a2, b2 = heap[0]
            c = counts.get((a2, b2), 0)
            if c == -neg2 and (a2 != a or b2 != b):
                return PairCount(pair=(a, b), count=-neg), -neg2
            heapq.heappop(heap)  # stale, or the winner's pair pushed twice with the same count
            if c and c < -neg2 and (a2 != a or b2 != b):
                heapq.heappush(heap, (-c, a2, b2))
        return PairCount(pair=(a, b), count=-neg), 0

    def merge(self, pair: Pair) -> None:
        """Apply one merge to every word holding `pair` and update counts, index and heap."""
        first, second = pair
        merged = first + second
        counts, heap = self.counts, self.heap
        delta: defaultdict[Pair, int] = defaultdict(int)
        symbols, freq, where = self.symbols, self.freq, self.where
        words = self.words
        where_get = where.get
        for w in self._candidates(first, second, merged):
            old = symbols[w]  # this word's symbol list, rewritten in place
            if old is None:
                word = words[w]
                old = symbols[w] = _LongWord(word) if len(word) >= LONG_WORD else list(word)
            if isinstance(old, _LongWord):
                old.merge(first, second, merged, freq[w], delta, where, w)
                continue
            # Counting first avoids raising ValueError (slow) in the common cases.
            occurrences = old.count(first)
            if not occurrences:
                continue  # the string is there, but not on symbol boundaries
            if occurrences == 1:
                s = old.index(first)
                if s + 1 == len(old) or old[s + 1] != second:
                    continue
                single = True
            else:
                hits = _match_starts(old, first, second, occurrences)
                if not hits:
                    continue
                single = len(hits) == 1
                s = hits[0]
            f = freq[w]
            n = len(old)
            if single:
                # The common case, spelled out: one match at s.
                if s > 0:
                    left = old[s - 1]
                    p = (left, first)
                    delta[p] -= f
                    if occurrences == 1:
                        gone = where_get(p)
                        if gone is not None:
                            gone.discard(w)  # `first` occurs once here: (left, first) is nowhere else in the word
                    p = (left, merged)
                    delta[p] += f
                    where[p].add(w)
                if s + 2 < n:
                    right = old[s + 2]
                    p = (second, right)
                    delta[p] -= f
                    p = (merged, right)
                    delta[p] += f
                    where[p].add(w)
                old[s : s + 2] = [merged]
                continue
            last_old = n - 2  # the last pair position of the old word
            seen = -1
            for s in hits:
                for k in (s - 1, s, s + 1):
                    if seen < k <= last_old and k >= 0:
                        p = (old[k], old[k + 1])
                        delta[p] -= f
                        seen = k
            # One rebuild, not a slice assignment per hit: a long word with many
            # hits would otherwise cost a memmove of the whole list per hit.
            new = symbols[w] = _rebuild(old, hits, merged)
            last_new = len(new) - 2
            seen = -1
            for shift, s in enumerate(hits):
                j = s - shift  # where the made symbol sits in the new word
                for k in (j - 1, j):
                    if seen < k <= last_new and k >= 0:
                        p = (new[k], new[k + 1])
                        delta[p] += f
                        where[p].add(w)
                        seen = k
        for p, d in delta.items():
            if d == 0:
                continue
            c = counts.get(p, 0) + d
            if c > 0:
                counts[p] = c
                if d > 0:  # a decrease keeps its older, higher entry: fixed when it surfaces
                    heapq.heappush(heap, (-c, p[0], p[1]))
            else:
                counts.pop(p, None)
                where.pop(p, None)
        # Every occurrence of the pair was just merged (a leftover (a, a) would
        # have been matched by the scan), so it is gone everywhere; the single-
        # match path never subtracted it, hence the explicit drop.
        counts.pop(pair, None)
        where.pop(pair, None)
        if len(heap) > 4 * len(counts) + HEAP_REBUILD_SLACK:
            # Mostly stale entries: rebuild, so memory stays proportional to the live pairs.
            self.heap = [(-c, a, b) for (a, b), c in counts.items()]
            heapq.heapify(self.heap)

    def _candidates(self, first: str, second: str, merged: str) -> Collection[int]:
        """Word indices that may hold (first, second): a superset of those that do."""
        if len(first) > 1 or len(second) > 1:
            return self.where.get((first, second), ())
        found: list[int] = []
        bounds = self.starts
        find = self.text.find
        i = find(merged)
        while i >= 0:
            w = bisect_right(bounds, i) - 1
            found.append(w)
            i = find(merged, bounds[w + 1])  # the next candidate lies in a later word
        return found


def _positions() -> array[int]:
    """An empty list of word positions (8 bytes each)."""
    return array("q")


class _LongWord:
    """One long word as a linked list of symbols with an index pair -> start positions."""

    __slots__ = ("sym", "nxt", "prv", "at")

    def __init__(self, word: str) -> None:
        n = len(word)
        # Interned: one object per distinct character, not one per position.
        self.sym: list[str] = list(map(intern, word))
        self.nxt = array("q", range(1, n + 1))
        self.prv = array("q", range(-1, n - 1))
        self.at: defaultdict[Pair, array[int]] = defaultdict(_positions)
        at = self.at
        for p, pair in enumerate(pairwise(word)):
            at[pair].append(p)

    def merge(
        self,
        first: str,
        second: str,
        merged: str,
        f: int,
        delta: defaultdict[Pair, int],
        where: defaultdict[Pair, set[int]],
        w: int,
    ) -> None:
        """Merge every (first, second) left to right; add the count changes (times f) to `delta`."""
        starts = self.at.pop((first, second), None)
        if not starts:
            return
        sym, nxt, prv, at = self.sym, self.nxt, self.prv, self.at
        end = len(sym)
        for p in sorted(set(starts)):
            if sym[p] != first:
                continue  # merged away or rewritten since it was listed
            q = nxt[p]
            if q == end or sym[q] != second:
                continue
            r = nxt[q]
            left = prv[p]
            if left >= 0:
                symbol = sym[left]
                delta[(symbol, first)] -= f
                pair = (symbol, merged)
                delta[pair] += f
                at[pair].append(left)
                where[pair].add(w)
            if r != end:
                symbol = sym[r]
                delta[(second, symbol)] -= f
                pair = (merged, symbol)
                delta[pair] += f
                at[pair].append(p)
                where[pair].add(w)
                prv[r] = p
            sym[p] = merged
            sym[q] = ""  # no symbol is empty, so this never matches again
            nxt[p] = r


def _weighted_pair_counts(distinct: list[str], freq: list[int]) -> dict[Pair, int]:
    """Every adjacent pair over all words, each distinct word weighted by its frequency."""
    counts = Counter(chain.from_iterable(map(pairwise, distinct)))
    by_freq: dict[int, list[str]] = {}
    for word, f in zip(distinct, freq):
        if f > 1:
            by_freq.setdefault(f, []).append(word)
    for f, group in by_freq.items():
        extra = f - 1
        for pair, n in Counter(chain.from_iterable(map(pairwise, group))).items():
            counts[pair] += n * extra
    return dict(counts)


def _rebuild(symbols: list[str], hits: list[int], merged: str) -> list[str]:
    """`symbols` with the two symbols at each hit replaced by `merged`, in one pass."""
    out: list[str] = []
    prev = 0
    for s in hits:
        out += symbols[prev:s]
        out.append(merged)
        prev = s + 2
    out += symbols[prev:]
    return out


def _match_starts(symbols: list[str], first: str, second: str, occurrences: int) -> list[int]:
    """Start positions of the non-overlapping left-to-right matches of (first, second).

    `occurrences` is how often `first` occurs in `symbols`; each is visited
    once with a C-speed search, so the loop ends without a failed search.
    """
    hits: list[int] = []
    last = len(symbols) - 1
    remaining = occurrences
    i = 0
    while remaining:
        i = symbols.index(first, i)
        remaining -= 1
        if i < last and symbols[i + 1] == second:
            hits.append(i)
            if second == first:
                remaining -= 1  # the right operand was an occurrence of `first` too
            i += 2
        else:
            i += 1
    return hits


def _check_option(name: str, value: int) -> int:
    """Programmer-facing options (not user input): a non-negative int."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{name} should be a non-negative integer, got {value!r}")
    return value


def train_trace(
    words: Sequence[str],
    num_merges: int,
    *,
    runners_up: int = DEFAULT_RUNNERS_UP,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_token_chars: int | None = None,
    on_step: Callable[[int], None] | None = None,
) -> TrainingTrace:
    """Learn up to `num_merges` merges from `words` and record why each was chosen."""
    words = validate_words(words)
    num_merges = validate_num_merges(num_merges)
    runners_up = _check_option("runners_up", runners_up)
    max_steps = _check_option("max_steps", max_steps)

    trainer = _Trainer(Counter(words))
    merges: list[str] = []
    pairs: list[Pair] = []
    steps: list[TrainingStep] = []
    learned_chars = 0
    for index in range(1, num_merges + 1):
        recording = index <= max_steps
        # One more than the runners-up we show: the winner itself, and at least
        # one rival so a tie is detected even when no runners-up are recorded.
        best = trainer.top(1 + max(runners_up, 1) if recording else 1)
        if not best:
            break
        winner = best[0]
        if max_token_chars is not None:
            learned_chars += len(winner.pair[0]) + len(winner.pair[1])
            if learned_chars > max_token_chars:
                raise TokenizerError(
                    f"num_merges: by merge {index} the learned tokens hold {learned_chars:,} characters in all, "
                    f"over the limit of {max_token_chars:,} (setting LIMIT_VOCAB_BYTES); learn fewer merges",
                    field="num_merges",
                    location={"merge": index, "limit": max_token_chars},
                )
        merged = winner.pair[0] + winner.pair[1]
        if recording:
            rivals = best[1:]
            steps.append(
                TrainingStep(
                    index=index,
                    pair=winner.pair,
                    merged=merged,
                    count=winner.count,
                    runners_up=tuple(rivals[:runners_up]),
                    tie=bool(rivals) and rivals[0].count == winner.count,
                )
            )
        trainer.merge(winner.pair)
        merges.append(merged)
        pairs.append(winner.pair)
        if on_step is not None:
            on_step(index)
    return TrainingTrace(
        merges=merges,
        pairs=pairs,
        steps=steps,
        steps_truncated=len(merges) > len(steps),
        stopped_early=len(merges) < num_merges,
    )


def bpe_merges(words: Sequence[str], num_merges: int) -> list[str]:
    """Training (docs/algorithms.md, section 4): the merged token of each learned rule, in order.

    >>> from webapp.tokenizer import bpe_merges
    >>> bpe_merges(["low", "lower", "lowest"], 3)  # "lo" is in all three words
    ['lo', 'low', 'lowe']
    """
    return train_trace(words, num_merges, runners_up=0, max_steps=0).merges


def training_vocab(words: Sequence[str], pairs: Sequence[Sequence[str]]) -> dict[str, int]:
    """Number the symbols of a training run: distinct characters (sorted), then merged tokens."""
    words = validate_words(words)
    checked = validate_char_merges(pairs)
    vocab: dict[str, int] = {}
    for ch in sorted({ch for word in words for ch in word}):
        vocab[ch] = len(vocab)
    for first, second in checked:
        vocab.setdefault(first + second, len(vocab))
    return vocab
