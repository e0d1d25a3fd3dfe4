"""`get_tokenizer`: a tiktoken-like handle on a preset or an opened tokenizer file.

    from webapp.tokenizer import get_tokenizer
    enc = get_tokenizer("cl100k_base")            # or "gpt2", or an opened file's id
    enc.encode("hello <|endoftext|>")             # like tiktoken's encode_ordinary
    enc.encode("hello <|endoftext|>", allowed_special="all")   # the special token's id
    enc.decode(ids)

Special tokens: `allowed_special` is `()` (the default), `"all"`, or a set of
special-token strings. A special token's text that is not allowed is encoded
as ordinary text, exactly like tiktoken's `encode_ordinary`; unlike tiktoken's
`encode`, which raises for disallowed special text by default, nothing here
raises for it, because the playground encodes whatever the user typed.
Allowed ones become their id; the text between them is split and encoded on
its own, so no pre-token or segment ever crosses a special token (as in tiktoken).

`decode` follows tiktoken too: the tokens' bytes joined, invalid UTF-8
replaced by U+FFFD (`decode_bytes` gives the raw bytes). An id that is not in
the vocab is a TokenizerError naming its position.

Opened files: the web layer registers a resolver (`register_resolver`) that
turns a stored id into a `LoadedTokenizer`, so this package stays Flask-free.
Character-level files work too (encode / decode over their `{token: id}`
vocab; they have no pattern and no special tokens).

Also here, for the pages: `encode_trace_special`, the byte-level trace with
allowed special tokens shown as one token each. What this module does not do:
load rank files (openai.py), parse files (formats/), or HTTP.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from typing import AbstractSet, Any, Callable, Iterable, Literal, Mapping, Sequence, Union

import regex

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges, encode_trace
from webapp.tokenizer.core.list_order.char_level import bpe_encode_text
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.hf.encoding import (
    DROPPED, encode_loaded, encode_loaded_trace, post_process, relabel_map, uses_pipeline,
)
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.presets import catalog as presets
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.pretokenized import split_pretokens
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, EncodeTrace, MergeNode, Token, TraceLimits

AllowedSpecial = Union[Literal["all"], AbstractSet[str], Sequence[str]]
Resolver = Callable[[str], Any]  # id -> LoadedTokenizer, or None when unknown


# --------------------------------------------------------------------------
# Special tokens in text


def allowed_set(allowed_special: Any, special_tokens: Mapping[str, int]) -> frozenset[str]:
    """The special-token strings to recognise: "all", () / None / "none", or an iterable of them."""
    if allowed_special is None or allowed_special == "none" or allowed_special == ():
        return frozenset()
    if allowed_special == "all":
        return frozenset(special_tokens)
    if isinstance(allowed_special, str) or not isinstance(allowed_special, Iterable):
        raise TokenizerError(
            'allowed_special: expected "all", "none" or a list of special tokens', field="allowed_special"
        )
    wanted = list(allowed_special)
    for index, item in enumerate(wanted):
        if not isinstance(item, str) or item not in special_tokens:
            shown = repr(item)[:60]
            raise TokenizerError(
                f"allowed_special: item {index + 1} ({shown}) is not a special token of this tokenizer",
                field="allowed_special",
                location={"index": index + 1},
            )
    return frozenset(wanted)


def _special_chars(allowed: frozenset[str], _compiled: Any) -> int:
    """The weight of a cached special-token regex: the characters of its tokens."""
    return sum(map(len, allowed))


# Compiled special-token regexes by allowed set. Bound: 64 sets and 4,000,000 characters
# of special tokens in all (a compiled alternation costs about 16 bytes per character,
# tracemalloc: about 64 MB at most). A set over the weight on its own (20,000 tokens
# of 200 characters) is compiled for each call instead of kept.
SPECIAL_RE_ENTRIES = 64
SPECIAL_RE_CHARS = 4_000_000
_SPECIAL_RE_CACHE: BoundedCache[frozenset[str], Any] = BoundedCache(
    SPECIAL_RE_ENTRIES, SPECIAL_RE_CHARS, weigh=_special_chars, name="real.special_regexes"
)
_SPECIAL_RE_LOCK = threading.Lock()


def special_regex(allowed: frozenset[str]) -> Any:
    """A regex finding any of `allowed` (longest first where several start at one place), cached."""
    with _SPECIAL_RE_LOCK:
        compiled = _SPECIAL_RE_CACHE.get(allowed)
        if compiled is None:
            # Longest first, so a special token that starts another never shadows it.
            ordered = sorted(allowed, key=lambda s: (-len(s), s))
            compiled = regex.compile("|".join(regex.escape(s) for s in ordered))
            _SPECIAL_RE_CACHE.put(allowed, compiled)
        return compiled


def split_special(text: str, allowed: frozenset[str]) -> list[tuple[str, bool]]:
    """`text` cut into (part, is_special) in order; empty ordinary parts are left out."""
    if not allowed:
        return [(text, False)] if text else []
    out: list[tuple[str, bool]] = []
    start = 0
    for match in special_regex(allowed).finditer(text):
        if match.start() > start:
            out.append((text[start : match.start()], False))
        out.append((match.group(), True))
        start = match.end()
    if start < len(text):
        out.append((text[start:], False))
    return out


# --------------------------------------------------------------------------
# Byte-level encoding with special tokens


def encode_special(tok: Any, text: str, allowed: frozenset[str], *, compiled: Any = None, scheme: str | None = None) -> list[int]:
    """A byte-level LoadedTokenizer's ids for `text`, the allowed special tokens as their ids."""
    if uses_pipeline(tok, scheme):  # a tokenizer.json cuts out its added tokens itself, as the library does
        return encode_loaded(tok, text, scheme, compiled=compiled, allowed_special=allowed)
    ids: list[int] = []
    for part, special in split_special(text, allowed):
        if special:
            ids.append(tok.special_tokens[part])
        else:
            ids.extend(encode_loaded(tok, part, scheme, compiled=compiled))
    return ids


def _shift_node(node: MergeNode, delta: int) -> MergeNode:
    return replace(
        node,
        start=node.start + delta,
        end=node.end + delta,
        children=tuple(_shift_node(child, delta) for child in node.children),
    )


def encode_trace_special(
    tok: Any,
    text: str,
    allowed: frozenset[str],
    *,
    compiled: Any = None,
    scheme: str | None = None,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
) -> tuple[EncodeTrace, list[int]]:
    """The byte-level trace with allowed special tokens, and which recorded tokens are special.

    The ordinary parts are traced as one text with the special tokens taken
    out and a cut where each stood, each part split on its own (so nothing
    merges or splits across a special token, as in tiktoken). The special
    tokens are then put back as one token each and every offset (tokens,
    merge trees, pre-tokens) moved to where it is in `text`. The per-rule steps
    and sequences cover the ordinary parts only: no rule makes a special
    token. The second value lists the indexes in `trace.tokens` that are
    special (for the page's styling).
    """
    if uses_pipeline(tok, scheme) or tok.library_order:  # a tokenizer.json cuts out its added tokens itself
        trace = encode_loaded_trace(
            tok, text, scheme, compiled=compiled, limits=limits, allowed_special=allowed,
        )
        added = set(tok.special_tokens.values())
        return trace, [i for i, t in enumerate(trace.tokens) if t.id in added]
    scheme = scheme or tok.pretokenize
    parts = split_special(text, allowed)
    if not any(special for _, special in parts):
        trace = encode_loaded_trace(
            tok, text, scheme, compiled=compiled, limits=limits,
        )
        return trace, []
    pretokens: list[tuple[int, int]] = []  # in the ordinary text's byte offsets
    specials: list[tuple[int, int, str]] = []  # (ordinary offset, offset in text, token)
    offset = 0  # in the ordinary text
    full = 0  # in text
    for part, special in parts:
        size = len(part.encode("utf-8", "surrogatepass"))
        if special:
            specials.append((offset, full, part))
        elif scheme != "none":
            pretokens.extend((offset + a, offset + b) for a, b in split_pretokens(part, scheme))
        else:
            pretokens.append((offset, offset + size))
        if not special:
            offset += size
        full += size
    ordinary_text = "".join(part for part, special in parts if not special)
    trace = _trace_with_pretokens(tok, ordinary_text, pretokens, compiled, limits)

    def delta_at(position: int) -> int:
        """Bytes of the special tokens that stand before ordinary offset `position`."""
        return sum(len(token.encode("utf-8")) for at, _, token in specials if at <= position)

    tokens: list[Token] = []
    special_index: list[int] = []
    waiting = list(specials)

    def put_special(item: tuple[int, int, str]) -> None:
        _, start, token = item
        data = token.encode("utf-8")
        special_index.append(len(tokens))
        tokens.append(Token(id=tok.special_tokens[token], value=data, start=start, end=start + len(data)))

    for token in trace.tokens:
        while waiting and waiting[0][0] <= token.start:
            put_special(waiting.pop(0))
        delta = delta_at(token.start)
        tokens.append(
            replace(
                token,
                start=token.start + delta,
                end=token.end + delta,
                tree=_shift_node(token.tree, delta) if token.tree is not None else None,
            )
        )
    if not trace.tokens_truncated:
        for item in waiting:
            put_special(item)
    tokens = tokens[:limits.max_tokens]
    special_index = [i for i in special_index if i < len(tokens)]
    # The complete ids, specials in place (cheap: the segments are cached by now).
    ids = encode_special(tok, text, allowed, compiled=compiled, scheme=scheme)
    all_pretokens = [(a + delta_at(a), b + delta_at(a)) for a, b in pretokens]
    all_pretokens += [(start, start + len(token.encode("utf-8"))) for _, start, token in specials]
    all_pretokens.sort()
    trace = replace(trace, ids=ids, tokens=tokens, tokens_truncated=len(ids) > len(tokens), pretokens=all_pretokens)
    return trace, special_index


def _trace_with_pretokens(
    tok: Any, text: str, pretokens: list[tuple[int, int]], compiled: Any, limits: TraceLimits
) -> EncodeTrace:
    """encode_loaded_trace with given pre-tokens (their starts as cuts) instead of the scheme's split."""
    trace = encode_trace(
        text,
        compiled if compiled is not None else tok.merges,
        limits=limits,
        cuts=[start for start, _ in pretokens],
        relabel=relabel_map(tok),
    )
    if tok.unknown_bytes and tok.unk_id is None:
        trace = replace(
            trace,
            ids=[i for i in trace.ids if i != DROPPED],
            tokens=[t for t in trace.tokens if t.id != DROPPED],
        )
    return replace(trace, pretokens=pretokens)


# --------------------------------------------------------------------------
# The handle


@dataclass(frozen=True)
class Tokenizer:
    """A preset or an opened file, used like a `tiktoken.Encoding`."""

    name: str
    loaded: "LoadedTokenizer"
    compiled: Any = None  # CompiledByteMerges (byte level), built on first use

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

    def _compiled(self) -> Any:
        if self.compiled is None and self.loaded.level == "bytes" and not self.loaded.library_order:
            if presets.is_preset(self.name):  # the precompiled form, when the preset cache has it
                compiled = presets.load_compiled(self.name)
            else:
                compiled = compile_byte_merges(list(self.loaded.merges))
            object.__setattr__(self, "compiled", compiled)
        return self.compiled

    def encode(self, text: str, allowed_special: AllowedSpecial = (), *, add_special_tokens: bool = False) -> list[int]:
        """Ids of `text`; `allowed_special` as in tiktoken ("all" or a set), default none.

        `add_special_tokens`: what a tokenizer.json's post-processor adds around
        the text (`<s>`, `<bos>`, ...), as the library's argument of that name.
        Special-token text not allowed is plain text (tiktoken's own `encode`
        refuses it instead):

        >>> from webapp.tokenizer import get_tokenizer
        >>> tok = get_tokenizer("cl100k_base")
        >>> tok.encode("hello world")
        [15339, 1917]
        >>> tok.encode("<|endoftext|>"), tok.encode("<|endoftext|>", allowed_special="all")
        ([27, 91, 8862, 728, 428, 91, 29], [100257])
        """
        allowed = allowed_set(allowed_special, self.loaded.special_tokens)
        if self.loaded.level == "chars" and not uses_pipeline(self.loaded):
            ids = bpe_encode_text(text, self.loaded.vocab, list(self.loaded.merges))
        else:
            ids = encode_special(self.loaded, text, allowed, compiled=self._compiled())
        return post_process(self.loaded, ids) if add_special_tokens else ids

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
        cached = getattr(self, "_table", None)
        if cached is None:
            if self.loaded.level == "bytes":
                cached = dict(self.loaded.file_vocab())
            else:
                cached = {i: t.encode("utf-8") for t, i in self.loaded.vocab.items()}
            for token, token_id in self.loaded.special_tokens.items():
                cached[token_id] = token.encode("utf-8")
            object.__setattr__(self, "_table", cached)
        return cached

    @property
    def n_vocab(self) -> int:
        return max(self._id_bytes()) + 1 if self._id_bytes() else 0


_RESOLVERS: list[Resolver] = []
# Preset handles by canonical name. Bound: one per preset and every preset's rules
# once (presets.PRESET_RULES in weight): the same bound as the presets' own caches,
# whose LoadedTokenizer and compiled list a handle shares; its own part is the
# id -> bytes table `decode` builds (about 10 MB for o200k_base, tracemalloc).
_HANDLES: BoundedCache[str, Tokenizer] = BoundedCache(
    len(presets.PRESET_NAMES), presets.PRESET_RULES, weigh=lambda _name, handle: handle.loaded.rule_count,
    name="real.handles",
)
_HANDLES_LOCK = threading.Lock()


def register_resolver(resolver: Resolver) -> None:
    """Let `get_tokenizer` open ids it does not know (the web layer's stored files)."""
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def get_tokenizer(name_or_id: str) -> Tokenizer:
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
            handle = Tokenizer(canonical, presets.load_preset(canonical))
            with _HANDLES_LOCK:
                _HANDLES.put(canonical, handle)
        return handle
    for resolver in _RESOLVERS:
        loaded = resolver(name_or_id)
        if loaded is not None:
            return Tokenizer(str(name_or_id), loaded)
    raise presets.unknown_preset(name_or_id)  # the message lists the preset names


__all__ = [
    "Tokenizer", "allowed_set", "encode_special", "encode_trace_special", "get_tokenizer",
    "register_resolver", "split_special",
]
