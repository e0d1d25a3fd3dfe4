"""Special tokens in text, for tokenizers split by a playground scheme (OpenAI presets, typed and minbpe files).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterable, Mapping

import regex

from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.errors import TokenizerError


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
