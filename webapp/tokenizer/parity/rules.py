"""The merge rule behind two sides' different tokens for one piece, from each side's replay of its merges.

Both sides' merges of the piece are replayed (explain/replay.py records every merge in firing order) and
walked together; up to the first merge where they part, both hold the same symbols, so the rule each
fires there can be looked up on the other side: a rule one side lacks, or two rules ranked the other way.

What it does not do: decide which stage differs (attribute.py), encode a text, HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from webapp.tokenizer.explain.explain import Model
from webapp.tokenizer.explain.replay import Replay
from webapp.tokenizer.explain.stages import Piece

Step = tuple[int, int, int]  # a merge as byte offsets in its piece: left [a, b), right [b, c)


@dataclass(frozen=True)
class Merged:
    """One side's merges of one piece: initial offsets, the steps (offsets), their ranks, final tokens."""

    offsets: tuple[int, ...]  # where each initial symbol starts, and the piece's end
    steps: tuple[Step, ...]
    ranks: tuple[int, ...]  # each step's rank (library order) or rule index (list order)
    tokens: tuple[tuple[int, int], ...]  # the final tokens' byte spans in the piece
    whole: bool  # taken whole as one vocab token (ignore_merges)
    initial: tuple[int, ...]  # the initial symbols (replay ids)
    news: tuple[int, ...]  # the symbol each step made (replay ids)


def merged(piece: Piece, model: Model) -> Merged:
    """Replay `piece`'s merges with `model`: what fired, in order, in byte offsets of the piece."""
    offsets = [0]
    for size in piece.sizes:
        offsets.append(offsets[-1] + size)
    if piece.whole is not None:
        return Merged(tuple(offsets), (), (), ((0, offsets[-1]),), True, tuple(piece.symbols), ())
    replay: Replay = model.replay(piece.symbols)
    ends = [*replay.starts[1:], len(piece.symbols)]
    steps = tuple((offsets[a], offsets[b], offsets[c]) for _t, a, b, c, _n in replay.merges)
    ranks = tuple(model.fired_at(replay, t) for t, *_rest in replay.merges)
    tokens = tuple((offsets[s], offsets[e]) for s, e in zip(replay.starts, ends))
    return Merged(tuple(offsets), steps, ranks, tokens, False, tuple(piece.symbols),
                  tuple(n for *_rest, n in replay.merges))


def _symbols_before(side: Merged, count: int) -> dict[int, int]:
    """{start offset: symbol} after the first `count` merges of `side`."""
    held = dict(zip(side.offsets, side.initial))
    for (a, b, _c), new in zip(side.steps[:count], side.news[:count]):
        held[a] = new
        del held[b]
    return held


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def _rule(data: bytes, step: Step) -> dict[str, Any]:
    a, b, c = step
    return {"left": _text(data[a:b]), "right": _text(data[b:c]), "merged": _text(data[a:c]),
            "left_bytes": list(data[a:b]), "right_bytes": list(data[b:c])}


def _rank_on(model: Model, side: Merged, count: int, step: Step) -> int | None:
    """The rank (or rule index) `model` gives the pair `step` joins, in the symbols after `count` merges."""
    held = _symbols_before(side, count)
    a, b, _c = step
    if a not in held or b not in held:
        return None
    return model.pair_rule(held[a], held[b])


def rule_behind(data: bytes, a: Merged, b: Merged, models: tuple[Model, Model], unit: tuple[str, str]) -> dict[str, Any]:
    """Why sides a and b merge the piece `data` into other tokens: the first merge where they part.

    `unit`: what each side's rule numbers are ("rank" or "rule"). The answer's `kind`: "missing" (one
    side fires a rule the other lacks), "order" (both have both rules, ranked the other way round),
    "whole" (one side takes the piece whole, ignore_merges), "symbols" (they start from other symbols).
    """
    if a.whole != b.whole:
        whole = "a" if a.whole else "b"
        return {"kind": "whole", "side": whole,
                "sentence": f"side {whole} takes the piece whole, as one vocabulary token (ignore_merges); "
                            f"the other merges it with its rules"}
    if a.offsets != b.offsets:
        return {"kind": "symbols", "sentence": "the two models start the piece from different symbols "
                                               "(bytes on one side, characters or fallback bytes on the other)"}
    count = 0
    while count < len(a.steps) and count < len(b.steps) and a.steps[count] == b.steps[count]:
        count += 1
    fired = {"a": a.steps[count] if count < len(a.steps) else None,
             "b": b.steps[count] if count < len(b.steps) else None}
    sides = {"a": a, "b": b}
    named = {"a": models[0], "b": models[1]}
    for name, other in (("a", "b"), ("b", "a")):
        step = fired[name]
        if step is None:
            continue
        own = sides[name].ranks[count]
        theirs = _rank_on(named[other], sides[other], count, step)
        if theirs is None:
            rule = _rule(data, step)
            return {"kind": "missing", "has": name, "lacks": other, "rule": rule, "step": count,
                    name: {unit[0 if name == "a" else 1]: own}, other: None,
                    "sentence": f"side {name} merges `{rule['left']}` + `{rule['right']}` ({_named(unit, name, own)}); "
                                f"side {other} has no such rule"}
    return _order(data, count, fired, sides, named, unit)


def _named(unit: tuple[str, str], side: str, number: int) -> str:
    return f"{unit[0 if side == 'a' else 1]} {number:,}"


def _order(data: bytes, count: int, fired: dict[str, Step | None], sides: dict[str, Merged],
           models: dict[str, Model], unit: tuple[str, str]) -> dict[str, Any]:
    """Both sides have the rules the other fires next: name each side's choice and both numbers of each."""
    rules = []
    for name in ("a", "b"):
        step = fired[name]
        if step is None:
            continue
        rules.append({**_rule(data, step), "fired_by": name,
                      "a": _rank_on(models["a"], sides["a"], count, step),
                      "b": _rank_on(models["b"], sides["b"], count, step)})
    shown = "; ".join(f"`{r['left']}` + `{r['right']}` is {unit[0]} {r['a']} on a, {unit[1]} {r['b']} on b"
                      for r in rules)
    only = [r["fired_by"] for r in rules]
    stopped = "" if len(only) == 2 else f" (side {'b' if only == ['a'] else 'a'} merges no further: its rule " \
                                        "comes before the pair is made, in list order)"
    return {"kind": "order", "step": count, "rules": rules,
            "sentence": f"both sides have the rules, ranked the other way round: {shown}{stopped}"}


__all__ = ["Merged", "merged", "rule_behind"]
