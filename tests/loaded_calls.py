"""The call shapes many tests were written with, each one line over the tokenizer's stages (stages/).

Before the stages existed, encoding a loaded tokenizer went through free
functions (`encode_loaded`, `encode_trace_special`, ...) that each chose a
path from the tokenizer's flags. The tests keep those shapes, so their
assertions stay exactly as they were; each call here goes through
`tokenizer_of(tok, scheme, compiled)`, the one object every holder of a
tokenizer uses. What it does not do: any encoding of its own.
"""

from __future__ import annotations

from typing import Any, Sequence

from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages import tokenizer_of
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, EncodeTrace, TraceLimits


def encode_loaded(tok: LoadedTokenizer, text: str, scheme: str | None = None, *, compiled: Any = None,
                  allowed_special: frozenset[str] | None = None) -> list[int]:
    """The file's ids (`allowed_special` None: a tokenizer.json's added tokens all split out, none otherwise)."""
    return tokenizer_of(tok, scheme, compiled).encode(text, allowed_special)


def encode_special(tok: LoadedTokenizer, text: str, allowed: frozenset[str], *, compiled: Any = None,
                   scheme: str | None = None) -> list[int]:
    return tokenizer_of(tok, scheme, compiled).encode(text, allowed)


def encode_trace_special(tok: LoadedTokenizer, text: str, allowed: frozenset[str], *, compiled: Any = None,
                         scheme: str | None = None,
                         limits: TraceLimits = DEFAULT_TRACE_LIMITS) -> tuple[EncodeTrace, list[int]]:
    return tokenizer_of(tok, scheme, compiled).trace(text, allowed, limits)


def encode_loaded_trace(tok: LoadedTokenizer, text: str, scheme: str | None = None, *, compiled: Any = None,
                        limits: TraceLimits = DEFAULT_TRACE_LIMITS,
                        allowed_special: frozenset[str] | None = None) -> EncodeTrace:
    return tokenizer_of(tok, scheme, compiled).trace(text, allowed_special, limits)[0]


def char_pipeline_trace(tok: LoadedTokenizer, text: str, *, allowed_special: frozenset[str] | None = None,
                        limits: TraceLimits = DEFAULT_TRACE_LIMITS) -> EncodeTrace:
    return tokenizer_of(tok).trace(text, allowed_special, limits, "chars")[0]


def decode_loaded(tok: LoadedTokenizer, ids: Sequence[int], *, skip_special: bool = True) -> str:
    return tokenizer_of(tok).decode(ids, skip_special=skip_special)


def uses_pipeline(tok: LoadedTokenizer, scheme: str | None = None) -> bool:
    """Is `tok` split by its own tokenizer.json pipeline (rather than a playground scheme)?"""
    return tokenizer_of(tok, scheme).pipeline is not None and (scheme is None or scheme == tok.pretokenize)
