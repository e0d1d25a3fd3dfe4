"""`get_tokenizer`: a tiktoken-like handle on a preset or an opened tokenizer file.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Iterable, Literal, Sequence, Union

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets import catalog as presets
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.stages.special import allowed_set
from webapp.tokenizer.stages.tokenizer import Tokenizer, needs_compiled, tokenizer_of

AllowedSpecial = Union[Literal["all"], AbstractSet[str], Sequence[str]]
Resolver = Callable[[str], Any]  # id -> LoadedTokenizer, or None when unknown


# --------------------------------------------------------------------------
# The handle


@dataclass(frozen=True)
class TokenizerHandle:
    """A preset or an opened file, used like a `tiktoken.Encoding`: its stages, and a decode table."""

    name: str
    loaded: "LoadedTokenizer"
    tokenizer: Tokenizer

    @property
    def pattern(self) -> str | None:
        """The pre-tokenization regex, or None when the text is not split."""
        return PATTERNS.get(self.loaded.pretokenize)

    @property
    def special_tokens(self) -> dict[str, int]:
        return dict(self.loaded.special_tokens)

    @property
    def level(self) -> str:
        return self.loaded.level

    def encode(self, text: str, allowed_special: AllowedSpecial = (), *, add_special_tokens: bool = False) -> list[int]:
        """Ids of `text`; `allowed_special` as in tiktoken ("all" or a set), default none.

        >>> from webapp.tokenizer import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> tok.encode("hello world")
        [15339, 1917]
        >>> tok.encode("<|endoftext|>"), tok.encode("<|endoftext|>", allowed_special="all")
        ([27, 91, 8862, 728, 428, 91, 29], [100257])
        """
        ids = self.tokenizer.encode(text, allowed_set(allowed_special, self.loaded.special_tokens))
        return self.tokenizer.post_process(ids) if add_special_tokens else ids

    def encode_ordinary(self, text: str) -> list[int]:
        """Ids of `text`, special-token text as plain text (`encode` with nothing allowed).

        >>> from webapp.tokenizer import get_tokenizer
        >>> get_tokenizer("cl100k_base").encode_ordinary("hello <|endoftext|>")
        [15339, 83739, 8862, 728, 428, 91, 29]
        """
        return self.encode(text)

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The tokens' bytes joined (special tokens as their text).

        >>> from webapp.tokenizer import get_tokenizer
        >>> get_tokenizer("cl100k_base").decode_bytes([71, 19010, 385, 100257])
        b'h\xc3\xa9llo<|endoftext|>'
        """
        table = self._id_bytes()
        out: list[bytes] = []
        for index, token_id in enumerate(ids):
            data = table.get(token_id) if isinstance(token_id, int) and not isinstance(token_id, bool) else None
            if data is None:
                raise TokenizerError(
                    f"ids: id {str(token_id)[:30]} at position {index + 1} is not in {self.name}'s vocab",
                    field="ids",
                    location={"index": index + 1},
                )
            out.append(data)
        return b"".join(out)

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids`, invalid UTF-8 replaced by U+FFFD (as tiktoken's decode).

        >>> from webapp.tokenizer import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> tok.decode([15339, 1917])
        'hello world'
        >>> tok.decode([999999])
        Traceback (most recent call last):
        webapp.tokenizer.errors.TokenizerError: ids: id 999999 at position 1 is not in cl100k_base's vocab
        """
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def _id_bytes(self) -> dict[int, bytes]:
        """{id: bytes} of every token, a special token's text over an ordinary token of its id (made once)."""
        return self.loaded.built.get("handle.id_bytes", self._make_id_bytes)

    def _make_id_bytes(self) -> dict[int, bytes]:
        table = dict(self.tokenizer.ordinary_bytes())
        for token, token_id in self.loaded.special_tokens.items():
            table[token_id] = token.encode("utf-8")
        return table

    @property
    def n_vocab(self) -> int:
        return max(self._id_bytes()) + 1 if self._id_bytes() else 0


def _handle(name: str, loaded: LoadedTokenizer, precompiled: Callable[[str], Any] | None = None) -> TokenizerHandle:
    """A handle on `loaded`'s stages; a list-order preset's rules come from `precompiled` (its stored form)."""
    compiled = precompiled(name) if precompiled is not None and needs_compiled(loaded) else None
    return TokenizerHandle(name, loaded, tokenizer_of(loaded, compiled=compiled))


_RESOLVERS: list[Resolver] = []
# Preset handles by canonical name. Bound: one per preset and every preset's rules
# once (presets.PRESET_RULES in weight): the same bound as the presets' own caches,
# whose LoadedTokenizer and compiled list a handle shares; its own part is the
# id -> bytes table `decode` builds (about 10 MB for o200k_base, tracemalloc).
_HANDLES: BoundedCache[str, TokenizerHandle] = BoundedCache(
    len(presets.PRESET_NAMES), presets.PRESET_RULES, weigh=lambda _name, handle: handle.loaded.rule_count,
    name="real.handles",
)
_HANDLES_LOCK = threading.Lock()


def register_resolver(resolver: Resolver) -> None:
    """Let `get_tokenizer` open ids it does not know (the web layer's stored files)."""
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def get_tokenizer(name_or_id: str) -> TokenizerHandle:
    """A preset by name ("cl100k_base", "gpt2", ...) or an opened file by its id.

    >>> from webapp.tokenizer import get_tokenizer
    >>> tok = get_tokenizer("cl100k_base")
    >>> tok.name, tok.level, tok.n_vocab
    ('cl100k_base', 'bytes', 100277)
    >>> get_tokenizer("gpt5")
    Traceback (most recent call last):
    webapp.tokenizer.errors.TokenizerError: tokenizer: no preset is called 'gpt5'; ...
    """
    if presets.is_preset(name_or_id):
        canonical = presets.get_preset(name_or_id).name
        with _HANDLES_LOCK:
            handle = _HANDLES.get(canonical)
        if handle is None:
            handle = _handle(canonical, presets.load_preset(canonical), presets.load_compiled)
            with _HANDLES_LOCK:
                _HANDLES.put(canonical, handle)
        return handle
    for resolver in _RESOLVERS:
        loaded = resolver(name_or_id)
        if loaded is not None:
            return _handle(str(name_or_id), loaded)
    raise presets.unknown_preset(name_or_id)  # the message lists the preset names


__all__ = ["TokenizerHandle", "get_tokenizer", "register_resolver"]
