"""Special tokens in text, for tokenizers split by a playground scheme (OpenAI presets, typed and minbpe files).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any, Callable, Iterable, Mapping

import regex

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.pretokenize.pretokenized import split_pretokens
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceLimits


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
# tracemalloc: about 64 MB at most). A set over SPECIAL_RE_MAX_CHARS is refused before it is
# compiled.
SPECIAL_RE_ENTRIES = 64
SPECIAL_RE_CHARS = 4_000_000
#: Characters of one allowed set, checked before its alternation is compiled: `regex` takes about
#: 10 microseconds and 250 bytes a character to compile one (200,000: 2-3 s, +60 MB on a loaded
#: 2-core machine), and a file may bring 20,000 special tokens of 1,000 characters.
SPECIAL_RE_MAX_CHARS = 250_000
_SPECIAL_RE_CACHE: BoundedCache[frozenset[str], Any] = BoundedCache(
    SPECIAL_RE_ENTRIES, SPECIAL_RE_CHARS, weigh=_special_chars, name="special.regexes"
)
_SPECIAL_RE_LOCK = threading.Lock()


def special_regex(allowed: frozenset[str]) -> Any:
    """A regex finding any of `allowed` (longest first where several start at one place), cached."""
    with _SPECIAL_RE_LOCK:
        compiled = _SPECIAL_RE_CACHE.get(allowed)
        if compiled is None:
            size = sum(map(len, allowed))
            if size > SPECIAL_RE_MAX_CHARS:
                raise TokenizerError(
                    f"allowed_special: the {len(allowed):,} special tokens allowed have {size:,} characters "
                    f"together, over the {SPECIAL_RE_MAX_CHARS:,} matched at once; allow fewer of them",
                    field="allowed_special")
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


def _shift_node(node: MergeNode, delta: int) -> MergeNode:
    return replace(
        node,
        start=node.start + delta,
        end=node.end + delta,
        children=tuple(_shift_node(child, delta) for child in node.children),
    )


def trace_with_specials(
    text: str,
    allowed: frozenset[str],
    special_tokens: Mapping[str, int],
    scheme: str,
    trace_pieces: Callable[[str, list[tuple[int, int]], TraceLimits], EncodeTrace],
    encode_part: Callable[[str], list[int]],
    limits: TraceLimits,
) -> tuple[EncodeTrace, list[int]]:
    """The trace of `text` with allowed special tokens, and which recorded tokens are special (their indexes)."""
    parts = split_special(text, allowed)
    if not any(special for _, special in parts):
        spans = split_pretokens(text, scheme) if scheme != "none" else []
        return trace_pieces(text, spans, limits), []
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
    trace = trace_pieces(ordinary_text, pretokens, limits)

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
        tokens.append(Token(id=special_tokens[token], value=data, start=start, end=start + len(data)))

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
    ids = encode_with_specials(text, allowed, special_tokens, encode_part)
    all_pretokens = [(a + delta_at(a), b + delta_at(a)) for a, b in pretokens]
    all_pretokens += [(start, start + len(token.encode("utf-8"))) for _, start, token in specials]
    all_pretokens.sort()
    trace = replace(trace, ids=ids, tokens=tokens, tokens_truncated=len(ids) > len(tokens), pretokens=all_pretokens)
    return trace, special_index


def encode_with_specials(text: str, allowed: frozenset[str], special_tokens: Mapping[str, int],
                         encode_part: Callable[[str], list[int]]) -> list[int]:
    """The ids of `text`: each allowed special token its id, the ordinary parts through `encode_part`."""
    ids: list[int] = []
    for part, special in split_special(text, allowed):
        if special:
            ids.append(special_tokens[part])
        else:
            ids.extend(encode_part(part))
    return ids
