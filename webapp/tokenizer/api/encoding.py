"""`Encoding`: the one public handle on a tokenizer, with tiktoken's API, over the one `Tokenizer`.

Presets, opened files, any loaded tokenizer alike; `Defaults` say what `encode` does with
the arguments not given (tiktoken's, the `tokenizers` library's or the playground's).
What it does not do: name encodings or cache them (registry.py), the library's decoders
(decode joins the tokens' bytes, as tiktoken's does), threads or network access.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Any, Collection, Iterable, Literal, Union

import numpy as np

from webapp.tokenizer.api import unstable
from webapp.tokenizer.api.decoding import DecodeMethods, TokenTables
from webapp.tokenizer.api.parts import (
    allowed_tokens,
    check_text,
    check_threads,
    from_ranks,
    replace_surrogates,
    resolve_special,
    scheme_of,
    special_sets,
)
from webapp.tokenizer.hf.pipeline import compile_pipeline
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.stages.special import allowed_set
from webapp.tokenizer.stages.tokenizer import Tokenizer, tokenizer_of

SpecialSet = Union[Literal["all"], AbstractSet[str]]
SpecialCollection = Union[Literal["all"], Collection[str]]


class _Unset:
    """The default of an argument not given: the encoding's `Defaults` decide."""

    def __repr__(self) -> str:
        return "<the encoding's default>"


UNSET: Any = _Unset()


@dataclass(frozen=True)
class Defaults:
    """What `encode` does with the arguments not given, and how it reads `allowed_special`.

    `named`: the playground's reading (a list of special-token names, each checked, a
    `TokenizerError` naming `allowed_special`); otherwise tiktoken's (a set, or "all").
    """

    name: str
    allowed_special: Any
    disallowed_special: Any
    add_special_tokens: bool
    named: bool = False


TIKTOKEN = Defaults("tiktoken", frozenset(), "all", False)
TOKENIZERS = Defaults("tokenizers", "all", (), True)  # tokenizers.Tokenizer.encode(text).ids
PLAYGROUND = Defaults("playground", (), (), False, named=True)  # special-token text is text unless allowed
DEFAULTS = {d.name: d for d in (TIKTOKEN, TOKENIZERS, PLAYGROUND)}


def library_defaults(loaded: LoadedTokenizer) -> Defaults:
    """The defaults of the file's own library: `tokenizers` for a tokenizer.json, tiktoken otherwise."""
    return TOKENIZERS if loaded.pipeline else TIKTOKEN


class _VocabSizeMismatch(ValueError, AssertionError):
    """tiktoken asserts; this is a ValueError that `except AssertionError` still catches."""


class _Parts:
    """What encodings of one tokenizer share, whatever their defaults: its stages and decode tables."""

    def __init__(self, loaded: LoadedTokenizer, compiled: Any) -> None:
        self.loaded = loaded
        self.tokenizer = tokenizer_of(loaded, compiled=compiled)
        # The names encode's special-token arguments are about: a tokenizer.json's special added tokens.
        self.special = frozenset(token.content for token in compile_pipeline(loaded.pipeline).added if token.special) \
            if loaded.pipeline else frozenset(loaded.special_tokens)
        self.tables: TokenTables | None = None
        self.sorted_bytes: list[bytes] | None = None

    def token_tables(self) -> TokenTables:
        tables = self.tables
        if tables is None:  # (two threads may both build it: the same tables, one kept)
            tables = self.tables = _make_tables(self.loaded, self.tokenizer.ordinary_bytes(), self.special)
        return tables


def _make_tables(loaded: LoadedTokenizer, ordinary: dict[int, bytes], special: frozenset[str]) -> TokenTables:
    """Every id's bytes. Where an id is both an ordinary and a special token, the ordinary token's: tiktoken
    decodes so, and `tokenizers` gives an added token a new id instead (sentencepiece and GGUF have one
    piece per id). tests/unit/tokenizer/api/test_one_handle.py checks each against its library."""
    decoder: dict[int, bytes] = {}
    for token, token_id in loaded.special_tokens.items():
        decoder.setdefault(token_id, token.encode("utf-8", "surrogatepass"))  # the first name of an id
    decoder.update(ordinary)
    encoder = {data: token_id for token_id, data in ordinary.items()}
    special_ids = frozenset(loaded.special_tokens[name] for name in special if name in loaded.special_tokens)
    return TokenTables(decoder, encoder, special_ids, max(decoder, default=0))


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
    defaults: Defaults
    _parts: _Parts

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
        self.name, self.defaults, self._parts = name, TIKTOKEN, _Parts(loaded, compiled)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab or self.n_vocab != explicit_n_vocab:
                raise _VocabSizeMismatch(
                    f"explicit_n_vocab is {explicit_n_vocab}, but there are {len(mergeable_ranks)} ranks and "
                    f"{len(special_tokens)} special tokens, and the largest id is {self.max_token_value}"
                )

    @classmethod
    def from_loaded(cls, name: str, loaded: LoadedTokenizer, compiled: Any = None,
                    defaults: Defaults | None = None) -> "Encoding":
        """An encoding of any loaded tokenizer; `defaults` by default those of its file's library."""
        return cls._made(name, _Parts(loaded, compiled), defaults or library_defaults(loaded))

    @classmethod
    def _made(cls, name: str, parts: _Parts, defaults: Defaults) -> "Encoding":
        made = cls.__new__(cls)
        made.name, made.defaults, made._parts = name, defaults, parts
        return made

    def with_defaults(self, defaults: Defaults, name: str | None = None) -> "Encoding":
        """The same tokenizer (its stages and tables shared) with other defaults."""
        return self._made(name or self.name, self._parts, defaults)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # ----------------------------------------------------------------------
    # What the tokenizer is made of

    @property
    def loaded(self) -> LoadedTokenizer:
        return self._parts.loaded

    @property
    def tokenizer(self) -> Tokenizer:
        """The one `Tokenizer` of stages every encode runs through."""
        return self._parts.tokenizer

    _loaded = loaded
    _tokenizer = tokenizer

    @property
    def pattern(self) -> str | None:
        """The playground's split regex, or None when the text is not split so (or by the file's own steps)."""
        return PATTERNS.get(self.loaded.pretokenize)

    _pat_str = pattern

    @property
    def level(self) -> str:
        return self.loaded.level

    @property
    def notes(self) -> tuple[str, ...]:
        """What the playground leaves out of the file (post-processor, unsupported steps)."""
        return self.loaded.notes

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self.loaded.special_tokens)

    @property
    def _special_tokens(self) -> dict[str, int]:
        return self.loaded.special_tokens

    @property
    def _special(self) -> frozenset[str]:
        return self._parts.special

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        return dict(self._token_tables().encoder)

    def _token_tables(self) -> TokenTables:
        return self._parts.token_tables()

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
        return list(self._sorted_bytes())

    def _sorted_bytes(self) -> list[bytes]:
        if self._parts.sorted_bytes is None:
            self._parts.sorted_bytes = sorted(self._token_tables().encoder)
        return self._parts.sorted_bytes

    # ----------------------------------------------------------------------
    # Encoding

    def _encode_text(self, text: str, allowed: frozenset[str]) -> list[int]:
        """Ids of checked text, the `allowed` special tokens as their ids."""
        return self.tokenizer.encode(replace_surrogates(text), allowed)

    def _encode_texts(self, texts: list[str], allowed: frozenset[str]) -> list[list[int]]:
        """`_encode_text` of each text (split byte-level text: all of them together)."""
        return self.tokenizer.encode_batch([replace_surrogates(text) for text in texts], allowed)

    def _allowed(self, text: Any, allowed_special: Any, disallowed_special: Any) -> frozenset[str]:
        """The special tokens to recognise in `text`, read by the defaults' rules (tiktoken's checks first)."""
        d = self.defaults
        if d.named and disallowed_special is UNSET:
            return allowed_set(d.allowed_special if allowed_special is UNSET else allowed_special,
                               self._special_tokens)
        return resolve_special(
            text,
            d.allowed_special if allowed_special is UNSET else allowed_special,
            d.disallowed_special if disallowed_special is UNSET else disallowed_special,
            self._special,
        )

    def _post_processed(self, ids: list[int], add_special_tokens: Any) -> list[int]:
        add = self.defaults.add_special_tokens if add_special_tokens is UNSET else add_special_tokens
        if not isinstance(add, bool):
            raise TypeError(f"add_special_tokens should be True or False, got {type(add).__name__}")
        return self.tokenizer.post_process(ids) if add else ids

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
        allowed_special: SpecialSet | Any = UNSET,
        *,
        disallowed_special: SpecialCollection | Any = UNSET,
        add_special_tokens: bool | Any = UNSET,
    ) -> list[int]:
        """Ids of `text`. Special-token text is an error unless allowed (then one id) or not disallowed (text).

        Arguments not given follow `self.defaults` (`get_tokenizer`'s: special-token text is text).

        >>> from webapp.tokenizer import get_encoding, get_tokenizer
        >>> enc = get_encoding("cl100k_base")
        >>> enc.encode("hello <|endoftext|>", allowed_special={"<|endoftext|>"})
        [15339, 220, 100257]
        >>> enc.encode("<|endoftext|>", disallowed_special=())
        [27, 91, 8862, 728, 428, 91, 29]
        >>> enc.encode("<|endoftext|>")
        Traceback (most recent call last):
        ValueError: encode: the text holds '<|endoftext|>', which disallowed_special forbids ...
        >>> get_tokenizer("cl100k_base").encode("<|endoftext|>")
        [27, 91, 8862, 728, 428, 91, 29]
        """
        allowed = self._allowed(text, allowed_special, disallowed_special)
        return self._post_processed(self._encode_text(text, allowed), add_special_tokens)

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: SpecialSet | Any = UNSET,
        disallowed_special: SpecialCollection | Any = UNSET,
    ) -> Any:
        """`encode` as a uint32 numpy array (like tiktoken's, this refuses surrogates)."""
        allowed = self._allowed(text, allowed_special, disallowed_special)
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
        allowed_special: SpecialSet | Any = UNSET,
        disallowed_special: SpecialCollection | Any = UNSET,
        add_special_tokens: bool | Any = UNSET,
    ) -> list[list[int]]:
        """`encode` of each text with the same special-token arguments (all encoded together).

        >>> from webapp.tokenizer import get_encoding
        >>> get_encoding("cl100k_base").encode_batch(["hello world", "<|endoftext|>"], allowed_special="all")
        [[15339, 1917], [100257]]
        """
        check_threads(num_threads)
        texts = list(text)
        allowed = self._batch_allowed(texts, allowed_special, disallowed_special)
        return [self._post_processed(ids, add_special_tokens) for ids in self._encode_texts(texts, allowed)]

    def _batch_allowed(self, texts: list[Any], allowed_special: Any, disallowed_special: Any) -> frozenset[str]:
        """`_allowed` for a batch, with tiktoken's order of checks (the first text's, then the allowed set's)."""
        d = self.defaults
        if d.named and disallowed_special is UNSET:
            return allowed_set(d.allowed_special if allowed_special is UNSET else allowed_special,
                               self._special_tokens)
        given_allowed = d.allowed_special if allowed_special is UNSET else allowed_special
        given_disallowed = d.disallowed_special if disallowed_special is UNSET else disallowed_special
        if not isinstance(given_disallowed, Iterable):  # (tiktoken's batch takes even a falsy one as a collection)
            raise TypeError(f"encode_batch: disallowed_special should be \"all\" or a collection of strings, "
                            f"got {type(given_disallowed).__name__}")
        given, disallowed = special_sets(given_allowed, given_disallowed, self._special)
        allowed: frozenset[str] = frozenset()
        for index, item in enumerate(texts):
            check_text(item, disallowed)
            if index == 0:  # (checked after the first text, as tiktoken does; not at all for no texts)
                allowed = allowed_tokens(given, self._special)
        return allowed

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
        allowed_special: SpecialSet | Any = UNSET,
        disallowed_special: SpecialCollection | Any = UNSET,
    ) -> tuple[list[int], list[list[int]]]:
        """The ids that further text cannot change, and the token sequences the end may become (tiktoken's)."""
        allowed = self._allowed(text, allowed_special, disallowed_special)
        if self.loaded.level != "bytes" or self.loaded.pipeline:
            raise NotImplementedError("encode_with_unstable is for byte-level tokenizers without a tokenizer.json pipeline")
        text.encode("utf-8")  # UnicodeEncodeError for surrogates, as tiktoken's
        return unstable.encode_with_unstable(self.tokenizer, self._token_tables(), self._sorted_bytes(), text, allowed)


class _IdNotInt(TypeError, AssertionError):
    """tiktoken asserts; this is a TypeError that `except AssertionError` still catches."""


__all__ = ["DEFAULTS", "Defaults", "Encoding", "PLAYGROUND", "TIKTOKEN", "TOKENIZERS", "UNSET", "library_defaults"]
