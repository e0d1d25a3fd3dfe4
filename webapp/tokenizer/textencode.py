"""Encode text that a pattern splits into pre-tokens (GPT-2 / cl100k / o200k), fast and exact.

What it does: `encode_split(compiled, text, scheme)` gives the same ids as
encoding every pre-token of the pattern's split with the ordered-rule engine and
concatenating them (pretokenize.py's contract), with three layers of reuse:

1. Chunks. The text is cut where the pattern can never match across
   (chunks.py), and each chunk's ids are kept in a bounded cache per
   compiled list and scheme. Typing one character into a long text changes
   one chunk; every other chunk is a dict lookup.
2. Pre-tokens. A chunk that misses is split (ASCII chunks with the fast `re`
   form) and each distinct pre-token is looked up in a bounded cache keyed by
   the pre-token's text, so no bytes object is built for a pre-token seen before.
3. The rest. All pre-tokens that miss, from all missed chunks of the call, are
   encoded together: for a well-formed list the short ones (up to
   SMALL_SEGMENT bytes, nearly all) in one numpy batch, the long ones with the
   engine; any other list pre-token by pre-token through `encode_bytes`. Before
   that, a pre-token that is a token known to encode to itself (the precompiled
   whole-token table, see precompiled.py) takes that token without BPE.

What it does not do: validation of the merge list (the caller compiles it),
special tokens, traces (pretokenize.py builds those from the engine).
"""

from __future__ import annotations

from itertools import accumulate, chain, compress
from operator import not_

from webapp.tokenizer import engine
from webapp.tokenizer.byte_level import CompiledByteMerges
from webapp.tokenizer.caches import LIST_BUDGET, BoundedCache
from webapp.tokenizer.chunks import chunk_bounds, split_chunks
from webapp.tokenizer.validation import validate_text

# Bounds on memory, per compiled list: pre-tokens (by their text) and chunks per scheme.
PRETOKEN_CACHE_ENTRIES = 65_536
PRETOKEN_CACHE_MAX_CHARS = 256  # longer pre-tokens are encoded each time
PRETOKEN_CACHE_WEIGHT = 1_000_000  # total characters of cached pre-tokens
CHUNK_ENTRIES = 16_384
CHUNK_MAX_CHARS = 65_536  # longer chunks are not cached
CHUNK_WEIGHT = 1_000_000  # total characters of cached chunks, per scheme
# Batch rounds before the few pre-tokens still merging finish in the engine (a round costs about as
# much as a pre-token's merges in Python; most pre-tokens finish in a handful of rounds).
BATCH_ROUNDS = 16


def _caches(compiled: CompiledByteMerges, scheme: str) -> tuple[BoundedCache[str, tuple[int, ...]], BoundedCache[str, tuple[int, ...]]]:
    """The pre-token cache and this scheme's chunk cache of a compiled list (made on first use)."""
    store = compiled.__dict__
    pretokens = store.get("_pretoken_cache")
    if pretokens is None:
        pretokens = store.setdefault("_pretoken_cache", BoundedCache(PRETOKEN_CACHE_ENTRIES, PRETOKEN_CACHE_WEIGHT, budget=LIST_BUDGET))
    chunks_by_scheme = store.get("_text_chunks")
    if chunks_by_scheme is None:
        chunks_by_scheme = store.setdefault("_text_chunks", {})
    chunks = chunks_by_scheme.get(scheme)
    if chunks is None:
        chunks = chunks_by_scheme.setdefault(scheme, BoundedCache(CHUNK_ENTRIES, CHUNK_WEIGHT, budget=LIST_BUDGET))
    return pretokens, chunks


def clear_text_caches(compiled: CompiledByteMerges) -> None:
    """Forget the pre-tokens and chunks this module cached for `compiled` (benchmarks: 'never seen')."""
    compiled.__dict__.pop("_pretoken_cache", None)
    compiled.__dict__.pop("_text_chunks", None)


def encode_split(compiled: CompiledByteMerges, text: str, scheme: str) -> list[int]:
    """Ids of `text` split by `scheme`'s pattern, each pre-token encoded on its own, concatenated."""
    text = validate_text(text)
    if not text:
        return []
    pretoken_cache, chunk_cache = _caches(compiled, scheme)
    chunk_cache.touch()  # for the worker-wide budget (hits read `data` directly)
    bounds = chunk_bounds(text, scheme)
    chunks = [text[start:end] for start, end in zip(bounds, bounds[1:])]
    found = list(map(chunk_cache.data.get, chunks))
    if None in found:
        ids = _fill_chunks(compiled, chunks, found, scheme, pretoken_cache, chunk_cache)
        if ids is not None:
            return ids
    return list(chain.from_iterable(found))  # type: ignore[arg-type]


def _fill_chunks(
    compiled: CompiledByteMerges,
    chunks: list[str],
    found: list[tuple[int, ...] | None],
    scheme: str,
    pretoken_cache: BoundedCache[str, tuple[int, ...]],
    chunk_cache: BoundedCache[str, tuple[int, ...]],
) -> list[int] | None:
    """Encode the chunks `found` lacks, in place; cache them.

    Returns the ids of the whole text when every chunk was missing and
    distinct (new text: the common case), None otherwise (read `found`).
    Everything runs over all pre-tokens of all missed chunks at once, with
    C-level passes (map / chain / accumulate), not a Python step per pre-token.
    """
    wanted = [chunk for chunk, ids in zip(chunks, found) if ids is None]
    missing = list(dict.fromkeys(wanted))
    split = split_chunks(missing, scheme)
    pretokens = list(chain.from_iterable(split))
    # First the whole-token table (precompiled.py): for real vocabularies most
    # pre-tokens are tokens that encode to themselves, one dict lookup each.
    values: list[tuple[int, ...] | None] = list(map((compiled.whole or _NO_WHOLE).get, pretokens))
    if None in values:
        rest = list(dict.fromkeys(compress(pretokens, map(not_, values))))  # distinct misses, in order
        cached = list(map(pretoken_cache.data.get, rest))
        made = dict(zip(rest, cached))
        new = list(compress(rest, map(not_, cached)))
        if new:
            encoded = _encode_pretokens(compiled, new)
            made.update(zip(new, encoded))
            pretoken_cache.put_many([item for item in zip(new, encoded) if len(item[0]) <= PRETOKEN_CACHE_MAX_CHARS])
        # dict.get(pre-token, default): a miss takes its ids from `made`, a hit keeps its own.
        values = list(map(made.get, pretokens, values))
    # Each chunk's ids: its pre-tokens' values (a slice of `values`) chained.
    ends = list(accumulate(map(len, split)))
    spans = map(values.__getitem__, map(slice, [0, *ends[:-1]], ends))
    per_chunk: list[tuple[int, ...]] = list(map(tuple, map(chain.from_iterable, spans)))  # type: ignore[arg-type]
    ids = list(chain.from_iterable(per_chunk))
    chunk_cache.put_many([item for item in zip(missing, per_chunk) if len(item[0]) <= CHUNK_MAX_CHARS])
    if len(wanted) == len(chunks) == len(missing):
        return ids
    done = dict(zip(missing, per_chunk))
    for index, chunk_ids in enumerate(found):
        if chunk_ids is None:
            found[index] = done[chunks[index]]
    return None


_NO_WHOLE: dict[str, tuple[int, ...]] = {}


def _encode_pretokens(compiled: CompiledByteMerges, pretokens: list[str]) -> list[tuple[int, ...]]:
    """The ids of each pre-token (valid text, distinct pre-tokens), in order."""
    encoded = list(map(str.encode, pretokens))  # UTF-8
    if not compiled.well_formed or not len(compiled):
        return [tuple(compiled.encode_bytes(data)) for data in encoded]
    small = engine.SMALL_SEGMENT
    if max(map(len, encoded)) <= small:
        return compiled._encode_batch(encoded, BATCH_ROUNDS)
    # Long pre-tokens (runs of CJK, long identifiers) are first cut where the
    # split table says no rule can ever join two bytes (one numpy scan over
    # all of them); their parts join the short pre-tokens in the one batch.
    long_pretokens = [data for data in encoded if len(data) > small]
    joined = b"".join(long_pretokens)
    ends = list(accumulate(map(len, long_pretokens)))
    bounds = sorted(set(compiled.bounds(joined)).union(ends))
    parts = [joined[start:end] for start, end in zip(bounds, bounds[1:])]
    batch = list(dict.fromkeys(chain((data for data in encoded if len(data) <= small), parts)))
    made = dict(zip(batch, compiled._encode_batch(batch, BATCH_ROUNDS)))
    out: list[tuple[int, ...]] = []
    bound_at = 0  # index into bounds of the current long pre-token's start
    for data in encoded:
        if len(data) <= small:
            out.append(made[data])
            continue
        last = bound_at + 1
        stop = bounds[bound_at] + len(data)
        while bounds[last] < stop:
            last += 1
        out.append(tuple(chain.from_iterable(map(made.__getitem__, parts[bound_at:last]))))
        bound_at = last
    return out


__all__ = ["CHUNK_ENTRIES", "CHUNK_MAX_CHARS", "CHUNK_WEIGHT", "clear_text_caches", "encode_split"]
