"""Byte-level BPE: encode text with `[left, right, new]` rules.

What it does not do: pre-tokenization, special tokens, size limits.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from itertools import chain
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np

from webapp.tokenizer.caches import LIST_BUDGET, BoundedCache, estimated_bytes
from webapp.tokenizer.core.list_order import batch, engine
from webapp.tokenizer.core.list_order.byte_splits import split_table_fixpoint, split_table_well_formed, rules_array
from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.core.ranks import INF
from webapp.tokenizer.core.token_sizes import DEFAULT_SIZE_LIMITS, SizeLimits, check_sizes
from webapp.tokenizer.validation import ByteRule, plain_byte_values, validate_byte_merges, validate_text

# Bounds on memory: segments per compiled list, longest segment cached, compiled lists kept.
SEGMENT_CACHE_ENTRIES = 65_536
SEGMENT_CACHE_MAX_BYTES = 256
SEGMENT_CACHE_WEIGHT = 1_000_000  # total length of cached segments per compiled list
COMPILED_CACHE_ENTRIES = 4
#: The compiled lists kept, by their estimated bytes (docs/limits.md#caches): one list of any
#: size up to this fits (670,000 rules), or several smaller ones.
COMPILED_CACHE_BYTES = 256 * 2**20
#: What a compiled list holds per rule once everything is built: 296 bytes measured for o200k
#: compiled from fresh ids after an encode and a trace (the rules as Python tuples, the rule
#: table; tracemalloc), plus up to 105 for the batch encoder's arrays (measure_batch.py); and
#: the fixed tables (split table, pair ranks: under 1 MB).
RULE_BYTES = 400
FIXED_BYTES = 1 << 20
WHOLE_TEXT_RANKS = 32_768  # up to this many bytes, pair ranks become one Python list per text
_SINGLE_IDS = [(b,) for b in range(256)]  # the ids of a one-byte segment
_WHOLE_LOCK = threading.Lock()  # (a deferred whole-token table is made once)
_TABLES_LOCK = threading.Lock()  # (a list's batch tables are made once, whichever thread asks first)


class CompiledByteMerges:
    """A validated byte-level merge list, reusable across calls.

    Holds the rule index, the split table and a bounded cache of encoded segments.
    """

    # Set by _setup: at least one of the two is not None.
    _rules: tuple[ByteRule, ...] | None
    _flat: np.ndarray | None

    def __init__(self, rules: tuple[ByteRule, ...]) -> None:
        self._setup(rules, rules_array(rules) if rules else None)

    @classmethod
    def from_array(
        cls, flat: np.ndarray, splits: np.ndarray | None = None, pair_index: tuple[np.ndarray, np.ndarray] | None = None
    ) -> CompiledByteMerges:
        """From validated rules as an n x 3 int64 array (n >= 1); `rules` is made on first use.

        `splits`: the split table of a well-formed list as precompiled.py stored it (not made again);
        `pair_index`: its batch pair index as stored (`batch.sorted_pair_index`; not sorted again)."""
        self = cls.__new__(cls)
        self._setup(None, flat, splits)
        self._stored_pair_index = pair_index
        return self

    @property
    def flat(self) -> np.ndarray | None:
        """The rules as an n x 3 int64 array (None when an id does not fit in 64 bits). Not to be written."""
        return self._flat

    @property
    def rules(self) -> tuple[ByteRule, ...]:
        """The rules as a tuple of (left, right, new) tuples of Python ints."""
        rules = self._rules
        if rules is None:
            flat = self._flat
            assert flat is not None  # _setup keeps at least one of the two
            rules = self._rules = tuple(map(tuple, flat.tolist()))
        return rules

    def estimated_bytes(self) -> int:
        """The bytes this list holds once everything is built (its weight in the compiled-list cache)."""
        return self._count * RULE_BYTES + FIXED_BYTES

    def share_rules(self, rules: tuple[ByteRule, ...]) -> None:
        """Keep `rules` (a tokenizer's own merges tuple) as this list's Python form when they are the same
        rules as its array, instead of building a second copy from the array on first use (a trace's):
        80 MB for the OpenAI four and mistral_tekken together (tracemalloc)."""
        flat = self._flat
        if self._rules is None and flat is not None and isinstance(rules, tuple) and len(rules) == self._count:
            as_array = rules_array(rules)
            if as_array is not None and np.array_equal(as_array, flat):
                self._rules = rules

    def _setup(
        self, rules: tuple[ByteRule, ...] | None, flat: np.ndarray | None, stored_splits: np.ndarray | None = None
    ) -> None:
        """`rules` and / or `flat` (at least one; `flat` None when an id does not fit in 64 bits);
        `stored_splits`: a well-formed list's split table, read back (see `from_array`)."""
        self._rules = rules
        self._flat = flat
        self.key: CompiledKey | None = None  # set by compile_byte_merges: its key in the cache of compiled lists
        # The batch encoder's tables (`batch_tables`), and a pair index read back to build them from.
        self._batch_tables: batch.BatchTables | None = None
        self._stored_pair_index: tuple[np.ndarray, np.ndarray] | None = None
        self._count = count = len(flat) if flat is not None else len(rules)  # type: ignore[arg-type]
        self.table = RuleTable(rules, 255, flat)
        if stored_splits is not None and count:
            splits: np.ndarray | None = stored_splits
        else:
            splits = split_table_well_formed(rules, flat) if count else None  # type: ignore[arg-type]
        # Well-formed (see split_table_well_formed): ranks never go stale, so encode may skip those checks.
        self.well_formed = splits is not None
        if splits is None and count:
            splits = split_table_fixpoint(self.rules)
        self.splits = splits
        # Flattened for a single take() per text: index = x * 256 + y.
        self.splits_flat = splits.reshape(-1) if splits is not None else None  # None exactly when count == 0
        self.segment_cache: BoundedCache[bytes, tuple[int, ...]] = BoundedCache(
            SEGMENT_CACHE_ENTRIES, SEGMENT_CACHE_WEIGHT, budget=LIST_BUDGET
        )
        # The text encoder's caches of this list (webapp/tokenizer/pretokenize/textencode.py: pre-tokens,
        # chunks, the whole-token table in other ids), by name; made there on first use.
        self.text_caches: dict[str, Any] = {}
        # {token text: (id,)} of tokens known to encode to themselves (precompiled.py), or None;
        # a precompiled form read back may leave it to be made on first use (`defer_whole`).
        self._whole: dict[str, tuple[int, ...]] | None = None
        self._whole_maker: Callable[[], dict[str, tuple[int, ...]]] | None = None
        self._pair_ranks: np.ndarray | None = None
        if flat is not None:
            # The first rank of each pair of two bytes, straight from the array.
            byte_rules = np.flatnonzero((flat[:, 0] < 256) & (flat[:, 1] < 256))
            table = np.full(65536, INF, dtype=np.int64)
            np.minimum.at(table, flat[byte_rules, 0] * 256 + flat[byte_rules, 1], byte_rules)
            self._pair_ranks = table

    @property
    def whole(self) -> dict[str, tuple[int, ...]] | None:
        """The whole-token table (see precompiled.py), made now if it was deferred; None if there is none."""
        if self._whole is None and self._whole_maker is not None:
            with _WHOLE_LOCK:
                maker = self._whole_maker
                if self._whole is None and maker is not None:
                    self._whole = maker()
                self._whole_maker = None
        return self._whole

    @whole.setter
    def whole(self, table: dict[str, tuple[int, ...]] | None) -> None:
        self._whole = table
        self._whole_maker = None

    def defer_whole(self, maker: Callable[[], dict[str, tuple[int, ...]]]) -> None:
        """Let `maker()` make the whole-token table when it is first wanted (a precompiled form read back)."""
        self._whole = None
        self._whole_maker = maker

    @property
    def whole_deferred(self) -> bool:
        """Is there a whole-token table not made yet? (An encoder may pass on it for a few pre-tokens.)"""
        return self._whole is None and self._whole_maker is not None

    def __len__(self) -> int:
        return self._count

    def __repr__(self) -> str:
        return f"<CompiledByteMerges {self._count} rules>"

    def pair_index(self, data: bytes) -> np.ndarray:
        """x * 256 + y for every pair of neighbouring bytes (len(data) >= 2)."""
        arr = np.frombuffer(data, dtype=np.uint8)
        return (arr[:-1].astype(np.intp) << 8) | arr[1:]

    def bounds(self, data: bytes, pair_index: np.ndarray | None = None) -> list[int]:
        """Segment boundaries: 0, every cut point, len(data)."""
        n = len(data)
        if n < 2 or self.splits_flat is None:
            return [0, n] if n else [0]
        if pair_index is None:
            pair_index = self.pair_index(data)
        cuts = np.flatnonzero(self.splits_flat[pair_index])
        cuts += 1
        return [0, *cuts.tolist(), n]

    def encode_bytes(self, data: bytes, cuts: Sequence[int] = ()) -> list[int]:
        """The ids of UTF-8 (or any) bytes after every rule.

        `cuts` are extra offsets where no merge may join (pre-tokenization's
        segment boundaries): the segments between them encode independently,
        which is what cutting there means, so they join the engine's own cuts.
        """
        if len(data) < 2 or not self._count:
            return list(data)
        pair_index = self.pair_index(data)
        bounds = self.bounds(data, pair_index)
        if cuts:
            bounds = sorted(set(bounds).union(cuts))
        self.segment_cache.touch()  # for the worker-wide budget: the caches of lists in use go last
        if self.well_formed:
            return self._encode_well_formed(data, bounds)
        cache = self.segment_cache
        lookup = cache.data.get
        table = self.table
        run = table.run
        run_small = table.run_short
        # Initial pair ranks of the whole text, made on the first cache miss
        # with one numpy lookup, then sliced per segment.
        ranks: list[int] | None = None
        ranks_np: np.ndarray | None = None
        small = engine.SMALL_SEGMENT
        news = table.news
        # Segments encoded by this call; stored in the cache at the end, in one batch.
        made: dict[bytes, tuple[int, ...]] = {}
        made_get = made.get
        out: list[int] = []
        extend = out.extend
        start = 0
        for end in bounds[1:]:
            segment = data[start:end]
            ids = lookup(segment)
            if ids is None and (ids := made_get(segment)) is None:
                length = end - start
                if length == 1:
                    ids = _SINGLE_IDS[data[start]]
                elif length <= small:
                    if ranks is None:
                        ranks_np = self._byte_pair_ranks()[pair_index]
                        # Python ints for the whole text at once, unless the text is long
                        # (then only the segments that miss the cache convert theirs).
                        ranks = ranks_np.tolist() if len(data) <= WHOLE_TEXT_RANKS else []
                    if ranks:
                        segment_ranks = ranks[start : end - 1]
                    else:
                        segment_ranks = ranks_np[start : end - 1].tolist()  # type: ignore[index]
                    if length == 2:  # one pair: its first rule fires or nothing does
                        rank = segment_ranks[0]
                        ids = (news[rank],) if rank != INF else (data[start], data[start + 1])
                    else:
                        ids = tuple(run_small(list(segment), segment_ranks))
                else:
                    ids = tuple(run(segment))
                made[segment] = ids
            extend(ids)
            start = end
        if made:
            cache.put_many([item for item in made.items() if len(item[0]) <= SEGMENT_CACHE_MAX_BYTES])
        return out

    def _encode_well_formed(self, data: bytes, bounds: list[int]) -> list[int]:
        """`encode_bytes` for a well-formed list: cached segments first, then the misses in one batch."""
        cache = self.segment_cache
        lookup = cache.data.get
        small = engine.SMALL_SEGMENT
        run = self.table.run
        long_segments: dict[bytes, tuple[int, ...]] = {}  # encoded by this call, too long for the cache
        out: list[int] = []
        extend = out.extend
        start = 0
        for end in bounds[1:]:
            segment = data[start:end]
            ids = lookup(segment)
            if ids is None and (ids := long_segments.get(segment)) is None:
                length = end - start
                if length == 1:
                    ids = _SINGLE_IDS[data[start]]
                    cache.put(segment, ids)
                elif length <= small:
                    break  # the rest goes to the batch below
                else:
                    ids = tuple(run(segment))
                    if length <= SEGMENT_CACHE_MAX_BYTES:
                        cache.put(segment, ids)
                    else:
                        long_segments[segment] = ids
            extend(ids)
            start = end
        else:
            return out
        # A miss of a short segment: the rest of the text, its distinct short segments encoded together.
        rest = bounds[bisect_left(bounds, start) :]
        segments = [data[a:b] for a, b in zip(rest, rest[1:])]
        distinct = list(dict.fromkeys(segments))
        cached = list(map(lookup, distinct))
        found: dict[bytes, tuple[int, ...] | None] = dict(zip(distinct, cached))
        found.update(long_segments)
        # Every missed segment up to SMALL_SEGMENT bytes (single bytes too) goes to the batch.
        batch = [segment for segment, ids in zip(distinct, cached) if ids is None and len(segment) <= small]
        made = list(zip(batch, self.encode_batch(batch))) if batch else []
        found.update(made)
        self.segment_cache.put_many(made)  # all short enough for the cache
        if cached.count(None) > len(batch):  # a segment longer than SMALL_SEGMENT missed
            for segment, ids in found.items():
                if ids is None:
                    found[segment] = ids = tuple(run(segment))
                    if len(segment) <= SEGMENT_CACHE_MAX_BYTES:
                        cache.put(segment, ids)
        out.extend(chain.from_iterable(map(found.__getitem__, segments)))  # type: ignore[arg-type]
        return out

    def batch_tables(self) -> batch.BatchTables:
        """The tables the batch encoder reads (batch.py), made once, on first use; well-formed lists only."""
        tables = self._batch_tables
        if tables is None:
            with _TABLES_LOCK:
                tables = self._batch_tables
                if tables is None:
                    flat = self._flat
                    if flat is None or not self.well_formed:
                        raise ValueError("only a well-formed merge list with an int64 array has batch tables")
                    eager = self.whole_deferred or self.whole is not None
                    tables = self._batch_tables = batch.make_batch_tables(
                        flat, self.table, self._byte_pair_ranks(), self.splits_flat, self._stored_pair_index, eager
                    )
                    self._stored_pair_index = None  # (the tables hold it now)
        return tables

    def encode_batch(self, segments: list[bytes], max_rounds: int | None = None) -> list[tuple[int, ...]]:
        """Encode many segments (any length; meant for 1..SMALL_SEGMENT bytes) of a well-formed list at once."""
        tok = np.frombuffer(b"".join(segments), dtype=np.uint8).astype(np.int64)
        lengths = np.fromiter(map(len, segments), dtype=np.intp, count=len(segments))
        ids, counts = batch.merge_segments(self.batch_tables(), tok, lengths, max_rounds)
        ends = np.cumsum(counts).tolist()
        flat = ids.tolist()
        return list(map(tuple, map(flat.__getitem__, map(slice, [0, *ends[:-1]], ends))))

    def _byte_pair_ranks(self) -> np.ndarray:
        """The first rank of every byte pair (x, y) at index x * 256 + y, INF if none (made once)."""
        if self._pair_ranks is None:
            table = np.full(65536, INF, dtype=np.int64)
            first = self.table.first
            if first:
                keys = np.fromiter(first.keys(), dtype=object if self.table.shift > 1 << 30 else np.int64, count=len(first))
                ranks = np.fromiter(first.values(), dtype=np.int64, count=len(first))
                left, right = keys // self.table.shift, keys % self.table.shift
                byte_pairs = ((left < 256) & (right < 256)).astype(bool)
                table[(left[byte_pairs] * 256 + right[byte_pairs]).astype(np.intp)] = ranks[byte_pairs]
            self._pair_ranks = table
        return self._pair_ranks


# Keyed by the rules' tuple, or by their int64 array's bytes (the common case; never equal to a tuple).
#: A compiled list's key: the bytes of its int64 rule array (the common case), or the rules' tuple.
CompiledKey = Union[bytes, tuple[ByteRule, ...]]
_compiled: BoundedCache[CompiledKey, CompiledByteMerges] = BoundedCache(
    COMPILED_CACHE_ENTRIES, COMPILED_CACHE_BYTES, weigh=estimated_bytes, name="byte_level.compiled"
)


def _plain_rules_array(merges: Any) -> np.ndarray | None:
    """A non-empty list of [left, right, new] of plain non-negative ints as an n x 3 int64 array."""
    if not isinstance(merges, (list, tuple)) or not merges:
        return None
    values = plain_byte_values(merges)
    if values is None:
        return None
    try:
        flat = np.fromiter(values, dtype=np.int64, count=len(values))
    except OverflowError:
        return None
    if flat.min() < 0:
        return None
    return flat.reshape(-1, 3)


def compile_byte_merges(merges: Any) -> CompiledByteMerges:
    """Validate and index a merge list once; equal lists share one compiled form (bounded cache)."""
    if isinstance(merges, CompiledByteMerges):
        return merges
    flat = _plain_rules_array(merges)
    if flat is not None:
        # The common case: no tuple of tuples is built; the array's bytes are the key.
        key = flat.tobytes()
        compiled = _compiled.get(key)
        if compiled is None:
            compiled = _keep(key, CompiledByteMerges.from_array(flat))
        return compiled
    rules = validate_byte_merges(merges)
    compiled = _compiled.get(rules)
    if compiled is None:
        compiled = _keep(rules, CompiledByteMerges(rules))
    return compiled


def _keep(key: CompiledKey, compiled: CompiledByteMerges) -> CompiledByteMerges:
    compiled.key = key
    _compiled.put(key, compiled)
    return compiled


def compiled_from_key(key: CompiledKey) -> CompiledByteMerges:
    """The compiled list `key` (a `CompiledByteMerges.key`) names: from the cache, else compiled again."""
    compiled = _compiled.get(key)
    if compiled is None:
        if isinstance(key, bytes):  # (read-only view of the key's bytes: nothing writes to the rule array)
            compiled = CompiledByteMerges.from_array(np.frombuffer(key, dtype=np.int64).reshape(-1, 3))
        else:
            compiled = CompiledByteMerges(key)
        compiled = _keep(key, compiled)
    return compiled


def clear_caches() -> None:
    """Forget every compiled list and its segments (benchmarks use it to measure cold runs)."""
    _compiled.clear()


def encode(text: str, merges: Any) -> list[int]:
    """Byte-level encode (docs/algorithms.md, section 1). `merges` is a list of [left, right, new] or compiled.

    >>> from webapp.tokenizer import encode
    >>> encode("hi! hi", [[104, 105, 256], [256, 33, 257]])  # h+i -> 256, then 256+! -> 257
    [257, 32, 256]
    >>> encode("hi", [[104, 105]])
    Traceback (most recent call last):
    webapp.tokenizer.errors.TokenizerError: merges: rule 1 should be three non-negative integers ...
    """
    text = validate_text(text)
    compiled = compile_byte_merges(merges)
    return compiled.encode_bytes(text.encode("utf-8"))


def implied_byte_vocab(merges: Any, limits: SizeLimits = DEFAULT_SIZE_LIMITS) -> dict[int, bytes]:
    """The vocab a merge list implies: 0..255, then each rule's new = left + right (first definition wins)."""
    compiled = compile_byte_merges(merges)
    check_sizes(compiled.rules, limits, "implied")
    vocab = {b: bytes([b]) for b in range(256)}
    for left, right, new in compiled.rules:
        if new not in vocab and left in vocab and right in vocab:
            vocab[new] = vocab[left] + vocab[right]
    return vocab
