"""The batch encoder: many segments of a well-formed byte-level merge list at once, with numpy.

What it does not do: lists that are not well-formed (the engine takes those,
segment by segment), caching (byte_level.py and pretokenize/textencode.py keep the
results), traces.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.core.ranks import INF

# A batch with a round limit hands its segments to the engine once this few still merge.
BATCH_FEW_LEFT = 8
# From this many positions on, a batch resolves its 1-2 byte segments first, fires safe pairs
# and packs its arrays: each costs a few numpy calls a round, which pay only on big arrays.
BIG_BATCH = 4096
# A lookup of this many pair keys or more goes through the hash table (below, the sorted search wins).
HASH_MIN_KEYS = 1024
HASH_PROBES = 2  # probes in the hash table before the few keys left take the sorted search


class PairRanks:
    """The first rule of pairs of ids, looked up many at a time (keys: left * shift + right)."""

    _MULTIPLIER = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: the top bits of key * this

    def __init__(self, keys: np.ndarray, ranks: np.ndarray, eager: bool = False) -> None:
        """`keys`: sorted distinct pair keys ending with a sentinel no key reaches; `ranks`: their first rules."""
        self.keys = keys
        self.ranks = ranks
        self._table: tuple[np.ndarray, np.ndarray, np.uint64, int] | None = None
        # Keys to search before the table is worth building (read and written without a lock:
        # a lost update only moves the moment it is built).
        self._search_budget = 0 if eager else len(keys)

    def ranks_of(self, key: np.ndarray) -> np.ndarray:
        """The first rule of each pair key (INF for a pair no rule has), in the order given."""
        if len(key) >= HASH_MIN_KEYS:
            if self._table is not None or self._search_budget <= 0:
                return self._hashed(key)
            self._search_budget -= len(key)
        if len(key) > 512:
            # Searching in key order walks the sorted keys once, cache-friendly:
            # about 2.5x faster for thousands of keys than searching at random.
            order = key.argsort()
            out = np.empty(len(key), dtype=np.int64)
            out[order] = self._searched(key[order])
            return out
        return self._searched(key)

    def _searched(self, key: np.ndarray) -> np.ndarray:
        at = self.keys.searchsorted(key)  # the sentinel keeps `at` inside the array
        return np.where(self.keys[at] == key, self.ranks[at], INF)

    def _hashed(self, key: np.ndarray) -> np.ndarray:
        slots, values, shift, mask = self._table if self._table is not None else self._build()
        home = ((key.astype(np.uint64) * self._MULTIPLIER) >> shift).astype(np.intp)
        held = slots[home]
        out = np.where(held == key, values[home].astype(np.int64), INF)  # int32 values: widen before INF joins
        todo = np.flatnonzero((held != key) & (held >= 0))  # an empty slot (-1) means: no such pair
        for _ in range(HASH_PROBES):
            if not len(todo):
                return out
            home[todo] = probe = (home[todo] + 1) & mask
            held = slots[probe]
            hit = held == key[todo]
            out[todo[hit]] = values[probe[hit]]
            todo = todo[~hit & (held >= 0)]
        if len(todo):
            out[todo] = self._searched(key[todo])
        return out

    def _build(self) -> tuple[np.ndarray, np.ndarray, np.uint64, int]:
        """Insert every key with linear probing, all at once: each pass, keys whose slot is free claim it."""
        keys = self.keys[:-1]  # without the sentinel
        bits = max(10, (4 * len(keys) - 1).bit_length())
        size = 1 << bits
        mask = size - 1
        shift = np.uint64(64 - bits)
        slots = np.full(size, -1, dtype=np.int64)
        values = np.zeros(size, dtype=np.int32)  # rule indexes: a list has far fewer than 2^31 rules
        home = ((keys.astype(np.uint64) * self._MULTIPLIER) >> shift).astype(np.intp)
        waiting = np.arange(len(keys))
        claims = np.full(size, -1, dtype=np.intp)
        while len(waiting):
            where = home[waiting]
            free = slots[where] < 0
            claims[where[free]] = waiting[free]  # of several claimants of one slot, one write stays
            won = np.zeros(len(waiting), dtype=bool)
            won[free] = claims[where[free]] == waiting[free]
            winners = waiting[won]
            slots[home[winners]] = keys[winners]
            values[home[winners]] = self.ranks[winners]
            waiting = waiting[~won]
            home[waiting] = (home[waiting] + 1) & mask
        self._table = table = (slots, values, shift, mask)
        return table


class OperandRanks:
    """For every id, the first rule that has it as left operand, and as right operand (made on first use, once)."""

    def __init__(self, flat: np.ndarray, size: int) -> None:
        """`flat`: the rules as an n x 3 int64 array; `size`: one more than the highest id."""
        self._flat = flat
        self._size = size
        self._ranks: tuple[np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()  # (two threads' first big batches make them once)

    def get(self) -> tuple[np.ndarray, np.ndarray]:
        """(as_left, as_right): by id, the first rule taking it as left / right operand."""
        found = self._ranks
        if found is None:
            with self._lock:
                found = self._ranks
                if found is None:
                    found = self._ranks = _operand_ranks(self._flat, self._size)
        return found


def _operand_ranks(flat: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    never = np.iinfo(np.int32).max
    as_left = np.full(size, never, dtype=np.int32)
    as_right = np.full(size, never, dtype=np.int32)
    order = np.arange(len(flat), dtype=np.int32)
    np.minimum.at(as_left, flat[:, 0], order)
    np.minimum.at(as_right, flat[:, 1], order)
    return as_left, as_right


@dataclass(frozen=True, eq=False)
class BatchTables:
    """What the batch reads of one well-formed compiled list (see `make_batch_tables`)."""

    #: Sorted distinct pair keys (left * shift + right), then a sentinel above every key.
    pair_keys: np.ndarray
    #: Each key's first rule (INF for the sentinel).
    first_ranks: np.ndarray
    #: Every rule's new id, by rule index.
    news: np.ndarray
    #: The first rank of every byte pair (x, y) at index x * 256 + y, INF if none.
    byte_pair_ranks: np.ndarray
    #: By id, the first rule taking it as left / right operand (made on the first big batch).
    operand_ranks: OperandRanks
    #: The first rule of many pair keys at once (search, or its hash table once that pays).
    pairs: PairRanks
    #: The key multiplier: a pair key is left * shift + right.
    shift: int
    #: The split table flattened (index x * 256 + y): True where no merge can join the two bytes.
    splits_flat: np.ndarray | None
    #: The list's engine, which finishes the segments of a capped batch.
    engine: RuleTable


def sorted_pair_index(flat: np.ndarray, shift: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct pair keys then a sentinel, each one's first rule then INF) of rules `flat` (n x 3 int64)."""
    keys = flat[:, 0] * shift + flat[:, 1]
    count = len(keys)
    if int(keys.max()) < (1 << 62) // count:
        # key * count + index: distinct values, so a plain sort orders by key, then by index.
        both = np.sort(keys * count + np.arange(count))
        ordered, order = np.divmod(both, count)
    else:
        order = np.argsort(keys, kind="stable")
        ordered = keys[order]
    first = np.ones(count + 1, dtype=bool)
    first[1:-1] = ordered[1:] != ordered[:-1]
    # A sentinel key above every real key, so a search never runs off the end.
    ordered = np.append(ordered, np.iinfo(np.int64).max)
    order = np.append(order, INF)
    return ordered[first], order[first]


def make_batch_tables(
    flat: np.ndarray, engine: RuleTable, byte_pair_ranks: np.ndarray, splits_flat: np.ndarray | None,
    pair_index: tuple[np.ndarray, np.ndarray] | None = None, eager: bool = False,
) -> BatchTables:
    """The batch's tables of a well-formed list: its rules `flat` (n x 3 int64, n >= 1), its `engine`,
    byte-pair rank table and flattened split table; `pair_index`: (keys, first ranks) as
    `sorted_pair_index` makes them, when read back (precompiled.py), else sorted now; `eager`: build the
    pair hash table at the first big lookup (a list kept to serve many requests, see `PairRanks`)."""
    keys, first_ranks = pair_index if pair_index is not None else sorted_pair_index(flat, engine.shift)
    return BatchTables(
        pair_keys=keys, first_ranks=first_ranks, news=flat[:, 2], byte_pair_ranks=byte_pair_ranks,
        operand_ranks=OperandRanks(flat, int(engine.top) + 1), pairs=PairRanks(keys, first_ranks, eager),
        shift=engine.shift, splits_flat=splits_flat, engine=engine,
    )


class HasBatchTables(Protocol):
    """Anything that keeps batch tables (a `CompiledByteMerges`)."""

    def batch_tables(self) -> BatchTables: ...


def pair_ranks(source: HasBatchTables) -> PairRanks:
    """The PairRanks of a compiled list's batch tables (made once; its hash table on first big lookup)."""
    return source.batch_tables().pairs


def encode_pieces(
    tables: BatchTables, data: bytes, piece_lengths: Sequence[int], max_rounds: int | None = None,
    relabel: np.ndarray | None = None,
) -> list[tuple[int, ...]]:
    """The ids of each piece of `data` (its pieces, in order, are `piece_lengths` bytes long), well-formed lists only."""
    size = len(data)
    tok = np.frombuffer(data, dtype=np.uint8).astype(np.int64)
    piece_ends = np.cumsum(np.fromiter(piece_lengths, dtype=np.intp, count=len(piece_lengths)))
    # A segment ends after position i when the split table cuts pair (i, i + 1) or a piece ends at i.
    ends_at = np.zeros(size, dtype=bool)
    if size > 1 and tables.splits_flat is not None:
        ends_at[:-1] = tables.splits_flat[(tok[:-1] << 8) | tok[1:]]
    ends_at[piece_ends - 1] = True
    segment_ends = np.flatnonzero(ends_at)
    segment_ends += 1
    ids, counts = merge_segments(tables, tok, np.diff(segment_ends, prepend=0), max_rounds)
    # Tokens per piece: its segments' counts summed (a piece starts where one of its segments does).
    first_segments = np.searchsorted(segment_ends, piece_ends, side="left")
    per_piece = np.diff(np.cumsum(counts)[first_segments], prepend=0)
    flat = (relabel[ids] if relabel is not None else ids).tolist()
    bounds = np.cumsum(per_piece).tolist()
    return list(map(tuple, map(flat.__getitem__, map(slice, [0, *bounds[:-1]], bounds))))


def merge_segments(
    tables: BatchTables, tok: np.ndarray, lengths: np.ndarray, max_rounds: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Merge every segment of `tok` (bytes as int64; segment i is `lengths[i]` >= 1 long) side by side.

    Returns (ids, counts): each segment's ids after every rule, concatenated
    in segment order, and how many ids each segment has. `tok` is changed.
    """
    news = tables.news
    count = len(lengths)
    finished: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (segments, their counts, their ids)
    ends = np.cumsum(lengths)
    starts = ends - lengths
    rank = np.empty(len(tok), dtype=np.int64)
    rank[:-1] = tables.byte_pair_ranks[(tok[:-1] << 8) | tok[1:]]
    rank[ends - 1] = INF  # a segment's last position has no pair
    # Segments of one or two bytes take at most one rule, their pair's first: no rounds.
    short = lengths <= 2 if len(tok) >= BIG_BATCH else np.zeros(len(lengths), dtype=bool)
    origin = np.flatnonzero(~short)  # the segment each segment in the rounds is
    if len(origin) < count:
        short_starts = starts[short]
        merges = rank[short_starts] < INF  # a one-byte segment's only rank is INF
        fires = short_starts[merges]
        tok[fires] = news[rank[fires]]
        in_short = np.repeat(short, lengths)
        live = in_short.copy()
        live[fires + 1] = False
        finished.append((np.flatnonzero(short), lengths[short] - merges, tok[live]))
        tok = tok[~in_short]
        rank = rank[~in_short]
        lengths = lengths[~short]
    if len(lengths):
        finished.extend((origin[part[0]], part[1], part[2]) for part in _merge_rounds(tables, tok, rank, lengths, max_rounds))
    return gather_segments(finished, count)


def _merge_rounds(
    tables: BatchTables, tok: np.ndarray, rank: np.ndarray, lengths: np.ndarray, max_rounds: int | None
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The rounds of `merge_segments` over segments of any ids (`rank`: each position's pair rank, INF at ends).

    Returns parts of (segment indexes, their counts, their ids) covering every segment.
    """
    news = tables.news
    pairs = tables.pairs
    shift = tables.shift
    # Only a big batch fires safe pairs, so only a big batch makes the list's operand ranks.
    operands = tables.operand_ranks.get() if len(tok) >= BIG_BATCH else None
    finished: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    origin = np.arange(len(lengths))
    rounds = 0
    while len(lengths):
        # (Re)pack: the arrays hold exactly the positions of the segments still merging.
        ends = np.cumsum(lengths)
        starts = ends - lengths
        ends -= 1
        size = len(tok)
        nxt = np.arange(1, size + 1)
        nxt[ends] = -1
        prv = np.arange(-1, size - 1)
        prv[starts] = -1
        alive = np.ones(size, dtype=bool)
        seg = np.repeat(np.arange(len(lengths)), lengths)  # the segment of each position
        # Pairs that fire whatever happens around them (see OperandRanks), kept up to date
        # wherever a rank changes: a rank of INF (a segment's end, a dead position) is never safe.
        safe = None
        if operands is not None and size >= BIG_BATCH:
            as_left, as_right = operands
            safe = (as_right.take(tok) > rank) & (as_left.take(tok.take(nxt)) > rank)
        big = safe is not None
        while True:
            lowest = np.minimum.reduceat(rank, starts)
            done = lowest == INF
            n_done = int(np.count_nonzero(done))
            left = len(lowest) - n_done
            stop = not left or (max_rounds is not None and (
                rounds >= max_rounds or (left <= BATCH_FEW_LEFT and tables.engine.built)))
            if stop or (big and n_done * 2 >= len(lowest)):
                # Set the done segments aside (and, at a stop, finish the others in the engine).
                sizes = np.add.reduceat(alive, starts)
                in_done = np.repeat(done, lengths)
                finished.append((origin[done], sizes[done], tok[in_done & alive]))
                if stop:
                    if left:
                        finished.append(_finish_in_engine(tables.engine, tok, alive, ~done, sizes, origin))
                    lengths = lengths[:0]
                else:
                    keep = alive & ~in_done
                    tok = tok[keep]
                    rank = rank[keep]
                    origin = origin[~done]
                    lengths = sizes[~done]
                break
            # A done segment's positions all rank INF: its lowest becomes -1, which no rank equals.
            lowest[done] = -1
            rounds += 1
            # Besides each segment's lowest rank, every safe pair fires now.
            fire = np.flatnonzero((rank == lowest.take(seg)) | safe) if safe is not None else np.flatnonzero(rank == lowest.take(seg))
            k = rank[fire]
            right = nxt[fire]  # the right operands, unlinked below
            if len(fire) > 1:
                # Two fires overlap when one's right operand is the next fire (a run like
                # "a a a" under (a, a)): in each such run keep the 1st, 3rd, ... (left to right).
                link = right[:-1] == fire[1:]
                if link.any():
                    index = np.arange(len(fire))
                    run_start = np.ones(len(fire), dtype=bool)
                    run_start[1:] = ~link
                    run_first = np.maximum.accumulate(np.where(run_start, index, 0))
                    keep_fire = (index - run_first) % 2 == 0
                    fire = fire[keep_fire]
                    k = k[keep_fire]
                    right = right[keep_fire]
            after = nxt[right]
            tok[fire] = news[k]
            alive[right] = False
            rank[right] = INF
            rank[fire] = INF
            if safe is not None:
                safe[right] = False
                safe[fire] = False
            nxt[fire] = after
            has_after = after >= 0
            prv[after[has_after]] = fire[has_after]
            before = prv[fire]
            ranked = np.concatenate((fire[has_after], before[before >= 0]))
            lefts = tok[ranked]
            rights = tok[nxt[ranked]]
            rank[ranked] = new_ranks = pairs.ranks_of(lefts * shift + rights)
            if safe is not None:
                safe[ranked] = (as_right.take(lefts) > new_ranks) & (as_left.take(rights) > new_ranks)
    return finished


def _finish_in_engine(
    engine: RuleTable, tok: np.ndarray, live: np.ndarray, busy: np.ndarray, sizes: np.ndarray, origin: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The busy segments' live ids run through the engine: (their segments, counts, ids)."""
    ids = tok[live].tolist()
    ends = np.cumsum(sizes).tolist()
    run = engine.run
    out_ids: list[int] = []
    out_counts: list[int] = []
    for index in np.flatnonzero(busy).tolist():
        done = run(ids[ends[index] - int(sizes[index]) : ends[index]])
        out_ids.extend(done)
        out_counts.append(len(done))
    return origin[busy], np.array(out_counts, dtype=np.intp), np.array(out_ids, dtype=np.int64)


def gather_segments(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]], count: int) -> tuple[np.ndarray, np.ndarray]:
    """(ids in segment order, count per segment) from parts of (segment indexes, their counts, their ids)."""
    if not parts:
        return np.empty(0, dtype=np.int64), np.zeros(count, dtype=np.intp)
    segments = np.concatenate([part[0] for part in parts])
    counts_in = np.concatenate([part[1] for part in parts]).astype(np.intp)
    ids_in = np.concatenate([part[2] for part in parts])
    counts = np.empty(count, dtype=np.intp)
    counts[segments] = counts_in
    out_start = np.cumsum(counts) - counts
    in_start = np.cumsum(counts_in) - counts_in
    # Each id moves from its place among `ids_in` to its segment's place in the output.
    where = np.repeat(out_start[segments] - in_start, counts_in) + np.arange(len(ids_in))
    ids = np.empty(len(ids_in), dtype=np.int64)
    ids[where] = ids_in
    return ids, counts


__all__ = [
    "BATCH_FEW_LEFT", "HASH_MIN_KEYS", "BatchTables", "HasBatchTables", "OperandRanks", "PairRanks", "encode_pieces",
    "make_batch_tables", "merge_segments", "pair_ranks", "sorted_pair_index",
]
