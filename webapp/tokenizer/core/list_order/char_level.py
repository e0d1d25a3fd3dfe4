"""Character-level BPE: `[left, right]` string rules, vocab lookup after the last rule.

What it does not do: decoding (the contract has none at this level), training
(training/words.py), pre-tokenization.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from webapp.tokenizer.caches import LIST_BUDGET, BoundedCache, estimated_bytes
from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.core.list_order.tracing import build_trace, run_segments
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, EncodeTrace, TraceLimits
from webapp.tokenizer.validation import CharRule, validate_char_merges, validate_char_vocab, validate_text

SEGMENT_CACHE_ENTRIES = 65_536
SEGMENT_CACHE_MAX_CHARS = 256
SEGMENT_CACHE_WEIGHT = 1_000_000  # total length of cached segments per compiled list
COMPILED_CACHE_ENTRIES = 4
#: The compiled lists kept, by their estimated bytes (docs/limits.md#caches): one list of any
#: size up to this fits (a gemma3-sized one of 514,906 rules: 257 MB), or several smaller ones.
COMPILED_CACHE_BYTES = 288 * 2**20
#: What a compiled list and its key hold per rule with its rule table built (tracemalloc): 465
#: bytes for 300,304 rules of fresh two-character tokens, 236 for gemma3's merges, with a margin.
RULE_BYTES = 500
FIXED_BYTES = 64 * 1024
_UNICODE = 0x110000  # ids of multi-character strings start here


class CompiledCharMerges:
    """Validated character-level rules as integer rules, with split keys and a segment cache."""

    def __init__(self, rules: tuple[CharRule, ...]) -> None:
        self.rules = rules
        self.strings: list[str] = []
        self._ids: dict[str, int] = {}
        int_rules = [(self.intern(left), self.intern(right), self.intern(left + right)) for left, right in rules]
        self.int_rules = tuple(int_rules)
        self.table = RuleTable(self.int_rules, _UNICODE + len(self.strings))
        # Sorted keys x * 0x110000 + y of every character pair some rule may join.
        joins = {ord(left[-1]) * _UNICODE + ord(right[0]) for left, right in rules}
        self.joins = np.array(sorted(joins), dtype=np.int64)
        self.segment_cache: BoundedCache[str, tuple[str, ...]] = BoundedCache(
            SEGMENT_CACHE_ENTRIES, SEGMENT_CACHE_WEIGHT, budget=LIST_BUDGET
        )

    def __len__(self) -> int:
        return len(self.rules)

    def estimated_bytes(self) -> int:
        """The bytes this list holds once its table is built (its weight in the compiled-list cache)."""
        return len(self.rules) * RULE_BYTES + FIXED_BYTES

    def intern(self, token: str) -> int:
        if len(token) == 1:
            return ord(token)
        found = self._ids.get(token)
        if found is None:
            found = _UNICODE + len(self.strings)
            self._ids[token] = found
            self.strings.append(token)
        return found

    def string(self, symbol: int) -> str:
        return chr(symbol) if symbol < _UNICODE else self.strings[symbol - _UNICODE]

    def bounds(self, text: str) -> list[int]:
        """Segment boundaries: 0, every cut point, len(text)."""
        n = len(text)
        if n < 2 or not self.rules:
            return [0, n] if n else [0]
        points = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.int64)
        pairs = points[:-1] * _UNICODE + points[1:]
        at = np.searchsorted(self.joins, pairs)
        at[at == len(self.joins)] = 0
        cuts = np.flatnonzero(self.joins[at] != pairs)
        cuts += 1
        return [0, *cuts.tolist(), n]

    def tokens(self, text: str) -> list[str]:
        """The token strings of `text` after every rule (segments cached as strings)."""
        if len(text) < 2 or not self.rules:
            return list(text)
        cache = self.segment_cache
        cache.touch()  # for the worker-wide budget
        lookup = cache.data.get
        run = self.table.run
        string = self.string
        # Segments encoded by this call; stored in the cache at the end, in one batch (one budget update).
        made: dict[str, tuple[str, ...]] = {}
        made_get = made.get
        out: list[str] = []
        extend = out.extend
        start = 0
        for end in self.bounds(text)[1:]:
            segment = text[start:end]
            found = lookup(segment)
            if found is None and (found := made_get(segment)) is None:
                if end - start == 1:
                    found = (segment,)
                else:
                    found = tuple(map(string, run(list(map(ord, segment)))))
                made[segment] = found
            extend(found)
            start = end
        if made:
            cache.put_many([item for item in made.items() if len(item[0]) <= SEGMENT_CACHE_MAX_CHARS])
        return out


_compiled: BoundedCache[tuple[CharRule, ...], CompiledCharMerges] = BoundedCache(
    COMPILED_CACHE_ENTRIES, COMPILED_CACHE_BYTES, weigh=estimated_bytes, name="char_level.compiled"
)


def compile_char_merges(merges: Any) -> CompiledCharMerges:
    """Validate and index a character-level rule list once (bounded cache keyed by content)."""
    if isinstance(merges, CompiledCharMerges):
        return merges
    rules = validate_char_merges(merges)
    compiled = _compiled.get(rules)
    if compiled is None:
        compiled = CompiledCharMerges(rules)
        _compiled.put(rules, compiled)
    return compiled


def char_tokens(text: str, merges: Any) -> list[str]:
    """Character-level tokens after the last rule (no vocab lookup)."""
    text = validate_text(text)
    return compile_char_merges(merges).tokens(text)


def _lookup(tokens: list[str], vocab: dict[str, int]) -> list[int]:
    """Token -> id; the first missing token is an error naming it and its position."""
    ids = list(map(vocab.get, tokens))
    if None not in ids:
        return ids  # type: ignore[return-value]
    position = ids.index(None) + 1
    token = tokens[position - 1]
    start = sum(map(len, tokens[: position - 1]))
    span = f"character {start + 1}" if len(token) == 1 else f"characters {start + 1}-{start + len(token)}"
    raise TokenizerError(
        f"vocab: token {_quote(token)} (output token {position}, {span} of the text) is not in the vocab",
        field="vocab",
        location={"position": position, "token": token},
    )


def _quote(token: str) -> str:
    shown = token if len(token) <= 40 else token[:37] + "..."
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"') + '"'


def bpe_encode_text(text: str, vocab: Any, merges: Any) -> list[int]:
    """Character-level encode (docs/algorithms.md, section 3).

    >>> from webapp.tokenizer import bpe_encode_text
    >>> vocab = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "low": 6}
    >>> bpe_encode_text("lower", vocab, [["l", "o"], ["lo", "w"]])  # low + e + r
    [6, 3, 4]
    """
    text = validate_text(text)
    table = validate_char_vocab(vocab)
    return _lookup(compile_char_merges(merges).tokens(text), table)


def encode_text_trace(
    text: str,
    vocab: Any,
    merges: Any,
    *,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    cuts: Sequence[int] = (),
) -> EncodeTrace:
    """`bpe_encode_text` plus a bounded record of how it happened (see tracing.py).

    `cuts` are extra code point offsets no rule may join across (the starts of pre-tokens).
    """
    text = validate_text(text)
    table = validate_char_vocab(vocab)
    compiled = compile_char_merges(merges)
    bounds = compiled.bounds(text)
    if cuts:
        bounds = sorted(set(bounds).union(c for c in cuts if 0 < c < len(text)))
    keys, events, symbols = run_segments(text, bounds, compiled.table.run, lambda segment: [ord(ch) for ch in segment])
    string = compiled.string
    ids = _lookup([string(s) for s in symbols], table)
    return build_trace(
        initial=[ord(ch) for ch in text],
        bounds=bounds,
        keys=keys,
        events=events,
        rules=compiled.int_rules,
        ids=ids,
        show=string,
        value=lambda start, end: text[start:end],
        limits=limits,
    )
