"""The parity lab: where two tokenizers part on a list of texts, and at which stage (docs/parity.md).

`check_parity(a, b, texts)` runs both sides' own stages on each text (sides.py), names the first stage
whose output differs with what differs there (attribute.py; a merge rule by rules.py) and counts the
texts per stage. Without texts, the built-in probes (probes.py).

What it does not do: read requests or check limits (the web layer does, before this runs), HTTP.
"""

from __future__ import annotations

from difflib import SequenceMatcher
from typing import Any, Sequence

from webapp.tokenizer.hf.text import charged, check_request_budget
from webapp.tokenizer.parity.attribute import STAGES, attribute
from webapp.tokenizer.parity.probes import PROBE_TEXTS, PROBES
from webapp.tokenizer.parity.sides import Side, View, side_of_merges, side_of_tokenizer, view_of


def differing(a: Sequence[Any], b: Sequence[Any]) -> tuple[list[bool], list[bool]]:
    """For each item of `a` and of `b`: is it outside the longest matching blocks of the two sequences?"""
    out_a, out_b = [True] * len(a), [True] * len(b)
    for block in SequenceMatcher(None, a, b, autojunk=False).get_matching_blocks():
        out_a[block.a:block.a + block.size] = [False] * block.size
        out_b[block.b:block.b + block.size] = [False] * block.size
    return out_a, out_b


def _tokens(view: View, marks: list[bool]) -> list[dict[str, Any]]:
    return [{"id": i, "text": token.decode("utf-8", "backslashreplace"), "differs": mark}
            for i, token, mark in zip(view.final, view.tokens, marks)]


def compare_text(text: str, a: Side, b: Side) -> dict[str, Any]:
    """One text's entry: both sides' ids and tokens (the differing ones marked), the stage and its detail.

    Each side's stages are charged to the request's time budget (hf/text.py), checked after each."""
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
