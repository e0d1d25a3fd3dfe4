"""Where two sides part on one text: the first stage whose output differs, and what differs there.

The stages are compared in the order a text goes through them: the special tokens split out, the
normalizer's text, the pre-tokenizer's pieces, the tokens the merges make of each piece, their ids,
then the post-processor's ids (docs/parity.md). Every check reads the two `View`s only.

What it does not do: run a tokenizer (sides.py), name the merge rule inside a piece (rules.py), HTTP.
"""

from __future__ import annotations

from typing import Any

from webapp.tokenizer.explain.stages import Piece, Special
from webapp.tokenizer.parity.rules import merged, rule_behind
from webapp.tokenizer.parity.sides import Side, View

#: The stages in the order a text passes them (the answer's `stage` is one of these, or None).
STAGES = ("special", "normalizer", "pre_tokenizer", "merges", "vocab", "post_processor")
#: Characters of context a normalizer snippet shows on each side of the first difference.
SNIPPET = 16


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def first_difference(a: Any, b: Any) -> int:
    """The first index where two sequences differ (their common length when one is a prefix of the other)."""
    for index, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return index
    return min(len(a), len(b))


def specials_of(view: View) -> list[str]:
    """The special and added tokens the text's stages split out, in order."""
    return [seg.text for seg in view.segments if isinstance(seg, Special)]


def normalized_text(view: View) -> str:
    return "".join(value for _added, value in view.normalized)


def pieces_of(view: View) -> list[bytes]:
    """Each segment as the bytes the model sees (a piece) or its text (a special token)."""
    starts = [seg.start for seg in view.segments] + [len(view.model_text)]
    return [view.model_text[start:end] for start, end in zip(starts, starts[1:])]


def _special(a: View, b: View) -> dict[str, Any] | None:
    left, right = specials_of(a), specials_of(b)
    if left == right:
        return None
    at = first_difference(left, right)
    return {"a": left, "b": right, "index": at,
            "sentence": f"the special tokens split out differ from the {_ordinal(at)} one on"}


def _normalizer(a: View, b: View) -> dict[str, Any] | None:
    left, right = normalized_text(a), normalized_text(b)
    if left == right:
        return None
    at = first_difference(left, right)
    start = max(0, at - SNIPPET)

    def char(text: str) -> str | None:
        return f"U+{ord(text[at]):04X}" if at < len(text) else None

    return {"offset": at, "a": left[start:at + SNIPPET], "b": right[start:at + SNIPPET], "snippet_start": start,
            "a_char": char(left), "b_char": char(right), "a_length": len(left), "b_length": len(right),
            "sentence": f"the normalized texts part at character {at:,}"}


def _pre_tokenizer(a: View, b: View) -> dict[str, Any] | None:
    left, right = pieces_of(a), pieces_of(b)
    if left == right:
        return None
    at = first_difference(left, right)

    def piece(pieces: list[bytes]) -> str | None:
        return _text(pieces[at]) if at < len(pieces) else None

    return {"index": at, "a_piece": piece(left), "b_piece": piece(right),
            "a": [_text(p) for p in left], "b": [_text(p) for p in right],
            "sentence": f"the pre-tokenizers cut the text differently from piece {at + 1:,} on"}


def _merges(a: View, b: View, sides: tuple[Side, Side]) -> dict[str, Any]:
    """The first piece whose tokens differ, and the rule behind it (same pieces on both sides)."""
    units = (_unit(sides[0]), _unit(sides[1]))
    pieces = pieces_of(a)
    for index, (left, right) in enumerate(zip(a.segments, b.segments)):
        if not (isinstance(left, Piece) and isinstance(right, Piece)):
            continue
        mine, theirs = merged(left, sides[0].model), merged(right, sides[1].model)
        if mine.tokens == theirs.tokens and mine.whole == theirs.whole:
            continue
        data = pieces[index]
        return {"piece_index": index, "piece": _text(data),
                "a_tokens": [_text(data[s:e]) for s, e in mine.tokens],
                "b_tokens": [_text(data[s:e]) for s, e in theirs.tokens],
                **rule_behind(data, mine, theirs, (sides[0].model, sides[1].model), units)}
    return {"kind": "unexplained", "sentence": "the tokens differ, but no piece's replayed merges do"}


def _unit(side: Side) -> str:
    return "rank" if side.order == "library" else "rule"


def _vocab(a: View, b: View) -> dict[str, Any]:
    at = first_difference(a.ids, b.ids)
    token = a.model_tokens[at] if at < len(a.ids) else b""
    return {"index": at, "token": _text(token), "a_id": a.ids[at] if at < len(a.ids) else None,
            "b_id": b.ids[at] if at < len(b.ids) else None,
            "sentence": f"the same token `{_text(token)}` has other ids"}


def _post(a: View, b: View) -> dict[str, Any]:
    def added(view: View) -> dict[str, Any]:
        before, after = view.post
        shown = [_text(t) for t in view.tokens]
        return {"before": list(before), "after": list(after), "before_text": shown[:len(before)],
                "after_text": shown[len(before) + len(view.ids):]}

    return {"a": added(a), "b": added(b),
            "sentence": "the same tokens; the post-processors add other ids around them"}


def attribute(a: View, b: View, sides: tuple[Side, Side]) -> tuple[str | None, dict[str, Any] | None]:
    """(stage, detail) of the first stage where `a` and `b` differ; (None, None) when the ids agree."""
    if a.final == b.final:
        return None, None
    for stage, check in (("special", _special), ("normalizer", _normalizer), ("pre_tokenizer", _pre_tokenizer)):
        detail = check(a, b)
        if detail is not None:
            return stage, detail
    if a.model_tokens != b.model_tokens:
        return "merges", _merges(a, b, sides)
    if a.ids != b.ids:
        return "vocab", _vocab(a, b)
    return "post_processor", _post(a, b)


def _ordinal(index: int) -> str:
    number = index + 1
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number:,}{suffix}"


__all__ = ["STAGES", "attribute", "first_difference", "normalized_text", "pieces_of", "specials_of"]
