"""Byte-level encode with a record of how it happened: `encode_trace`, over byte_level.py's compiled lists.

The record (an `EncodeTrace`, bounded by `TraceLimits`) is built by tracing.py
from the rule table's merge events, segment by segment.

What it does not do: pre-tokenization (pretokenize/), the plain encode (byte_level.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges
from webapp.tokenizer.core.list_order.tracing import build_trace, run_segments
from webapp.tokenizer.traces import DEFAULT_TRACE_LIMITS, EncodeTrace, TraceLimits
from webapp.tokenizer.validation import validate_text


def encode_trace(
    text: str,
    merges: Any,
    *,
    limits: TraceLimits = DEFAULT_TRACE_LIMITS,
    cuts: Sequence[int] = (),
    relabel: Mapping[int, int] | None = None,
) -> EncodeTrace:
    """`encode` plus a bounded record of how it happened (see tracing.py)."""
    text = validate_text(text)
    compiled = compile_byte_merges(merges)
    data = text.encode("utf-8")
    bounds = compiled.bounds(data)
    if cuts:
        bounds = sorted(set(bounds).union(cuts))
    show: Callable[[int], int] = int
    keys, events, ids = run_segments(data, bounds, compiled.table.run)
    if relabel:
        mapping = dict(relabel)
        show = lambda i: mapping.get(i, i)  # noqa: E731
        ids = [mapping.get(i, i) for i in ids]
    return build_trace(
        initial=data,
        bounds=bounds,
        keys=keys,
        events=events,
        rules=compiled.rules,
        ids=ids,
        show=show,
        value=lambda start, end: data[start:end],
        limits=limits,
    )
