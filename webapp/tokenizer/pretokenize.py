"""Optional pre-tokenization: split text with a regular expression, encode each pre-token.

The algorithms of docs/algorithms.md encode the whole text as one sequence, and that
stays the default (scheme "none"). Real tokenizers first split the text with a
regular expression (GPT-2's pattern, cl100k's for GPT-3.5/4, o200k's for GPT-4o)
and run BPE inside each pre-token only. This module offers those three schemes:

- `split_pretokens(text, scheme)` gives the pre-tokens as UTF-8 byte spans;
- `pretokenized_encode(text, merges, scheme)` encodes every pre-token with the
  same ordered-rule semantics as `encode` and concatenates the ids;
- `pretokenized_encode_trace(...)` does the same and returns one `EncodeTrace`
  for the whole text (token spans in byte offsets of the whole text, the
  pre-tokens in `EncodeTrace.pretokens`).

Identical pre-tokens give identical ids, so each distinct pre-token is encoded once
per call. What it does not do: special tokens, normalisation, or prefix
spaces; character-level encoding (the option is for byte-level merges).
The patterns are the published ones, compiled with the `regex` package
(Unicode classes such as \\p{L} and the scoped (?i:...) flag need it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

import regex

from webapp.tokenizer.core import byte_level
from webapp.tokenizer.errors import TokenizerError, short_repr
from webapp.tokenizer.traces import EncodeTrace

SCHEMES: tuple[str, ...] = ("none", "gpt2", "cl100k", "o200k")

# GPT-2's pattern as published with its encoder (also the `tokenizers`
# ByteLevel pre-tokenizer's regex), and cl100k_base's pattern.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
# o200k_base's (GPT-4o) pattern as tiktoken publishes it: letters split at
# case changes, contractions kept with their word, "/" after punctuation.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
PATTERNS: dict[str, str] = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN, "o200k": O200K_PATTERN}
_COMPILED: dict[str, regex.Pattern[str]] = {name: regex.compile(p) for name, p in PATTERNS.items()}


def check_scheme(scheme: Any) -> str:
    """The scheme name if known, else a TokenizerError naming the choices."""
    if isinstance(scheme, str) and scheme in SCHEMES:
        return scheme
    raise TokenizerError(
        f"pretokenize: expected one of {', '.join(SCHEMES)}, got {short_repr(scheme)}",
        field="pretokenize",
    )


def scheme_for_pattern(pattern: str) -> str | None:
    """Which of our schemes a regex (from a tokenizer file) is, or None."""
    for name, ours in PATTERNS.items():
        if pattern == ours:
            return name
    # tiktoken and minbpe publish possessive / reordered variants of the same
    # patterns; recognise them by their distinctive parts.
    compact = pattern.replace("++", "+").replace("?+", "?").replace("{1,3}+", "{1,3}")
    if r"[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]" in compact and r"\p{N}{1,3}" in compact:
        return "o200k"  # checked first: it also holds cl100k's distinctive parts
    if r"\p{N}{1,3}" in compact and r"[^\r\n\p{L}\p{N}]?" in compact:
        return "cl100k"
    if r" ?\p{L}+" in compact and r" ?\p{N}+" in compact:
        return "gpt2"
    return None


def split_text(text: str, scheme: str) -> list[str]:
    """The pre-tokens as strings (for scheme "none": the whole text, if not empty)."""
    check_scheme(scheme)
    if scheme == "none":
        return [text] if text else []
    from webapp.tokenizer.chunks import split_text as fast_split  # late: chunks imports this module

    return fast_split(text, scheme)  # the same pre-tokens as _COMPILED[scheme].findall(text), faster


def split_pretokens(text: str, scheme: str) -> list[tuple[int, int]]:
    """The pre-tokens as (start, end) UTF-8 byte offsets into `text`, end exclusive."""
    spans = []
    offset = 0
    for pretoken in split_text(text, scheme):
        size = _utf8_len(pretoken)
        spans.append((offset, offset + size))
        offset += size
    return spans


def _utf8_len(pretoken: str) -> int:
    try:
        return len(pretoken.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"text: character {exc.start + 1} of a pre-token is a lone surrogate, which UTF-8 cannot encode",
            field="text",
        ) from None


def pretokenized_encode(text: str, merges: Any, scheme: str, relabel: Mapping[int, int] | None = None) -> list[int]:
    """Ids of `text`: each pre-token encoded like `encode`, the ids concatenated.

    `relabel` maps ids to an imported file's own ids (ids it does not list stay).
    """
    check_scheme(scheme)
    if scheme == "none":
        ids = byte_level.encode(text, merges)
        return list(map(relabel.get, ids, ids)) if relabel else list(ids)
    from webapp.tokenizer.textencode import encode_split  # late: textencode imports this module

    # Chunks and pre-tokens are cached by their text (see textencode.py).
    return encode_split(byte_level.compile_byte_merges(merges), text, scheme, relabel)


def pretokenized_encode_trace(
    text: str,
    merges: Any,
    scheme: str,
    *,
    max_steps: int = 200,
    max_tokens: int = 3000,
    max_sequence: int = 2000,
    relabel: Mapping[int, int] | None = None,
) -> EncodeTrace:
    """One trace for the whole text, each pre-token encoded on its own.

    Encoding pre-tokens separately is the same as encoding the text with extra
    cut points at the pre-token boundaries, so the trace is the engine's own trace
    builder run over the union of its cut points and ours: steps are rules
    with their matches summed over all pre-tokens, sequences are the whole text's.
    `relabel` maps ids for display and output (an imported file's own ids);
    ids it does not list stay as they are. `EncodeTrace.pretokens` holds the
    pre-tokenization spans (empty for "none").
    """
    check_scheme(scheme)
    spans = split_pretokens(text, scheme) if scheme != "none" else []
    trace = byte_level.encode_trace(
        text,
        merges,
        max_steps=max_steps,
        max_tokens=max_tokens,
        max_sequence=max_sequence,
        cuts=[start for start, _ in spans],
        relabel=relabel,
    )
    return replace(trace, pretokens=spans)
