"""Comparing two tokenizations of one text: where their token boundaries agree.

What it does not do: encode anything, know about tokenizers, or render. Pure
Python, no Flask.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

Span = tuple[int, int]


def boundaries(spans: Iterable[Span], length: int) -> frozenset[int]:
    """The inner cuts of a tokenization: every token start or end strictly inside (0, length)."""
    cuts: set[int] = set()
    for start, end in spans:
        cuts.add(start)
        cuts.add(end)
    return frozenset(c for c in cuts if 0 < c < length)


def differing_tokens(spans: Sequence[Span], other_cuts: frozenset[int], length: int) -> list[bool]:
    """For each token: does its start or end fall where the other side has no boundary?"""

    def shared(offset: int) -> bool:
        return offset <= 0 or offset >= length or offset in other_cuts

    return [not (shared(start) and shared(end)) for start, end in spans]


@dataclass(frozen=True)
class SpanComparison:
    """The boundary comparison of tokenizations A and B of one text."""

    length: int
    shared: frozenset[int]  # cuts both made
    only_a: frozenset[int]  # cuts only A made
    only_b: frozenset[int]  # cuts only B made
    a_differs: tuple[bool, ...]  # per A token: has a boundary B lacks
    b_differs: tuple[bool, ...]

    @property
    def union(self) -> int:
        """How many distinct cuts the two sides made together."""
        return len(self.shared) + len(self.only_a) + len(self.only_b)

    @property
    def shared_ratio(self) -> float:
        """Shared cuts over all cuts (1.0 when neither side cut at all: they agree)."""
        return len(self.shared) / self.union if self.union else 1.0

    @property
    def identical(self) -> bool:
        return not self.only_a and not self.only_b

    @property
    def a_differing(self) -> int:
        return sum(self.a_differs)


def compare_spans(a: Sequence[Span], b: Sequence[Span], length: int) -> SpanComparison:
    """Compare two tokenizations (spans in the same unit) of a text `length` units long."""
    cuts_a = boundaries(a, length)
    cuts_b = boundaries(b, length)
    return SpanComparison(
        length=length,
        shared=cuts_a & cuts_b,
        only_a=cuts_a - cuts_b,
        only_b=cuts_b - cuts_a,
        a_differs=tuple(differing_tokens(a, cuts_b, length)),
        b_differs=tuple(differing_tokens(b, cuts_a, length)),
    )


def spans_from_lengths(lengths: Iterable[int]) -> list[Span]:
    """Contiguous spans of tokens with the given lengths, starting at 0."""
    out: list[Span] = []
    offset = 0
    for size in lengths:
        out.append((offset, offset + size))
        offset += size
    return out


__all__ = ["Span", "SpanComparison", "boundaries", "compare_spans", "differing_tokens", "spans_from_lengths"]
