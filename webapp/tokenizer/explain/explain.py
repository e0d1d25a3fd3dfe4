"""Every boundary of a text's tokens explained: the answer of the explain routes (docs/explain.md).

What it does not do: read requests or check limits (the web layer), encode for
the pages, or trace.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from webapp.tokenizer.core.list_order.engine import RuleTable
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.explain.causes import PieceCause, Rule, library_cause, list_cause
from webapp.tokenizer.explain.replay import LEFT, Meeting, Replay, replay_library, replay_list
from webapp.tokenizer.explain.stages import Piece, Special, Stages

#: Pairs a no_rule sentence names at most.
SENTENCE_PAIRS = 3


@dataclass
class Model:
    """How one tokenizer's pieces merge, and how its ids and rules are shown."""

    order: str  # "list" or "library"
    replay: Callable[[list[int]], Replay]
    decide: Callable[[Sequence[Meeting], Replay], PieceCause]
    out_id: Callable[[int], int]  # replay id -> the id the encode answers
    fallback: frozenset[int] = frozenset()  # byte-fallback token ids (replay ids)
    # For the story: the rule of a pair (earliest index / lowest rank, or None), a rule by index or
    # rank, and the rule that fired at a replay time (list order: the time is the index).
    pair_rule: Callable[[int, int], int | None] = lambda _a, _b: None
    rule_at: Callable[[int], Rule] = lambda i: (i, -1, -1, -1)
    fired_at: Callable[[Replay, int], int] = lambda _replay, time: time


def list_model(table: RuleTable, rule_of: Callable[[int], Sequence[int]], out_id: Callable[[int], int]) -> Model:
    """List order over a rule table; `rule_of(index)` the rule (left, right, new) in the table's ids."""
    first, later, shift, top = table.first, table.later, table.shift, table.top

    def indices(a: int, b: int) -> Sequence[int]:
        if a > top or b > top:
            return ()
        key = a * shift + b
        found = first.get(key)
        if found is None:
            return ()
        return later.get(key) or (found,)

    def rule_at(index: int) -> Rule:
        left, right, new = rule_of(index)
        return (index, left, right, new)

    def pair_rule(a: int, b: int) -> int | None:
        found = indices(a, b)
        return found[0] if found else None

    return Model("list", lambda symbols: replay_list(symbols, table),
                 lambda meetings, _replay: list_cause(meetings, indices, rule_at), out_id,
                 pair_rule=pair_rule, rule_at=rule_at)


def library_model_of(merges: Any, rule_of: Callable[[int], Sequence[int]], fallback: frozenset[int]) -> Model:
    """Library order over `LibraryMerges`; `rule_of(rank)` the rule in the file's ids."""
    get, shift = merges.ranks.get, merges.shift

    def rank_of(a: int, b: int) -> int | None:
        if a >= shift or b >= shift:
            return None
        found: int | None = get(a * shift + b)
        return found

    def rule_at(rank: int) -> Rule:
        left, right, new = rule_of(rank)
        return (rank, left, right, new)

    return Model("library", lambda symbols: replay_library(symbols, merges),
                 lambda meetings, replay: library_cause(meetings, rank_of, rule_at, replay.fired),
                 lambda i: i, fallback, pair_rule=rank_of, rule_at=rule_at,
                 fired_at=lambda replay, time: replay.fired[time])


def _number(value: int) -> str:
    return f"{value:,}"


class _Builder:
    """The answer for one text, built segment by segment."""

    def __init__(self, stages: Stages, model: Model, unit: str, story: int | None) -> None:
        self.stages, self.model, self.unit, self.story_at = stages, model, unit, story
        self.data: Any = stages.text.encode("utf-8", "surrogatepass") if unit == "bytes" else stages.text
        self.tokens: list[dict[str, Any]] = []
        self.boundaries: list[dict[str, Any]] = []
        self.story: list[dict[str, Any]] | None = None
        self.story_piece: dict[str, int] | None = None
        self._memo: dict[tuple[int, ...], tuple[Replay, dict[int, PieceCause]]] = {}
        self._last: Piece | Special | None = None

    # --- text of spans and rules

    def shown(self, start: int, end: int) -> str:
        part = self.data[start:end]
        return part.decode("utf-8", "backslashreplace") if isinstance(part, bytes) else part

    def label(self, index: int) -> str:
        return f"rank {_number(index)}" if self.model.order == "library" else f"rule {_number(index + 1)}"

    def rule(self, rule: Rule, texts: tuple[str, str]) -> dict[str, Any]:
        index, left, right, new = rule
        out_id = self.model.out_id
        key = "rank" if self.model.order == "library" else "index"
        return {key: index, "left": out_id(left), "right": out_id(right), "new": out_id(new),
                "text": [texts[0], texts[1], texts[0] + texts[1]]}

    # --- segments

    def add_token(self, token_id: int, start: int, end: int, special: bool = False) -> None:
        value = self.data[start:end]
        item: dict[str, Any] = {"id": token_id, "start": start, "end": end}
        if isinstance(value, bytes):
            try:
                item["text"] = value.decode("utf-8")
            except UnicodeDecodeError:
                item["text"] = None
            item["bytes"] = list(value)
        else:
            item["text"] = value
        if special:
            item["special"] = True
        self.tokens.append(item)

    def boundary(self, cause: str, **extra: Any) -> dict[str, Any]:
        right = len(self.tokens) - 1
        entry = {"left": right - 1, "right": right, "at": self.tokens[right]["start"], "cause": cause, **extra}
        self.boundaries.append(entry)
        return entry

    def add_special(self, seg: Special) -> None:
        self.add_token(seg.id, seg.start, seg.end, special=True)
        if len(self.tokens) > 1:
            self._special_boundary(seg, "right")
        self._last = seg

    def _special_boundary(self, seg: Special, side: str) -> None:
        sentence = (f"`{seg.text}` is a special token: special tokens are split out before anything else, "
                    "so nothing merges across them.")
        self.boundary("special", detail={"side": side, "token": seg.text}, sentence=sentence)

    def add_piece(self, seg: Piece) -> None:
        if not seg.symbols:
            return
        offsets = [seg.start]
        for size in seg.sizes:
            offsets.append(offsets[-1] + size)
        if seg.whole is not None:
            self._first_token(seg, seg.whole, seg.start, offsets[-1])
            self._last = seg
            return
        key = tuple(seg.symbols)
        found = self._memo.get(key)
        if found is None:
            replay = self.model.replay(seg.symbols)
            decided = {start: self.model.decide(replay.meetings[start], replay) for start in replay.starts[1:]}
            found = self._memo[key] = (replay, decided)
        replay, decided = found
        ends = [*replay.starts[1:], len(seg.symbols)]
        out_id = self.model.out_id
        for number, (symbol, start, end) in enumerate(zip(replay.symbols, replay.starts, ends)):
            if number == 0:
                self._first_token(seg, out_id(symbol), offsets[start], offsets[end])
                continue
            self.add_token(out_id(symbol), offsets[start], offsets[end])
            self._inner(seg, replay, start, decided[start], offsets)
        self._last = seg

    def _first_token(self, seg: Piece, token_id: int, start: int, end: int) -> None:
        self.add_token(token_id, start, end)
        last = self._last
        if last is None or len(self.tokens) < 2:
            return
        if isinstance(last, Special):
            self._special_boundary(last, "left")
            return
        alt = {"left": last.alternative, "right": seg.alternative}
        detail = {"left_piece": last.text, "right_piece": seg.text, "pattern": alt, "split": self.stages.split}
        named = (f" (`{last.text}` matched `{alt['left']}`, `{seg.text}` matched `{alt['right']}`)"
                 if alt["left"] is not None and alt["right"] is not None else "")
        sentence = (f"The pre-tokenizer ({self.stages.split}) cut the text here{named}; "
                    "merges never cross pre-tokens.")
        self.boundary("pre_tokenizer", detail=detail, sentence=sentence)

    def _inner(self, seg: Piece, replay: Replay, p: int, cause: PieceCause, offsets: list[int]) -> None:
        meetings = replay.meetings[p]

        def span(a: int, b: int) -> str:
            return self.shown(offsets[a], offsets[b])

        def met(m: Meeting) -> tuple[str, str]:
            return span(m.lstart, p), span(p, m.rend)

        if self.story_at == len(self.boundaries):
            self.story = [self._told(replay, meetings, k, met(m), span) for k, m in enumerate(meetings)]
            self.story_piece = {"start": offsets[0], "end": offsets[-1]}
            if cause.would_join is not None:
                self.story[cause.meeting]["candidate"] = True  # the meeting whose pair would_join names
        if cause.cause == "no_rule":
            final = meetings[-1]
            fallback = self.model.fallback
            if fallback and (final.left in fallback or final.right in fallback):
                self.boundary("byte_fallback", sentence=(
                    "A character outside the vocab became byte tokens here, and no rule joins any pair "
                    "that met at this offset."))
                return
            pairs = list(dict.fromkeys("`{}`+`{}`".format(*met(m)) for m in meetings))
            listed = ", ".join(pairs[:SENTENCE_PAIRS]) + (", ..." if len(pairs) > SENTENCE_PAIRS else "")
            self.boundary("no_rule", sentence=f"No rule joins any pair of tokens that met here ({listed}).")
            return
        assert cause.would_join is not None
        m = meetings[cause.meeting]
        would = self.rule(cause.would_join, met(m))
        w_text = "`{}`+`{}` → `{}`".format(*would["text"])
        if cause.cause == "made_later":
            assert cause.made_by is not None and cause.meeting > 0
            previous = meetings[cause.meeting - 1].taker
            assert previous is not None
            made = self.rule(cause.made_by, (span(previous[0], previous[1]), span(previous[1], previous[2])))
            made["side"] = cause.made
            side_text = would["text"][0 if cause.made == LEFT else 1]
            self.boundary("made_later", would_join=would, made_by=made, sentence=(
                f"{w_text} ({self.label(cause.would_join[0])}) would have joined them, but it was visited before "
                f"`{side_text}` existed: `{made['text'][0]}`+`{made['text'][1]}` → `{made['text'][2]}` "
                f"({self.label(cause.made_by[0])}) made it later."))
            return
        assert cause.taken_by is not None and m.taker is not None
        a, b, c = m.taker
        taken = self.rule(cause.taken_by, (span(a, b), span(b, c)))
        taken["took"] = cause.took
        taken["token"] = self.model.out_id(cause.took_token) if cause.took_token is not None else None
        taken["step"] = cause.step
        took_text = would["text"][0 if cause.took == LEFT else 1]
        if cause.cause == "overlap":
            sentence = (f"{w_text} ({self.label(cause.would_join[0])}) would have joined them, but the same rule "
                        f"joined the overlapping pair to the left first, taking `{took_text}`.")
        else:
            sentence = (f"{w_text} ({self.label(cause.would_join[0])}) would have joined them, but "
                        f"`{taken['text'][0]}`+`{taken['text'][1]}` → `{taken['text'][2]}` "
                        f"({self.label(cause.taken_by[0])}) took `{took_text}` first.")
        self.boundary(cause.cause, would_join=would, taken_by=taken, sentence=sentence)

    def _told(self, replay: Replay, meetings: Sequence[Meeting], k: int, texts: tuple[str, str],
              span: Callable[[int, int], str]) -> dict[str, Any]:
        """Meeting k of the story: its pair, the pair's own rule, the merge that began it and the one that ended it."""
        m = meetings[k]
        model = self.model
        out: dict[str, Any] = {"text": list(texts), "left": model.out_id(m.left),
                               "right": model.out_id(m.right), "from": m.start, "made": m.made,
                               "until": m.end, "took": m.took}
        own = model.pair_rule(m.left, m.right)
        out["rule"] = self.rule(model.rule_at(own), texts) if own is not None else None
        if m.start >= 0:
            before = meetings[k - 1].taker  # the merge that ended the meeting before made one side of this one
            assert before is not None
            out["made_by"] = self.rule(model.rule_at(model.fired_at(replay, m.start)),
                                       (span(before[0], before[1]), span(before[1], before[2])))
        if m.taker is not None and m.end is not None:
            a, b, c = m.taker
            out["taken_text"] = [span(a, b), span(b, c)]
            out["taken_by"] = self.rule(model.rule_at(model.fired_at(replay, m.end)), (span(a, b), span(b, c)))
        return out

    def answer(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ids": [t["id"] for t in self.tokens], "tokens": self.tokens,
                               "boundaries": self.boundaries, "unit": self.unit, "order": self.model.order}
        if self.story_at is not None:
            out["story"] = self.story
            out["story_piece"] = self.story_piece
        return out


def explain_stages(stages: Stages, model: Model, unit: str, ids: Sequence[int] | None,
                   story: int | None = None) -> dict[str, Any]:
    """The explanation of `stages` merged by `model`; `ids` (the normal encode's) must agree."""
    builder = _Builder(stages, model, unit, story)
    for seg in stages.segments:
        if isinstance(seg, Special):
            builder.add_special(seg)
        else:
            builder.add_piece(seg)
    answer = builder.answer()
    if ids is not None and answer["ids"] != list(ids):
        raise TokenizerError(
            "explain: this tokenizer's encoding has a step the explanation does not replay "
            "(its ids would differ from the encode's), so it is not explained", field="tokenizer")
    return answer


def relabel(mapping: Mapping[int, int]) -> Callable[[int], int]:
    get = mapping.get
    return lambda i: get(i, i)


__all__ = ["Model", "explain_stages", "library_model_of", "list_model", "relabel"]
