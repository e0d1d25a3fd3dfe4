"""The parts of the tiktoken-style API below the Encoding class: text helpers and the tokenizers it wraps.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import operator
from dataclasses import replace
from typing import AbstractSet, Any, Collection, Literal, Mapping, Sequence, Union

import numpy as np
import regex

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.formats.building import build_byte_level
from webapp.tokenizer.formats.tiktoken_ranks import recover_rank_merges
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets import catalog
from webapp.tokenizer.presets import openai as presets
from webapp.tokenizer.stages.special import special_regex
from webapp.tokenizer.pretokenize.patterns import scheme_for_pattern
from webapp.tokenizer.pretokenize.pretokenized import split_text

SpecialSet = Union[Literal["all"], AbstractSet[str]]
SpecialCollection = Union[Literal["all"], Collection[str]]

_MAX_ID = 2**32  # tiktoken keeps ids in 32 bits: anything outside is an OverflowError there



# --------------------------------------------------------------------------
# Small pure helpers


def replace_surrogates(text: str) -> str:
    """`text` as UTF-8 can hold it: a surrogate pair becomes its character, a lone surrogate U+FFFD."""
    if text.isascii():
        return text
    try:  # (only a surrogate stops UTF-8: one C pass, five times faster than searching for one with a regex)
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _token_chars(tokens: frozenset[str], _value: Any) -> int:
    return sum(map(len, tokens))


# Per set of listed tokens (special or added), their first characters: 128 sets and 4,000,000
# characters of tokens at most. The regex that finds them is stages/special.py's special_regex (cached there).
_FIRST_CHARS: BoundedCache[frozenset[str], frozenset[str]] = BoundedCache(128, 4_000_000, weigh=_token_chars,
                                                                          name="api.first_chars")


def _first_chars(tokens: frozenset[str]) -> frozenset[str]:
    firsts = _FIRST_CHARS.get(tokens)
    if firsts is None:
        firsts = frozenset(token[0] for token in tokens if token)
        _FIRST_CHARS.put(tokens, firsts)
    return firsts


def find_listed(text: str, tokens: frozenset[str]) -> str | None:
    """The first of `tokens` that occurs in `text` (leftmost), or None."""
    if not tokens:
        return None
    if "" not in tokens and not any(first in text for first in _first_chars(tokens)):
        return None  # the usual case: no token's first character is in the text at all
    found = special_regex(tokens).search(text)
    return None if found is None else str(found.group())


def disallowed_error(token: str) -> ValueError:
    """The ValueError for special-token text that `disallowed_special` forbids."""
    return ValueError(
        f"encode: the text holds {token!r}, which disallowed_special forbids (by default: the text of "
        f"every special token not allowed). To get the special token's id, pass allowed_special={{{token!r}}} "
        f"(or \"all\"); to encode it as plain text, pass disallowed_special=() or a set without it."
    )


def special_sets(
    allowed_special: Any, disallowed_special: Any, special: frozenset[str]
) -> tuple[Any, frozenset[str]]:
    """tiktoken's first step: (allowed_special as given or all special tokens, the strings text may not hold)."""
    allowed = special if isinstance(allowed_special, str) and allowed_special == "all" else allowed_special
    if isinstance(disallowed_special, str) and disallowed_special == "all":
        if not isinstance(allowed, AbstractSet):
            raise _allowed_type_error(allowed_special)
        disallowed = special - frozenset(allowed)
    elif disallowed_special:
        disallowed = frozenset(disallowed_special)
    else:
        disallowed = frozenset()
    if not all(isinstance(item, str) for item in disallowed):
        raise TypeError("encode: disallowed_special should hold strings only")
    return allowed, disallowed


def check_text(text: Any, disallowed: frozenset[str]) -> str:
    """`text` if it is a str holding none of `disallowed`; TypeError / ValueError otherwise."""
    if not isinstance(text, str):
        raise TypeError(f"encode: the text should be a str, got {type(text).__name__}")
    hit = find_listed(text, disallowed)
    if hit is not None:
        raise disallowed_error(hit)
    return text


def allowed_tokens(allowed: Any, special: frozenset[str]) -> frozenset[str]:
    """The special tokens to recognise: `allowed` must be a set (or frozenset) of strings; others are ignored."""
    if not isinstance(allowed, (set, frozenset)):
        raise _allowed_type_error(allowed)
    if not all(isinstance(item, str) for item in allowed):
        raise TypeError("encode: allowed_special should hold strings only")
    return frozenset(allowed) & special


def _allowed_type_error(allowed: Any) -> TypeError:
    return TypeError(
        f'encode: allowed_special should be "all" or a set of special-token strings, got '
        f"{type(allowed).__name__} (write {{...}} or set(...), not a list or a single string)"
    )


def resolve_special(text: Any, allowed_special: Any, disallowed_special: Any, special: frozenset[str]) -> frozenset[str]:
    """All of tiktoken's checks for one `encode` call, in its order; the special tokens to recognise."""
    allowed, disallowed = special_sets(allowed_special, disallowed_special, special)
    check_text(text, disallowed)
    return allowed_tokens(allowed, special)


def check_threads(num_threads: Any) -> None:
    """tiktoken's batches run in a thread pool of this size: a count below 1 is a ValueError there too."""
    if num_threads is not None and num_threads <= 0:
        raise ValueError(f"num_threads should be at least 1, got {num_threads!r}")


def token_index(token: Any) -> int:
    """An id as tiktoken takes it: any integer (bool too), within 32 bits."""
    value = operator.index(token)  # TypeError for floats, strings, None
    if not 0 <= value < _MAX_ID:
        raise OverflowError(f"token ids are 0 to {_MAX_ID - 1}, got {value}")
    return value


def token_list(tokens: Any) -> list[int]:
    """A sequence of ids as a list of ints (TypeError for a str, a set, an iterator: not sequences)."""
    if isinstance(tokens, np.ndarray):
        if tokens.dtype.kind not in "iub":
            raise TypeError(f"token ids should be integers, got an array of {tokens.dtype}")
        return list(map(int, tokens.tolist()))
    if isinstance(tokens, (str, dict)) or not hasattr(type(tokens), "__getitem__") or not hasattr(type(tokens), "__len__"):
        raise TypeError(f"tokens should be a sequence of ids (a list or tuple), got {type(tokens).__name__}")
    if set(map(type, tokens)) <= {int}:
        return tokens if isinstance(tokens, list) else list(tokens)
    return [operator.index(token) for token in tokens]


def char_offsets(parts: Sequence[bytes]) -> list[int]:
    """Where each token's text starts, in characters of the joined text."""
    offsets: list[int] = []
    begun = 0
    for data in parts:
        inside = bool(data) and 0x80 <= data[0] < 0xC0
        offsets.append(max(0, begun - inside))
        begun += len(data) - sum(1 for byte in data if 0x80 <= byte < 0xC0)
    return offsets


def last_char(data: bytes) -> tuple[str | None, int]:
    """The character the bytes end with and its size; (None, n) when they end mid-character."""
    for size in range(1, min(4, len(data)) + 1):
        if not 0x80 <= data[-size] < 0xC0:
            try:
                text = data[-size:].decode("utf-8")
            except UnicodeDecodeError:
                return None, size
            return (text, size) if len(text) == 1 else (None, size)
    return None, min(4, len(data))


# --------------------------------------------------------------------------
# The tokenizers an Encoding wraps


def scheme_of(pat_str: Any) -> str:
    """Our scheme for a tiktoken pattern, checked to split like ours; ValueError otherwise."""
    scheme = scheme_for_pattern(pat_str) if isinstance(pat_str, str) else None
    if scheme is not None:
        try:
            same = regex.findall(pat_str, PATTERN_PROBE) == split_text(PATTERN_PROBE, scheme)
        except regex.error:
            same = False
        if same:
            return scheme
    raise ValueError(
        "pat_str: the playground splits text with GPT-2's, cl100k's or o200k's pattern only "
        "(as tiktoken publishes them, or as in webapp.tokenizer.pretokenize.patterns.PATTERNS); this one is none of them"
    )


PATTERN_PROBE = (
    "Hello, World! It's 12345 O'NEILL's   \n\n  x\ty\r\nz  CamelCaseWord naïve straße ΑΒΓ 日本語 😀 "
    "a/b//c?! 3.14 ''' 'S 'll 'VE \u00a0end  "
)


def from_ranks(ranks: dict[bytes, int], scheme: str, special: dict[str, int]) -> tuple[LoadedTokenizer, Any]:
    """A loaded tokenizer (and compiled merges, or None) for tiktoken-style ranks."""
    for preset in presets.PRESETS.values():
        if preset.n_ranks == len(ranks) and presets.is_installed(preset.rank_file or preset.name):
            if presets.load_ranks(preset.name) == ranks:
                loaded, compiled = preset_parts(preset.name)
                return with_special(loaded, special, scheme), compiled
    triples = recover_rank_merges(ranks)
    rules = [(ranks[a], ranks[b], ranks[t]) for a, b, t in triples]
    file_bytes = {rank: token for token, rank in ranks.items()}
    loaded = build_byte_level(file_bytes, rules, source="tiktoken", pretokenize=scheme, special=special)
    return loaded, None


def with_special(loaded: LoadedTokenizer, special: Mapping[str, int], scheme: str | None = None) -> LoadedTokenizer:
    return replace(loaded, special_tokens=dict(special), pretokenize=scheme or loaded.pretokenize)


def preset_parts(name: str) -> tuple[LoadedTokenizer, Any]:
    """A preset's loaded tokenizer and compiled merges, from the preset cache (presets/cache.py) where it has them."""
    return catalog.load_preset(name), catalog.load_compiled(name)
