"""Encode text that a pattern splits into pre-tokens (GPT-2 / cl100k / o200k), fast and exact.

What it does not do: validation of the merge list (the caller compiles it),
special tokens, traces (pretokenized.py builds those from the engine).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import hashlib
from itertools import accumulate, chain, compress
from operator import not_
from typing import Iterable, Mapping

import numpy as np

from webapp.tokenizer.caches import LIST_BUDGET, BoundedCache
from webapp.tokenizer.core.joined import joined_ids
from webapp.tokenizer.core.list_order import batch
from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges
from webapp.tokenizer.pretokenize.chunks import chunk_bounds, split_chunks
from webapp.tokenizer.validation import validate_text

# Bounds on memory, per compiled list and id map (see Relabel): pre-tokens (by their text), and
# chunks per scheme. All of them also join the worker-wide budget (caches.LIST_BUDGET).
PRETOKEN_CACHE_ENTRIES = 65_536
PRETOKEN_CACHE_MAX_CHARS = 256  # longer pre-tokens are encoded each time
PRETOKEN_CACHE_WEIGHT = 1_000_000  # total characters of cached pre-tokens
CHUNK_ENTRIES = 16_384
CHUNK_MAX_CHARS = 65_536  # longer chunks are not cached
CHUNK_WEIGHT = 1_000_000  # total characters of cached chunks, per scheme and id map
# Batch rounds before the few pre-tokens still merging finish in the engine (a round costs about as
# much as a pre-token's merges in Python; most pre-tokens finish in a handful of rounds).
BATCH_ROUNDS = 16
# New pre-tokens of at most this many bytes in all go to the engine one by one, not to a numpy batch
# (once the engine's indexes exist): a batch round costs about as much as ten short pre-tokens in
# the engine (benchmarks/measure_batch.py).
ENGINE_MAX_BYTES = 256


class Relabel:
    """Playground id -> output id (an imported file's own ids), applied inside `encode_split`."""

    def __init__(self, mapping: Mapping[int, int]) -> None:
        self.mapping = dict(mapping)
        # The caches of a compiled list are kept per map: its content names it.
        self.key = hashlib.blake2b(repr(sorted(self.mapping.items())).encode(), digest_size=16).digest()
        self._table: np.ndarray | None = None

    def table(self, top: int) -> np.ndarray:
        """The map as an array indexed by id 0..`top` (numpy lookups in the batch; `top` is a well-formed
        list's largest id, which is O(rules): byte_splits keeps ids dense for those)."""
        table = self._table
        if table is None or len(table) != top + 1:
            table = np.arange(top + 1, dtype=np.int64)
            inside = [(old, new) for old, new in self.mapping.items() if old <= top]
            if inside:
                olds, news = zip(*inside)
                table[np.array(olds, dtype=np.int64)] = np.array(news, dtype=np.int64)
            self._table = table
        return table

    def ids(self, ids: Iterable[int]) -> tuple[int, ...]:
        return tuple(map(self.mapping.get, ids, ids))


def _map_entries(_key: int, value: tuple[Mapping[int, int], Relabel]) -> int:
    """The weight of a cached Relabel: the entries of its map."""
    return len(value[1].mapping)


# The Relabels of long-lived maps, by id() of the map (each entry keeps its map alive, so
# the id is not reused while it is cached). Bound: 64 maps and 2,000,000 map entries in
# all; a Relabel costs about 43 bytes per entry with its id table (tracemalloc, a
# 300,000-entry map), so about 90 MB at most. A map over the weight on its own (over
# the default rule limit several times) gets a new Relabel for each call instead.
RELABEL_ENTRIES = 64
RELABEL_WEIGHT = 2_000_000
_RELABELS: BoundedCache[int, tuple[Mapping[int, int], Relabel]] = BoundedCache(
    RELABEL_ENTRIES, RELABEL_WEIGHT, weigh=_map_entries, name="textencode.relabels"
)


def relabel_for(mapping: Mapping[int, int]) -> Relabel:
    """The Relabel of a long-lived map (a LoadedTokenizer's id_map), made once."""
    hit = _RELABELS.get(id(mapping))
    if hit is not None and hit[0] is mapping:
        return hit[1]
    relabel = Relabel(mapping)
    _RELABELS.put(id(mapping), (mapping, relabel))
    return relabel


#: A deferred whole-token table (core/list_order/precompiled.py) is made once this many pre-tokens have missed
#: the caches of its list: making it costs about as much as encoding a few thousand new pre-tokens
#: without it (0.1 s for o200k_base), so a short first encode goes without (the same ids either way).
WHOLE_TABLE_AFTER = 2_000


def _whole_table(compiled: CompiledByteMerges, relabel: Relabel | None, wanted: int = 0) -> dict[str, tuple[int, ...]]:
    """The compiled list's whole-token table in output ids (made once per map; {} when there is none,
    or while a deferred one is not worth making yet: `wanted` pre-tokens are to be looked up now)."""
    if compiled.whole_deferred:
        store = compiled.text_caches
        store["whole_wanted"] = seen = store.get("whole_wanted", 0) + wanted
        if seen < WHOLE_TABLE_AFTER:
            return _NO_WHOLE
    whole = compiled.whole
    if whole is None:
        return _NO_WHOLE
    if relabel is None:
        return whole
    by_map = compiled.text_caches.setdefault("whole_by_relabel", {})
    hit = by_map.get(relabel.key)
    if hit is not None and hit[0] is whole:
        return hit[1]  # type: ignore[no-any-return]
    mapping = relabel.mapping
    if max(mapping) < 256:
        # The usual map (a real file's byte ids): only entries holding a byte id change, and the
        # only such entries are the ASCII characters' (find_whole_tokens).
        table = dict(whole)
        table.update((chr(b), (mapping[b],)) for b in mapping if b < 128 and table.get(chr(b)) == (b,))
    else:
        table = {text: relabel.ids(ids) for text, ids in whole.items()}
    by_map.clear()  # one translated table per list (a list is nearly always used with one map)
    by_map[relabel.key] = (whole, table)
    return table


def _caches(
    compiled: CompiledByteMerges, scheme: str, key: bytes = b""
) -> tuple[BoundedCache[str, tuple[int, ...]], BoundedCache[str, tuple[int, ...]]]:
    """The pre-token cache and this scheme's chunk cache of a compiled list, for output ids `key` (made on first use)."""
    store = compiled.text_caches
    pretokens_by_key = store.get("pretoken_cache")
    if pretokens_by_key is None:
        pretokens_by_key = store.setdefault("pretoken_cache", {})
    pretokens = pretokens_by_key.get(key)
    if pretokens is None:
        pretokens = pretokens_by_key.setdefault(
            key, BoundedCache(PRETOKEN_CACHE_ENTRIES, PRETOKEN_CACHE_WEIGHT, budget=LIST_BUDGET)
        )
    chunks_by_scheme = store.get("text_chunks")
    if chunks_by_scheme is None:
        chunks_by_scheme = store.setdefault("text_chunks", {})
    chunks = chunks_by_scheme.get((scheme, key))
    if chunks is None:
        chunks = chunks_by_scheme.setdefault((scheme, key), BoundedCache(CHUNK_ENTRIES, CHUNK_WEIGHT, budget=LIST_BUDGET))
    return pretokens, chunks


def clear_text_caches(compiled: CompiledByteMerges) -> None:
    """Forget the pre-tokens and chunks this module cached for `compiled` (benchmarks: 'never seen')."""
    compiled.text_caches.pop("pretoken_cache", None)
    compiled.text_caches.pop("text_chunks", None)


def encode_split(
    compiled: CompiledByteMerges, text: str, scheme: str, relabel: Mapping[int, int] | None = None
) -> list[int]:
    """Ids of `text` split by `scheme`'s pattern, each pre-token encoded on its own, concatenated.

    `relabel` (playground id -> output id; others unchanged) gives the ids in
    an imported file's own numbering, as `LoadedTokenizer.file_ids` would.
    """
    text = validate_text(text)
    if not text:
        return []
    mapped = relabel_for(relabel) if relabel else None
    pretoken_cache, chunk_cache = _caches(compiled, scheme, mapped.key if mapped is not None else b"")
    chunk_cache.touch()  # for the worker-wide budget (hits read `data` directly)
    bounds = chunk_bounds(text, scheme)
    chunks = [text[start:end] for start, end in zip(bounds, bounds[1:])]
    found = list(map(chunk_cache.data.get, chunks))
    if None in found:
        ids = _fill_chunks(compiled, chunks, found, scheme, pretoken_cache, chunk_cache, mapped)
        if ids is not None:
            return ids
    return joined_ids(found)  # type: ignore[arg-type]


def _fill_chunks(
    compiled: CompiledByteMerges,
    chunks: list[str],
    found: list[tuple[int, ...] | None],
    scheme: str,
    pretoken_cache: BoundedCache[str, tuple[int, ...]],
    chunk_cache: BoundedCache[str, tuple[int, ...]],
    relabel: Relabel | None,
    whole: bool = True,
) -> list[int] | None:
    """Encode the chunks `found` lacks, in place; cache them."""
    wanted = [chunk for chunk, ids in zip(chunks, found) if ids is None]
    missing = list(dict.fromkeys(wanted))
    split = split_chunks(missing, scheme)
    pretokens = list(chain.from_iterable(split))
    # First the whole-token table (core/list_order/precompiled.py): for real vocabularies most
    # pre-tokens are tokens that encode to themselves, one dict lookup each. A list
    # without one (a Tekken file's, compiled when opened) starts from the pre-token cache.
    table = _whole_table(compiled, relabel, len(pretokens))
    values: list[tuple[int, ...] | None] = list(map((table or pretoken_cache.data).get, pretokens))
    if None in values:
        misses = list(compress(range(len(values)), map(not_, values)))  # where the table had nothing
        rest = list(dict.fromkeys(map(pretokens.__getitem__, misses)))  # distinct misses, in order
        cached = list(map(pretoken_cache.data.get, rest))
        made = dict(zip(rest, cached))
        new = list(compress(rest, map(not_, cached)))
        if new:
            encoded = _encode_pretokens(compiled, new, relabel)
            made.update(zip(new, encoded))
            pretoken_cache.put_many([item for item in zip(new, encoded) if len(item[0]) <= PRETOKEN_CACHE_MAX_CHARS])
        if len(misses) * 8 < len(values):
            # Only the misses change (a few percent of the pre-tokens of real text).
            for index in misses:
                values[index] = made[pretokens[index]]
        else:  # (many: one C-level pass; a hit keeps its value, since `made` holds only missed texts)
            values = list(map(made.get, pretokens, values))
    ids = joined_ids(values)  # type: ignore[arg-type]
    # Each chunk's ids: a slice of `ids`, from the token counts of its pre-tokens.
    token_ends = [0, *accumulate(map(len, values))]  # type: ignore[arg-type]
    chunk_ends = list(map(token_ends.__getitem__, accumulate(map(len, split), initial=0)))
    per_chunk: list[tuple[int, ...]] = list(map(tuple, map(ids.__getitem__, map(slice, chunk_ends, chunk_ends[1:]))))
    chunk_cache.put_many([item for item in zip(missing, per_chunk) if len(item[0]) <= CHUNK_MAX_CHARS])
    if whole and len(wanted) == len(chunks) == len(missing):
        return ids
    done = dict(zip(missing, per_chunk))
    for index, chunk_ids in enumerate(found):
        if chunk_ids is None:
            found[index] = done[chunks[index]]
    return None


def encode_split_batch(
    compiled: CompiledByteMerges, texts: list[str], scheme: str, relabel: Mapping[int, int] | None = None
) -> list[list[int]]:
    """`encode_split` of each text, in one pass over all of them."""
    texts = [validate_text(text) for text in texts]
    mapped = relabel_for(relabel) if relabel else None
    pretoken_cache, chunk_cache = _caches(compiled, scheme, mapped.key if mapped is not None else b"")
    chunk_cache.touch()
    per_text: list[list[str]] = []
    for text in texts:
        bounds = chunk_bounds(text, scheme)  # [0] for an empty text: no chunks
        per_text.append([text[start:end] for start, end in zip(bounds, bounds[1:])])
    chunks = list(chain.from_iterable(per_text))
    found = list(map(chunk_cache.data.get, chunks))
    if None in found:
        _fill_chunks(compiled, chunks, found, scheme, pretoken_cache, chunk_cache, mapped, whole=False)
    out: list[list[int]] = []
    start = 0
    for text_chunks in per_text:
        end = start + len(text_chunks)
        out.append(joined_ids(found[start:end]))  # type: ignore[arg-type]
        start = end
    return out


_NO_WHOLE: dict[str, tuple[int, ...]] = {}


def _encode_pretokens(compiled: CompiledByteMerges, pretokens: list[str], relabel: Relabel | None) -> list[tuple[int, ...]]:
    """The (output) ids of each pre-token (valid text, distinct pre-tokens), in order."""
    # One UTF-8 encode of them all; a pre-token's byte length is its length when the text is ASCII.
    data = "".join(pretokens).encode()
    if not compiled.well_formed or not len(compiled):
        encoded = [tuple(compiled.encode_bytes(piece)) for piece in map(str.encode, pretokens)]
    elif len(data) <= ENGINE_MAX_BYTES and compiled.table.built:
        # A few new pre-tokens (a keystroke's): a batch costs its rounds (tens of µs each) however
        # small it is; the engine takes a short pre-token in a few µs. Same semantics, same ids.
        run = compiled.table.run
        encoded = [tuple(run(list(piece))) for piece in map(str.encode, pretokens)]
    else:
        if len(data) == sum(map(len, pretokens)):
            lengths = list(map(len, pretokens))
        else:
            lengths = list(map(len, map(str.encode, pretokens)))
        table = relabel.table(compiled.table.top) if relabel is not None else None
        return batch.encode_pieces(compiled.batch_tables(), data, lengths, BATCH_ROUNDS, table)
    return list(map(relabel.ids, encoded)) if relabel is not None else encoded


__all__ = [
    "CHUNK_ENTRIES", "CHUNK_MAX_CHARS", "CHUNK_WEIGHT", "Relabel", "clear_text_caches", "encode_split",
    "encode_split_batch", "relabel_for",
]
