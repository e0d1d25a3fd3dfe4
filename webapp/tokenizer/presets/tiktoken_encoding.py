"""tiktoken's `Encoding` over the playground's tokenizers (the registry is tiktoken_api.py).

What it does not do: post-processors of tokenizer.json files (that is
`OpenModelEncoding`, open_model_encoding.py), the library's decoders (decode
joins the tokens' bytes, as tiktoken's does), threads, network access, or the
web's defaults (`get_tokenizer`: special-token text is text unless allowed).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from bisect import bisect_left
from typing import AbstractSet, Any, Callable, Collection, Iterable, Literal, Union

import numpy as np

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.hf.text import WHITE_SPACE
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.stages.special import split_special
from webapp.tokenizer.stages.tokenizer import Tokenizer, tokenizer_of
from webapp.tokenizer.presets.tiktoken_decoding import DecodeMethods, TokenTables
from webapp.tokenizer.presets.tiktoken_parts import (
    allowed_tokens,
    from_ranks,
    scheme_of,
    check_text,
    check_threads,
    last_char,
    replace_surrogates,
    resolve_special,
    special_sets,
)


SpecialSet = Union[Literal["all"], AbstractSet[str]]
SpecialCollection = Union[Literal["all"], Collection[str]]

_MAX_ID = 2**32  # tiktoken keeps ids in 32 bits: anything outside is an OverflowError there



# --------------------------------------------------------------------------
# The encoding


class _IdNotInt(TypeError, AssertionError):
    """tiktoken asserts; this is a TypeError that `except AssertionError` still catches."""


class _VocabSizeMismatch(ValueError, AssertionError):
    """tiktoken asserts; this is a ValueError that `except AssertionError` still catches."""


class Encoding(DecodeMethods):
    """A tokenizer with tiktoken's `Encoding` API (see the module docstring).

    >>> from webapp.tokenizer import get_encoding
    >>> enc = get_encoding("cl100k_base")
    >>> enc.encode("hello world")
    [15339, 1917]
    >>> enc.decode([15339, 1917])
    'hello world'
    """

    name: str
    _loaded: LoadedTokenizer
    _tokenizer: Tokenizer
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
        """tiktoken's constructor: ranks (token bytes -> rank), the split pattern, special tokens."""
        scheme = scheme_of(pat_str)
        if not mergeable_ranks:
            raise ValueError("mergeable_ranks is empty: an encoding needs at least the single bytes")
        loaded, compiled = from_ranks(mergeable_ranks, scheme, dict(special_tokens))
        self.setup_from(name, loaded, compiled)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab or self.n_vocab != explicit_n_vocab:
                raise _VocabSizeMismatch(
                    f"explicit_n_vocab is {explicit_n_vocab}, but there are {len(mergeable_ranks)} ranks and "
                    f"{len(special_tokens)} special tokens, and the largest id is {self.max_token_value}"
                )

    @classmethod
    def from_loaded(cls, name: str, loaded: LoadedTokenizer, compiled: Any = None) -> "Encoding":
        made = cls.__new__(cls)
        made.setup_from(name, loaded, compiled)
        return made

    def setup_from(self, name: str, loaded: LoadedTokenizer, compiled: Any) -> None:
        self.name = name
        self._loaded = loaded
        self._tokenizer = tokenizer_of(loaded, compiled=compiled)
        self._special_tokens = dict(loaded.special_tokens)
        self._special = frozenset(self._special_tokens)  # the names encode's special-token arguments are about
        self._tables: TokenTables | None = None
        self._sorted_bytes: list[bytes] | None = None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    def __reduce__(self) -> tuple[Any, ...]:
        """Registered encodings pickle by name (as tiktoken's), others by their tokenizer."""
        if REGISTRY.get(self.name) is self:
            return (registered, (self.name,))
        return (_restore, (type(self), self.name, self._loaded))

    # ----------------------------------------------------------------------
    # What the tokenizer is made of (built on first use)

    @property
    def _pat_str(self) -> str | None:
        return PATTERNS.get(self._loaded.pretokenize)

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        return dict(self._token_tables().encoder)

    def _ordinary_bytes(self) -> dict[int, bytes]:
        """{id: bytes} of the tokens text is merged into (no special tokens)."""
        return self._tokenizer.ordinary_bytes()

    def _token_tables(self) -> TokenTables:
        tables = self._tables
        if tables is None:  # (two threads may both build it: the same tables, one kept)
            ordinary = self._ordinary_bytes()
            decoder: dict[int, bytes] = {}
            for token, token_id in self._special_tokens.items():
                decoder.setdefault(token_id, token.encode("utf-8", "surrogatepass"))  # the first name of an id
            decoder.update(ordinary)  # an ordinary token wins over a special one with its id
            encoder = {data: token_id for token_id, data in ordinary.items()}
            special_ids = frozenset(self._special_tokens[name] for name in self._special)
            tables = self._tables = TokenTables(decoder, encoder, special_ids, max(decoder, default=0))
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
        return self._tokenizer.encode(replace_surrogates(text), allowed)

    def _encode_texts(self, texts: list[str], allowed: frozenset[str]) -> list[list[int]]:
        """`_encode_text` of each text (split byte-level text: all of them together)."""
        return self._tokenizer.encode_batch([replace_surrogates(text) for text in texts], allowed)

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text`, special-token text encoded as plain text.

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").encode_ordinary("hello <|endoftext|>")
        [15339, 83739, 8862, 728, 428, 91, 29]
        """
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
        """Ids of `text`. Special-token text is an error unless allowed (then one id) or not disallowed (text).

        >>> from webapp.tokenizer import get_encoding
        >>> enc = get_encoding("cl100k_base")
        >>> enc.encode("hello <|endoftext|>", allowed_special={"<|endoftext|>"})
        [15339, 220, 100257]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 8862, 728, 428, 91, 29]
        >>> enc.encode("<|endoftext|>")
        Traceback (most recent call last):
        ValueError: encode: the text holds '<|endoftext|>', which disallowed_special forbids ...
        """
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
        """`encode` of each text with the same special-token arguments (all encoded together).

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").encode_batch(["hello world", "<|endoftext|>"], allowed_special="all")
        [[15339, 1917], [100257]]
        """
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
        """The id of a token given as its text or bytes (special tokens too); KeyError if there is none.

        >>> from webapp.tokenizer import get_encoding
        >>> enc = get_encoding("cl100k_base")
        >>> enc.encode_single_token("hello"), enc.encode_single_token(b" world"), enc.encode_single_token("<|endoftext|>")
        (15339, 1917, 100257)
        >>> enc.encode_single_token("hello world")
        Traceback (most recent call last):
        KeyError: b'hello world'
        """
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
        """The ids that further text cannot change, and the token sequences the end may become."""
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
        parts = split_special(text, allowed)
        if not parts or parts[-1][1]:
            return 0
        scheme = self._loaded.pretokenize
        pieces = split_text(parts[-1][0], scheme) if scheme in PATTERNS else [parts[-1][0]]
        return len(self._bpe(pieces[-1].encode("utf-8"))) if pieces else 0

    def _bpe(self, data: bytes) -> list[int]:
        """The ids of bytes merged as one piece (no split)."""
        return self._tokenizer.model.merge_bytes(data)

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


def _restore(cls: type[Encoding], name: str, loaded: LoadedTokenizer) -> Encoding:
    """Unpickle an encoding that is not in the registry."""
    return cls.from_loaded(name, loaded)


# --------------------------------------------------------------------------
# Named encodings (tiktoken_api's registry keeps them here, so pickles can name them)


def _one(_name: str, _encoding: Any) -> int:
    return 1


#: Named encodings, made once per process and shared (tiktoken_api.get_encoding fills it): one per
#: OpenAI encoding and preset, 64 at most, so in practice nothing is evicted.
REGISTRY: BoundedCache[str, Encoding] = BoundedCache(64, 64, weigh=_one, name="tiktoken_api.registry")
_GET_ENCODING: list[Callable[[str], Encoding]] = []  # tiktoken_api.get_encoding, handed over on its import


def hand_over_registry(get_encoding: Callable[[str], Encoding]) -> None:
    """tiktoken_api gives its get_encoding (this module cannot import it back)."""
    _GET_ENCODING[:] = [get_encoding]


def registered(name: str) -> Encoding:
    """A named encoding again (unpickling): the registry's get_encoding."""
    if not _GET_ENCODING:  # (a fresh process unpickling: the package's names are imported on first use)
        from importlib import import_module

        import_module("webapp.tokenizer.presets.tiktoken_api")  # it hands its get_encoding over on import
    return _GET_ENCODING[0](name)
