"""The parity lab: where two tokenizers part on a list of texts, and at which stage (docs/parity.md).

`check_parity(a, b, texts)` runs both sides' own stages on each text, names the first stage
whose output differs with what differs there (a merge rule too) and counts the texts per
stage. Without texts, the built-in probes. Map: docs/architecture.md.

What it does not do: read requests or check limits (the web layer does, before this runs), HTTP.
"""

from __future__ import annotations

from typing import Any, Sequence

from webapp.tokenizer.compare import spans_from_lengths
from webapp.tokenizer.reading.text import charged, check_request_budget
from webapp.tokenizer.parity.attribute import STAGES, attribute, first_difference
from webapp.tokenizer.parity.probes import PROBE_TEXTS, PROBES
from webapp.tokenizer.parity.sides import Side, View, side_of_merges, side_of_tokenizer, view_of

Token = tuple[int, bytes]  # an id and its bytes


def differing(a: Sequence[Token], b: Sequence[Token]) -> tuple[list[bool], list[bool]]:
    """For each (id, bytes) token of `a` and of `b`: is it outside what both sides share?

    The common head and tail are unmarked; in between, when both sides spell the same bytes, a token is
    marked unless the other side has a token of the same id over the same bytes (the same span), else
    every token in between is. Linear in the tokens."""
    head = first_difference(a, b)
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    inner_a, inner_b = _inner_marks(a[head:len(a) - tail], b[head:len(b) - tail])
    return ([False] * head + inner_a + [False] * tail, [False] * head + inner_b + [False] * tail)


def _inner_marks(a: Sequence[Token], b: Sequence[Token]) -> tuple[list[bool], list[bool]]:
    if b"".join(t for _i, t in a) != b"".join(t for _i, t in b):
        return [True] * len(a), [True] * len(b)
    keyed_a = list(zip(spans_from_lengths(len(t) for _i, t in a), (i for i, _t in a)))
    keyed_b = list(zip(spans_from_lengths(len(t) for _i, t in b), (i for i, _t in b)))
    in_a, in_b = set(keyed_a), set(keyed_b)
    return [key not in in_b for key in keyed_a], [key not in in_a for key in keyed_b]


def _shown(token: bytes) -> str | None:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tokens(view: View, marks: list[bool]) -> list[dict[str, Any]]:
    """Each token as `/api/compare` gives it: its text (None when its bytes are not UTF-8 alone), its bytes."""
    return [{"id": i, "text": _shown(token), "bytes": list(token), "differs": mark}
            for i, token, mark in zip(view.final, view.tokens, marks)]


def compare_text(text: str, a: Side, b: Side) -> dict[str, Any]:
    """One text's entry: both sides' ids and tokens (the differing ones marked), the stage and its detail.

    Each side's stages are charged to the request's time budget (reading/text.py), checked after each."""
    views = []
    for side in (a, b):
        with charged():
            views.append(view_of(side, text))
        check_request_budget()
    left, right = views
    with charged():
        stage, detail = attribute(left, right, (a, b))
    marks = differing(list(zip(left.final, left.tokens)), list(zip(right.final, right.tokens)))
    return {"text": text, "same": stage is None,
            "a": {"ids": left.final, "tokens": _tokens(left, marks[0])},
            "b": {"ids": right.final, "tokens": _tokens(right, marks[1])},
            "stage": stage, "detail": detail}


def check_parity(a: Side, b: Side, texts: Sequence[str] | None = None) -> dict[str, Any]:
    """Every text through both sides: `{"texts": [...], "summary": {stage: count, "same": count}}`."""
    entries = [compare_text(text, a, b) for text in (PROBE_TEXTS if texts is None else texts)]
    summary = {"same": sum(1 for e in entries if e["same"]), **{stage: 0 for stage in STAGES}}
    for entry in entries:
        if entry["stage"] is not None:
            summary[entry["stage"]] += 1
    return {"a": a.label, "b": b.label, "probes": texts is None, "texts": entries, "summary": summary}


__all__ = ["PROBES", "PROBE_TEXTS", "STAGES", "Side", "check_parity", "compare_text", "differing",
           "side_of_merges", "side_of_tokenizer"]
