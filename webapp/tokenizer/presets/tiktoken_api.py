"""tiktoken's Python API over the playground's tokenizers: a drop-in for counting tokens.

    from webapp.tokenizer import get_encoding, encoding_for_model
    enc = get_encoding("cl100k_base")              # or encoding_for_model("gpt-4o")
    enc.encode("hello <|endoftext|>")              # ValueError: special-token text, as in tiktoken
    enc.encode("hello <|endoftext|>", allowed_special="all")
    enc.encode_batch(texts), enc.decode(ids), enc.n_vocab, pickle.dumps(enc) ...

What it does:

- `get_encoding`, `list_encoding_names`, `encoding_name_for_model`,
  `encoding_for_model`: tiktoken 0.14.0's registry for every OpenAI encoding
  it lists (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, o200k_base,
  o200k_harmony), with its model names and model-name prefixes and its
  error types (ValueError for an unknown encoding, KeyError for an unknown
  model). gpt2 and p50k_edit / o200k_harmony are their base presets' ranks
  and merges with their own name or special tokens, so they load no more
  than r50k_base, p50k_base and o200k_base do. Other names go to
  `get_tokenizer` (other presets, and the files the web layer registers).
- `Encoding`: tiktoken's methods and attributes with its defaults, results
  and error types. Its constructor takes tiktoken's arguments (ranks,
  pattern, special tokens), so the "extend an encoding with special tokens"
  recipe works; the pattern must be GPT-2's, cl100k's or o200k's.
- `OpenModelEncoding` (for a Hugging Face tokenizer.json, from
  `encoding_for_loaded`): the same methods, but `encode` follows the
  `tokenizers` library: added tokens in the text are split out by default
  (`allowed_special="all"`, nothing raises) and `add_special_tokens` is
  accepted.

Decisions where tiktoken leaves room: batches run in the calling thread
(the work is Python holding the GIL, so threads would only add overhead);
`num_threads` is accepted and checked. The texts of a batch are encoded
together (their new pre-tokens in one numpy batch), which is what makes a
batch faster than a loop. Text holding surrogates is repaired as tiktoken
repairs it, for every encoding: a pair becomes its character, a lone one
U+FFFD (`tokenizers` itself refuses such text with a TypeError). When two
special tokens share an id (o200k_harmony's <|endofprompt|> and
<|reserved_200018|>), decoding gives the one listed first, as tiktoken does.

What it does not do: post-processors of tokenizer.json files (templates
that add BOS / [CLS]: `add_special_tokens=True` adds nothing, and the
import notes say when a file has one), the library's decoders (decode here
joins the tokens' bytes, as tiktoken's does), threads, network access,
or the web's friendlier defaults (the pages and the JSON API keep
`get_tokenizer`, where special-token text is plain text unless allowed).
"""

from __future__ import annotations

import operator
import re
import threading
from bisect import bisect_left
from dataclasses import replace
from pathlib import Path
from typing import AbstractSet, Any, Collection, Iterable, Literal, Mapping, NamedTuple, Sequence, Union

import numpy as np
import regex

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.core.byte_level import compile_byte_merges
from webapp.tokenizer.core.char_level import bpe_encode_text, compile_char_merges
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.formats.building import build_byte_level
from webapp.tokenizer.formats.tiktoken_ranks import recover_rank_merges
from webapp.tokenizer.hf import pipeline as hf_pipeline
from webapp.tokenizer.hf.encoding import post_process
from webapp.tokenizer.hf.text import WHITE_SPACE
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets import catalog
from webapp.tokenizer.presets import openai as presets
from webapp.tokenizer.presets import real
from webapp.tokenizer.pretokenize.patterns import PATTERNS, scheme_for_pattern
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.pretokenize.textencode import encode_split_batch

SpecialSet = Union[Literal["all"], AbstractSet[str]]
SpecialCollection = Union[Literal["all"], Collection[str]]

_MAX_ID = 2**32  # tiktoken keeps ids in 32 bits: anything outside is an OverflowError there


# --------------------------------------------------------------------------
# The OpenAI encodings tiktoken 0.14.0 lists, as presets plus special tokens


def _harmony_special_tokens() -> dict[str, int]:
    """o200k_harmony: o200k_base's special tokens, its chat-format tokens, the rest reserved.

    Every id from 200000 to 201087 without a name of its own is reserved,
    200018 included, so <|endofprompt|> (listed first) and <|reserved_200018|>
    share that id.
    """
    named = {
        "<|startoftext|>": 199998,
        "<|return|>": 200002,
        "<|constrain|>": 200003,
        "<|channel|>": 200005,
        "<|start|>": 200006,
        "<|end|>": 200007,
        "<|message|>": 200008,
        "<|call|>": 200012,
    }
    taken = set(named.values())
    reserved = {f"<|reserved_{i}|>": i for i in range(200000, 201088) if i not in taken}
    return {**presets.get_preset("o200k_base").special_tokens, **named, **reserved}


def _p50k_edit_special_tokens() -> dict[str, int]:
    """p50k_edit: p50k_base's end of text, and the three fill-in-the-middle tokens after its ranks."""
    fim = {presets.FIM_PREFIX: 50281, presets.FIM_MIDDLE: 50282, presets.FIM_SUFFIX: 50283}
    return {**presets.get_preset("p50k_base").special_tokens, **fim}


#: tiktoken's encoding name -> (the preset with its ranks, merges and pattern; its own special tokens or None).
OPENAI_ENCODINGS: dict[str, tuple[str, Mapping[str, int] | None]] = {
    "gpt2": ("r50k_base", None),
    "r50k_base": ("r50k_base", None),
    "p50k_base": ("p50k_base", None),
    "p50k_edit": ("p50k_base", _p50k_edit_special_tokens()),
    "cl100k_base": ("cl100k_base", None),
    "o200k_base": ("o200k_base", None),
    "o200k_harmony": ("o200k_base", _harmony_special_tokens()),
}

# Model names, by encoding (tiktoken 0.14.0's tables).
_MODELS: dict[str, tuple[str, ...]] = {
    "o200k_base": ("o1", "o3", "o4-mini", "gpt-5", "gpt-4.1", "gpt-4o"),
    "cl100k_base": (
        "gpt-4", "gpt-3.5-turbo", "gpt-3.5", "gpt-35-turbo", "davinci-002", "babbage-002",
        "text-embedding-ada-002", "text-embedding-3-small", "text-embedding-3-large",
    ),
    "p50k_base": (
        "text-davinci-003", "text-davinci-002", "code-davinci-002", "code-davinci-001",
        "code-cushman-002", "code-cushman-001", "davinci-codex", "cushman-codex",
    ),
    "p50k_edit": ("text-davinci-edit-001", "code-davinci-edit-001"),
    "r50k_base": (
        "text-davinci-001", "text-curie-001", "text-babbage-001", "text-ada-001",
        "davinci", "curie", "babbage", "ada",
        "text-similarity-davinci-001", "text-similarity-curie-001", "text-similarity-babbage-001",
        "text-similarity-ada-001", "text-search-davinci-doc-001", "text-search-curie-doc-001",
        "text-search-babbage-doc-001", "text-search-ada-doc-001",
        "code-search-babbage-code-001", "code-search-ada-code-001",
    ),
    "gpt2": ("gpt2", "gpt-2"),
}
# Model-name prefixes (dated and fine-tuned variants), by encoding.
_MODEL_PREFIXES: dict[str, tuple[str, ...]] = {
    "o200k_base": (
        "o1-", "o3-", "o4-mini-", "gpt-5", "gpt-4.5-", "gpt-4.1-", "chatgpt-4o-", "gpt-4o-", "ft:gpt-4o",
    ),
    "cl100k_base": (
        "gpt-4-", "gpt-3.5-turbo-", "gpt-35-turbo-",
        "ft:gpt-4", "ft:gpt-3.5-turbo", "ft:davinci-002", "ft:babbage-002",
    ),
    "o200k_harmony": ("gpt-oss-",),
}
MODEL_TO_ENCODING: dict[str, str] = {model: enc for enc, models in _MODELS.items() for model in models}
# Longest first: where two prefixes fit a name ("ft:gpt-4o..." and "ft:gpt-4"), the longer one decides.
MODEL_PREFIX_TO_ENCODING: tuple[tuple[str, str], ...] = tuple(
    sorted(((p, enc) for enc, ps in _MODEL_PREFIXES.items() for p in ps), key=lambda item: -len(item[0]))
)


# --------------------------------------------------------------------------
# Small pure helpers


_SURROGATE = re.compile("[\ud800-\udfff]")


def replace_surrogates(text: str) -> str:
    """`text` as UTF-8 can hold it: a surrogate pair becomes its character, a lone surrogate U+FFFD."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _token_chars(tokens: frozenset[str], _value: Any) -> int:
    return sum(map(len, tokens))


# Per set of listed tokens (special or added): the regex that finds them and their first
# characters. Bound: 128 sets and 4,000,000 characters of tokens each (about 64 MB of
# compiled alternations at most, as real.py measured); a heavier set is rebuilt per call.
_FINDERS: BoundedCache[frozenset[str], Any] = BoundedCache(128, 4_000_000, weigh=_token_chars,
                                                           name="tiktoken_api.finders")
_FIRST_CHARS: BoundedCache[frozenset[str], frozenset[str]] = BoundedCache(128, 4_000_000, weigh=_token_chars,
                                                                          name="tiktoken_api.first_chars")


def _finder(tokens: frozenset[str]) -> Any:
    """A regex finding any of `tokens` (longest first where several start at one place)."""
    found = _FINDERS.get(tokens)
    if found is None:
        ordered = sorted(tokens, key=lambda s: (-len(s), s))
        found = regex.compile("|".join(regex.escape(s) for s in ordered))
        _FINDERS.put(tokens, found)
    return found


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
    found = _finder(tokens).search(text)
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
    """tiktoken's first step: (allowed_special as given or all special tokens, the strings text may not hold).

    `disallowed_special` is "all" (every special token not allowed: then
    `allowed_special` must be a set) or any collection of strings (a str
    other than "all" counts as its characters, as in tiktoken).
    `allowed_tokens` checks `allowed_special` itself, after the text.
    """
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
    """Where each token's text starts, in characters of the joined text.

    A token starts at the number of characters begun before its first byte;
    if its first byte continues a character an earlier token began, it starts
    at that character instead.
    """
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
# The encoding


class _IdNotInt(TypeError, AssertionError):
    """tiktoken asserts; this is a TypeError that `except AssertionError` still catches."""


class _VocabSizeMismatch(ValueError, AssertionError):
    """tiktoken asserts; this is a ValueError that `except AssertionError` still catches."""


class _Tables(NamedTuple):
    """What decoding and the attributes look up, made once per encoding."""

    decoder: dict[int, bytes]  # every id -> its bytes (special tokens as their text)
    encoder: dict[bytes, int]  # ordinary tokens' bytes -> id
    special_ids: frozenset[int]
    max_id: int


class Encoding:
    """A tokenizer with tiktoken's `Encoding` API (see the module docstring)."""

    name: str
    _loaded: LoadedTokenizer
    _merges_compiled: Any
    _special_tokens: dict[str, int]

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: dict[bytes, int],
        special_tokens: dict[str, int],
        explicit_n_vocab: int | None = None,
    ) -> None:
        """tiktoken's constructor: ranks (token bytes -> rank), the split pattern, special tokens.

        Ranks equal to a preset's reuse that preset's merges; others are
        turned into merges here (0.6 s of CPU for 100,000 ranks, measured).
        """
        scheme = _scheme_of(pat_str)
        if not mergeable_ranks:
            raise ValueError("mergeable_ranks is empty: an encoding needs at least the single bytes")
        loaded, compiled = _from_ranks(mergeable_ranks, scheme, dict(special_tokens))
        self._setup(name, loaded, compiled)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab or self.n_vocab != explicit_n_vocab:
                raise _VocabSizeMismatch(
                    f"explicit_n_vocab is {explicit_n_vocab}, but there are {len(mergeable_ranks)} ranks and "
                    f"{len(special_tokens)} special tokens, and the largest id is {self.max_token_value}"
                )

    @classmethod
    def _from_loaded(cls, name: str, loaded: LoadedTokenizer, compiled: Any = None) -> "Encoding":
        made = cls.__new__(cls)
        made._setup(name, loaded, compiled)
        return made

    def _setup(self, name: str, loaded: LoadedTokenizer, compiled: Any) -> None:
        self.name = name
        self._loaded = loaded
        self._merges_compiled = compiled
        self._special_tokens = dict(loaded.special_tokens)
        self._special = frozenset(self._special_tokens)  # the names encode's special-token arguments are about
        self._tables: _Tables | None = None
        self._sorted_bytes: list[bytes] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Registered encodings pickle by name (as tiktoken's), others by their tokenizer."""
        if _REGISTRY.get(self.name) is self:
            return (get_encoding, (self.name,))
        return (_restore, (type(self), self.name, self._loaded))

    # ----------------------------------------------------------------------
    # What the tokenizer is made of (built on first use)

    @property
    def _pat_str(self) -> str | None:
        return PATTERNS.get(self._loaded.pretokenize)

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        return dict(self._token_tables().encoder)

    def _merges(self) -> Any:
        if self._merges_compiled is None and not self._loaded.library_order:  # (the library's order needs none)
            rules = list(self._loaded.merges)
            self._merges_compiled = compile_byte_merges(rules) if self._loaded.level == "bytes" else compile_char_merges(rules)
        return self._merges_compiled

    def _ordinary_bytes(self) -> dict[int, bytes]:
        """{id: bytes} of the tokens text is merged into (no special tokens)."""
        if self._loaded.level == "bytes":
            return self._loaded.file_vocab()
        return {token_id: token.encode("utf-8", "surrogatepass") for token, token_id in self._loaded.vocab.items()}

    def _token_tables(self) -> _Tables:
        tables = self._tables
        if tables is None:  # (two threads may both build it: the same tables, one kept)
            ordinary = self._ordinary_bytes()
            decoder: dict[int, bytes] = {}
            for token, token_id in self._special_tokens.items():
                decoder.setdefault(token_id, token.encode("utf-8", "surrogatepass"))  # the first name of an id
            decoder.update(ordinary)  # an ordinary token wins over a special one with its id
            encoder = {data: token_id for token_id, data in ordinary.items()}
            special_ids = frozenset(self._special_tokens[name] for name in self._special)
            tables = self._tables = _Tables(decoder, encoder, special_ids, max(decoder, default=0))
        return tables

    # ----------------------------------------------------------------------
    # Attributes

    @property
    def max_token_value(self) -> int:
        return self._token_tables().max_id

    @property
    def n_vocab(self) -> int:
        """The largest id plus one (tiktoken keeps it for backward compatibility)."""
        return self.max_token_value + 1

    @property
    def eot_token(self) -> int:
        return self._special_tokens["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> set[str]:
        return set(self._special)

    def is_special_token(self, token: int) -> bool:
        if not isinstance(token, int):
            raise _IdNotInt(f"is_special_token takes an int id, got {type(token).__name__}")
        return token in self._token_tables().special_ids

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary token, sorted."""
        if self._sorted_bytes is None:
            self._sorted_bytes = sorted(self._token_tables().encoder)
        return list(self._sorted_bytes)

    # ----------------------------------------------------------------------
    # Encoding

    def _encode_text(self, text: str, allowed: frozenset[str]) -> list[int]:
        """Ids of checked text, the `allowed` special tokens as their ids."""
        text = replace_surrogates(text)
        loaded = self._loaded
        if loaded.level == "chars" and not loaded.pipeline:
            return bpe_encode_text(text, loaded.vocab, self._merges())
        return real.encode_special(loaded, text, allowed, compiled=self._merges())

    def _encode_texts(self, texts: list[str], allowed: frozenset[str]) -> list[list[int]]:
        """`_encode_text` of each text; for split byte-level text, all of them together."""
        loaded = self._loaded
        batched = (
            loaded.level == "bytes" and not loaded.pipeline and not loaded.unknown_bytes
            and loaded.pretokenize in PATTERNS and len(texts) > 1
        )
        if not batched:
            return [self._encode_text(text, allowed) for text in texts]
        split = [real.split_special(replace_surrogates(text), allowed) for text in texts]
        ordinary = [part for parts in split for part, special in parts if not special]
        encoded = iter(encode_split_batch(self._merges(), ordinary, loaded.pretokenize, loaded.id_map))
        out: list[list[int]] = []
        for parts in split:
            ids: list[int] = []
            for part, special in parts:
                if special:
                    ids.append(self._special_tokens[part])
                else:
                    ids.extend(next(encoded))
            out.append(ids)
        return out

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text`, special-token text encoded as plain text."""
        if not isinstance(text, str):
            raise TypeError(f"encode_ordinary: the text should be a str, got {type(text).__name__}")
        return self._encode_text(text, frozenset())

    def encode(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialCollection = "all",
    ) -> list[int]:
        """Ids of `text`. Special-token text is an error unless allowed (then one id) or not disallowed (text)."""
        allowed = resolve_special(text, allowed_special, disallowed_special, self._special)
        return self._encode_text(text, allowed)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialCollection = "all",
    ) -> Any:
        """`encode` as a uint32 numpy array (like tiktoken's, this refuses surrogates)."""
        allowed = resolve_special(text, allowed_special, disallowed_special, self._special)
        text.encode("utf-8")  # UnicodeEncodeError for surrogates, as tiktoken's encode_to_numpy
        return np.array(self._encode_text(text, allowed), dtype=np.uint32)

    def encode_ordinary_batch(self, text: Iterable[str], *, num_threads: int = 8) -> list[list[int]]:
        """`encode_ordinary` of each text (all encoded together: faster than a loop)."""
        check_threads(num_threads)
        texts = list(text)
        for item in texts:
            if not isinstance(item, str):
                raise TypeError(f"encode_ordinary_batch: each text should be a str, got {type(item).__name__}")
        return self._encode_texts(texts, frozenset())

    def encode_batch(
        self,
        text: Iterable[str],
        *,
        num_threads: int = 8,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialCollection = "all",
    ) -> list[list[int]]:
        """`encode` of each text with the same special-token arguments (all encoded together)."""
        check_threads(num_threads)
        texts = list(text)
        if not isinstance(disallowed_special, Iterable):  # (tiktoken's batch takes even a falsy one as a collection)
            raise TypeError(f"encode_batch: disallowed_special should be \"all\" or a collection of strings, "
                            f"got {type(disallowed_special).__name__}")
        special = self._special
        given, disallowed = special_sets(allowed_special, disallowed_special, special)
        allowed: frozenset[str] = frozenset()
        for index, item in enumerate(texts):
            check_text(item, disallowed)
            if index == 0:  # (checked after the first text, as tiktoken does; not at all for no texts)
                allowed = allowed_tokens(given, special)
        return self._encode_texts(texts, allowed)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of a token given as its text or bytes (special tokens too); KeyError if there is none."""
        if isinstance(text_or_bytes, str):
            text_or_bytes = text_or_bytes.encode("utf-8")
        if not isinstance(text_or_bytes, bytes):
            raise TypeError(f"encode_single_token takes a str or bytes, got {type(text_or_bytes).__name__}")
        found = self._token_tables().encoder.get(text_or_bytes)
        if found is not None:
            return found
        try:
            return self._special_tokens[text_or_bytes.decode("utf-8")]
        except (UnicodeDecodeError, KeyError):
            raise KeyError(text_or_bytes) from None

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: SpecialSet = frozenset(),
        disallowed_special: SpecialCollection = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The ids that further text cannot change, and the token sequences the end may become.

        The end of the text that typing more could re-tokenize (its last
        pre-token, widened over whitespace tokens before it) is left out of
        the first list; the second lists candidate continuations: every
        token whose bytes start with that end, and the first tokens of
        each way a token could continue it from inside. Like tiktoken's,
        this refuses surrogates and its order of completions means nothing.
        """
        allowed = resolve_special(text, allowed_special, disallowed_special, self._special)
        loaded = self._loaded
        if loaded.level != "bytes" or loaded.pipeline:
            raise NotImplementedError("encode_with_unstable is for byte-level tokenizers without a tokenizer.json pipeline")
        text.encode("utf-8")  # UnicodeEncodeError for surrogates, as tiktoken's
        ids = self._encode_text(text, allowed)
        unstable_count = self._last_piece_tokens(text, allowed)
        if unstable_count and self._is_space_token(ids[-unstable_count]):
            while unstable_count < len(ids) and self._is_space_token(ids[-unstable_count - 1]):
                unstable_count += 1  # whitespace before the last pre-token may merge with what follows
        if not unstable_count:
            return ids, []
        decoder = self._token_tables().decoder
        end = b"".join(decoder[i] for i in ids[-unstable_count:])
        stable = ids[:-unstable_count]
        return stable, [list(seq) for seq in self._completions(end)]

    def _is_space_token(self, token_id: int) -> bool:
        """Is this an ordinary token made of spaces, newlines and tabs only?"""
        tables = self._token_tables()
        data = tables.decoder.get(token_id)
        return token_id not in tables.special_ids and data is not None and all(byte in b" \n\t" for byte in data)

    def _last_piece_tokens(self, text: str, allowed: frozenset[str]) -> int:
        """How many ids the last pre-token of the text took (0 if the text ends with a special token)."""
        parts = real.split_special(text, allowed)
        if not parts or parts[-1][1]:
            return 0
        scheme = self._loaded.pretokenize
        pieces = split_text(parts[-1][0], scheme) if scheme in PATTERNS else [parts[-1][0]]
        return len(self._bpe(pieces[-1].encode("utf-8"))) if pieces else 0

    def _bpe(self, data: bytes) -> list[int]:
        """The ids of bytes merged as one piece (no split)."""
        return self._loaded.file_ids(self._merges().encode_bytes(data))

    def _completions(self, end: bytes) -> set[tuple[int, ...]]:
        decoder, encoder = self._token_tables()[:2]
        ordered = self._sorted_bytes if self._sorted_bytes is not None else self.token_byte_values()

        def starting_with(prefix: bytes) -> list[bytes]:
            found = []
            at = bisect_left(ordered, prefix)
            while at < len(ordered) and ordered[at].startswith(prefix):
                found.append(ordered[at])
                at += 1
            return found

        completions: set[tuple[int, ...]] = {(encoder[token],) for token in starting_with(end)}
        candidates = [end[:k] + token for k in range(1, len(end)) for token in starting_with(end[k:])]
        texts: list[str] = []
        raw: list[bytes] = []
        for data in candidates:
            try:
                texts.append(data.decode("utf-8"))
            except UnicodeDecodeError:
                raw.append(data)
        for ids in [*self._encode_texts(texts, frozenset()), *map(self._bpe, raw)]:
            taken: list[int] = []
            covered = 0
            for token_id in ids:
                taken.append(token_id)
                covered += len(decoder[token_id])
                if covered >= len(end):
                    break
            completions.add(tuple(taken))
        if len(end) > 1:
            char, size = last_char(end)
            if char is not None and char in WHITE_SPACE and size < len(end):
                completions.add(tuple(self._bpe(end[:-size]) + self._bpe(end[-size:])))
        return completions

    # ----------------------------------------------------------------------
    # Decoding

    def decode_bytes(self, tokens: Sequence[int]) -> bytes:
        """The tokens' bytes joined (special tokens as their text). KeyError for an unknown id."""
        ids = token_list(tokens)
        decoder = self._token_tables().decoder
        try:
            return b"".join(map(decoder.__getitem__, ids))
        except KeyError:
            pass
        for token_id in ids:  # an id outside 32 bits anywhere is an OverflowError first, as in tiktoken
            token_index(token_id)
        missing = next(token_id for token_id in ids if token_id not in decoder)
        raise KeyError(f"{missing} is not a token id of {self.name}")

    def decode(self, tokens: Sequence[int], errors: str = "replace") -> str:
        """The text of the tokens; bytes that are not UTF-8 per `errors` (default: U+FFFD)."""
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """One token's bytes (special tokens too). KeyError for an unknown id."""
        value = token_index(token)
        found = self._token_tables().decoder.get(value)
        if found is None:
            raise KeyError(f"{value} is not a token id of {self.name}")
        return found

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes."""
        return [self.decode_single_token_bytes(token) for token in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text and where each token starts in it (characters). UnicodeDecodeError if not UTF-8."""
        parts = self.decode_tokens_bytes(tokens)
        offsets = char_offsets(parts)
        return b"".join(parts).decode("utf-8", errors="strict"), offsets

    def decode_batch(
        self, batch: Iterable[Sequence[int]], *, errors: str = "replace", num_threads: int = 8
    ) -> list[str]:
        check_threads(num_threads)
        return [self.decode(tokens, errors=errors) for tokens in batch]

    def decode_bytes_batch(self, batch: Iterable[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        check_threads(num_threads)
        return [self.decode_bytes(tokens) for tokens in batch]


class OpenModelEncoding(Encoding):
    """An open model's tokenizer.json with the Encoding API; `encode` follows the `tokenizers` library.

    By default every added token found in the text is one id (the library's
    default) and nothing raises; `allowed_special` / `disallowed_special`
    work as in tiktoken when given (special tokens not allowed stay text, as
    with the library's `encode_special_tokens`; added tokens that are not
    special are always split out, as in the library). `add_special_tokens`
    is the library's argument: the playground applies no post-processor, so
    it adds nothing (see `notes` for what the file has that is left out).
    """

    def __init__(self, name: str, loaded: LoadedTokenizer) -> None:  # noqa: D107 - not tiktoken's signature
        if not loaded.pipeline:
            raise ValueError("OpenModelEncoding is for a tokenizer.json with its pipeline; use encoding_for_loaded")
        self._setup(name, loaded, None)

    def _setup(self, name: str, loaded: LoadedTokenizer, compiled: Any) -> None:
        super()._setup(name, loaded, compiled)
        added = hf_pipeline.compile_pipeline(loaded.pipeline).added
        self._special = frozenset(token.content for token in added if token.special)

    @property
    def notes(self) -> tuple[str, ...]:
        """What the playground leaves out of the file (post-processor, unsupported steps)."""
        return self._loaded.notes

    def encode(  # (the library's arguments and defaults)
        self,
        text: str,
        *,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = "all",
        disallowed_special: SpecialCollection = (),
    ) -> list[int]:
        """The library's ids for `text` (`tokenizers.Tokenizer.encode(text, add_special_tokens=...).ids`)."""
        _check_add_special(add_special_tokens)
        ids = super().encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
        return post_process(self._loaded, ids) if add_special_tokens else ids

    def encode_batch(
        self,
        text: Iterable[str],
        *,
        num_threads: int = 8,
        add_special_tokens: bool = True,
        allowed_special: SpecialSet = "all",
        disallowed_special: SpecialCollection = (),
    ) -> list[list[int]]:
        _check_add_special(add_special_tokens)
        batch = super().encode_batch(
            text, num_threads=num_threads, allowed_special=allowed_special, disallowed_special=disallowed_special
        )
        return [post_process(self._loaded, ids) for ids in batch] if add_special_tokens else batch


def _check_add_special(value: Any) -> None:
    if not isinstance(value, bool):
        raise TypeError(f"add_special_tokens should be True or False, got {type(value).__name__}")


def _restore(cls: type[Encoding], name: str, loaded: LoadedTokenizer) -> Encoding:
    """Unpickle an encoding that is not in the registry."""
    return cls._from_loaded(name, loaded)


# --------------------------------------------------------------------------
# Building encodings


def _scheme_of(pat_str: Any) -> str:
    """Our scheme for a tiktoken pattern, checked to split like ours; ValueError otherwise."""
    scheme = scheme_for_pattern(pat_str) if isinstance(pat_str, str) else None
    if scheme is not None:
        try:
            same = regex.findall(pat_str, _PATTERN_PROBE) == split_text(_PATTERN_PROBE, scheme)
        except regex.error:
            same = False
        if same:
            return scheme
    raise ValueError(
        "pat_str: the playground splits text with GPT-2's, cl100k's or o200k's pattern only "
        "(as tiktoken publishes them, or as in webapp.tokenizer.pretokenize.PATTERNS); this one is none of them"
    )


_PATTERN_PROBE = (
    "Hello, World! It's 12345 O'NEILL's   \n\n  x\ty\r\nz  CamelCaseWord naïve straße ΑΒΓ 日本語 😀 "
    "a/b//c?! 3.14 ''' 'S 'll 'VE \u00a0end  "
)


def _from_ranks(ranks: dict[bytes, int], scheme: str, special: dict[str, int]) -> tuple[LoadedTokenizer, Any]:
    """A loaded tokenizer (and compiled merges, or None) for tiktoken-style ranks."""
    for preset in presets.PRESETS.values():
        if preset.n_ranks == len(ranks) and presets.is_installed(preset.rank_file or preset.name):
            if presets.load_ranks(preset.name) == ranks:
                loaded, compiled = _preset_parts(preset.name)
                return _with_special(loaded, special, scheme), compiled
    triples = recover_rank_merges(ranks)
    rules = [(ranks[a], ranks[b], ranks[t]) for a, b, t in triples]
    file_bytes = {rank: token for token, rank in ranks.items()}
    loaded = build_byte_level(file_bytes, rules, source="tiktoken", pretokenize=scheme, special=special)
    return loaded, None


def _with_special(loaded: LoadedTokenizer, special: Mapping[str, int], scheme: str | None = None) -> LoadedTokenizer:
    return replace(loaded, special_tokens=dict(special), pretokenize=scheme or loaded.pretokenize)


def _project_presets_dir() -> Path | None:
    """The project's instance/presets (`make setup` fills it), if it is there."""
    where = Path(__file__).resolve().parents[2] / "instance" / "presets"
    return where if where.is_dir() else None


def _preset_parts(name: str) -> tuple[LoadedTokenizer, Any]:
    """A preset's loaded tokenizer and compiled merges, from the precompiled files where there are some."""
    where = presets.get_cache_dir() or _project_presets_dir()
    return catalog.load_preset(name, where), catalog.load_compiled(name, where)


def encoding_for_loaded(loaded: LoadedTokenizer, name: str = "loaded", *, compiled: Any = None) -> Encoding:
    """An Encoding for any loaded tokenizer: OpenModelEncoding for a tokenizer.json with its pipeline."""
    cls = OpenModelEncoding if loaded.pipeline else Encoding
    return cls._from_loaded(name, loaded, compiled)


# --------------------------------------------------------------------------
# The registry


_REGISTRY: dict[str, Encoding] = {}
_REGISTRY_LOCK = threading.Lock()


def list_encoding_names() -> list[str]:
    """The names `get_encoding` knows: tiktoken's OpenAI encodings, then any other presets."""
    others = [name for name in catalog.PRESET_NAMES if name not in OPENAI_ENCODINGS]
    return [*OPENAI_ENCODINGS, *others]


def _unknown_encoding(name: str) -> ValueError:
    return ValueError(
        f"get_encoding: there is no encoding called {name[:60]!r}; the encodings are "
        f"{', '.join(list_encoding_names())} (an opened file's id works too, once the web app registered it)"
    )


def _build(name: str) -> Encoding:
    if name in OPENAI_ENCODINGS:
        preset, special = OPENAI_ENCODINGS[name]
        loaded, compiled = _preset_parts(preset)
        if special is not None:
            loaded = _with_special(loaded, special)
        return Encoding._from_loaded(name, loaded, compiled)
    loaded, compiled = _preset_parts(name)
    return encoding_for_loaded(loaded, name, compiled=compiled)


def get_encoding(encoding_name: str) -> Encoding:
    """An encoding by name ("cl100k_base", "gpt2", ...; see list_encoding_names) or an opened file's id.

    Named encodings are made once per process and shared (they are
    read-only); ValueError for a name that is not a string or not known.
    """
    if not isinstance(encoding_name, str):
        raise ValueError(f"get_encoding takes an encoding name (a str), got {type(encoding_name).__name__}")
    found = _REGISTRY.get(encoding_name)
    if found is not None:
        return found
    if encoding_name in OPENAI_ENCODINGS or encoding_name in catalog.PRESET_NAMES:
        made = _build(encoding_name)
        with _REGISTRY_LOCK:
            return _REGISTRY.setdefault(encoding_name, made)
    try:
        handle = real.get_tokenizer(encoding_name)  # an alias, or an id a registered resolver knows
    except TokenizerError:
        raise _unknown_encoding(encoding_name) from None
    if catalog.is_preset(encoding_name):  # an alias of a preset that is not one of tiktoken's names
        return get_encoding(handle.name)
    return encoding_for_loaded(handle.loaded, encoding_name)


def encoding_name_for_model(model_name: str) -> str:
    """The encoding a model uses: its exact name, else the longest known prefix. KeyError if neither."""
    if model_name in MODEL_TO_ENCODING:
        return MODEL_TO_ENCODING[model_name]
    for prefix, encoding in MODEL_PREFIX_TO_ENCODING:
        if model_name.startswith(prefix):
            return encoding
    raise KeyError(
        f"encoding_for_model: no encoding is known for the model {model_name[:80]!r}; "
        "name the encoding with get_encoding (see list_encoding_names)"
    )


def encoding_for_model(model_name: str) -> Encoding:
    """The encoding of a model ("gpt-4o", "gpt-3.5-turbo-0613", ...). KeyError for an unknown model."""
    return get_encoding(encoding_name_for_model(model_name))


__all__ = [
    "Encoding", "MODEL_PREFIX_TO_ENCODING", "MODEL_TO_ENCODING", "OPENAI_ENCODINGS", "OpenModelEncoding",
    "allowed_tokens", "char_offsets", "check_text", "encoding_for_loaded", "encoding_for_model", "encoding_name_for_model",
    "find_listed", "get_encoding", "list_encoding_names", "replace_surrogates", "resolve_special",
    "special_sets",
]
