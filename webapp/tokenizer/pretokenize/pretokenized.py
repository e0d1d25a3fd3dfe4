"""Optional pre-tokenization: split text with a regular expression, encode each pre-token.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping

from webapp.tokenizer.core.list_order import byte_level, byte_trace
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.pretokenize.chunks import split_text as fast_split
from webapp.tokenizer.pretokenize.patterns import check_scheme
from webapp.tokenizer.pretokenize.textencode import encode_split
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, EncodeTrace, TraceLimits


def split_text(text: str, scheme: str) -> list[str]:
    """The pre-tokens as strings (for scheme "none": the whole text, if not empty)."""
    check_scheme(scheme)
    if scheme == "none":
        return [text] if text else []
    return fast_split(text, scheme)  # the same pre-tokens as the pattern's findall(text), faster


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
    # Chunks and pre-tokens are cached by their text (see textencode.py).
    return encode_split(byte_level.compile_byte_merges(merges), text, scheme, relabel)


def pretokenized_encode_trace(
    text: str,
    merges: Any,
    scheme: str,
    *,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    relabel: Mapping[int, int] | None = None,
) -> EncodeTrace:
    """One trace for the whole text, each pre-token encoded on its own."""
    check_scheme(scheme)
    spans = split_pretokens(text, scheme) if scheme != "none" else []
    trace = byte_trace.encode_trace(
        text,
        merges,
        limits=limits,
        cuts=[start for start, _ in spans],
        relabel=relabel,
    )
    return replace(trace, pretokens=spans)
