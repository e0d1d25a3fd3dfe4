"""One boundary's story in the Bytes page's Trace view: the pairs that met across it and what took them.

What it does not do: replay merges, decide causes, or render (templates/partials/trace_story.html).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from flask import url_for

from webapp import tokenizer as tk
from webapp.infra.errors import ApiError
from webapp.opened import active as act
from webapp.web.explain.explaining import explain_active, read_story


@dataclass
class RuleLink:
    """A rule as the story shows it: its words, and where it lives (a Trace row, a Vocabulary card)."""

    text: str  # "`lo` + `w` → `low` (rank 2,334)"
    row: str | None = None  # id of its Trace row
    card: str | None = None  # URL of the Vocabulary card of the token it makes


@dataclass
class StoryStep:
    """One pair that met across the boundary, from the merge that made it to the merge that ended it."""

    number: int
    left: str
    right: str
    own: RuleLink | None  # the pair's own rule (None: no rule joins these two)
    began: RuleLink | None  # None: both were there from the start
    made: str | None  # which side `began` made
    ended: RuleLink | None  # None: still neighbours at the end
    took: str | None  # which side `ended` took
    taken: str | None = None  # the token it took
    anchor: str = ""
    candidate: bool = False  # the pair whose rule the explanation names (would_join)


@dataclass
class StoryView:
    """What the Trace shows for one boundary."""

    index: int
    error: str | None = None
    left: str = ""
    right: str = ""
    at: int = 0
    unit: str = "bytes"
    cause: str = ""
    sentence: str = ""
    would_join: RuleLink | None = None
    taken_by: RuleLink | None = None
    made_by: RuleLink | None = None
    steps: list[StoryStep] = field(default_factory=list)
    unlinked: int = 0  # merges of the story past the Trace's shown passes


def rule_label(rule: Mapping[str, Any]) -> str:
    """"`a` + `b` → `ab` (rule 5)" (list order, counted from 1) or "(rank 4, rule 5)" (library order)."""
    # a library-order Trace numbers its rows' rules by the file's line (rank + 1): both are said
    which = f"rank {rule['rank']:,}, rule {rule['rank'] + 1:,}" if "rank" in rule else f"rule {rule['index'] + 1:,}"
    left, right, new = rule["text"]
    return f"`{left}` + `{right}` → `{new}` ({which})"


def _row_finder(answer: Mapping[str, Any], rows: Sequence[Any]) -> Callable[[int | None, Mapping[str, Any]], int | None]:
    """time, rule -> the index of the Trace row where that merge fired (None: not shown)."""
    if answer["order"] == "list":
        by_rule = {row.rule_index: n for n, row in enumerate(rows) if row.rule_index is not None}

        def listed(time: int | None, rule: Mapping[str, Any]) -> int | None:
            return by_rule.get(time) if time is not None and time == rule.get("index") else None
        return listed
    piece = answer.get("story_piece") or {}
    mine = [n for n, row in enumerate(rows) if row.rule_index is not None and row.piece_at == piece.get("start")]

    def fired(time: int | None, rule: Mapping[str, Any]) -> int | None:
        if time is None or not 0 <= time < len(mine):
            return None
        n = mine[time]
        return n if rows[n].rule_index == rule.get("rank") else None  # only the row of the very merge
    return fired


def build_story(answer: Mapping[str, Any], index: int, rows: Sequence[Any], card: Callable[[int], str] | None) -> StoryView:
    """The view of boundary `index`'s story from an explain answer asked with `story=index`; marks `rows`."""
    b = answer["boundaries"][index]
    tokens = answer["tokens"]

    def shown(token: Mapping[str, Any]) -> str:
        return token["text"] if token["text"] is not None else "".join(f"<{x:02X}>" for x in token["bytes"])

    view = StoryView(index, left=shown(tokens[b["left"]]), right=shown(tokens[b["right"]]), at=b["at"],
                     unit=answer["unit"], cause=b["cause"], sentence=b["sentence"])
    for n, row in enumerate(rows):
        row.anchor = f"trace-row-{n}"
    row_of = _row_finder(answer, rows)

    def link(rule: Mapping[str, Any] | None, time: int | None) -> RuleLink | None:
        if rule is None:
            return None
        n = row_of(time, rule)
        return RuleLink(rule_label(rule), rows[n].anchor if n is not None else None,
                        card(rule["new"]) if card is not None else None)

    candidate = b.get("would_join")
    for k, m in enumerate(answer.get("story") or []):
        left, right = m["text"]
        began, ended = link(m.get("made_by"), m["from"]), link(m.get("taken_by"), m["until"])
        taken = (left if m["took"] == "left" else right) if m["took"] else None
        step = StoryStep(k + 1, left, right, link(m.get("rule"), None), began, m["made"], ended, m["took"], taken,
                         anchor=f"story-meeting-{k + 1}")
        step.candidate = bool(m.get("candidate"))
        view.steps.append(step)
        for what, ref in (("made", began), ("took", ended)):
            if ref is None:
                continue
            if ref.row is None:
                view.unlinked += 1
                continue
            row = rows[int(ref.row.rsplit("-", 1)[1])]
            row.story_notes.append(f"boundary {index}: took `{taken}`" if what == "took"
                                   else f"boundary {index}: made `{left if m['made'] == 'left' else right}`, "
                                        f"so `{left}` + `{right}` met")
    first = next((s for s in view.steps if s.candidate), None)
    if candidate is not None:
        view.would_join = RuleLink(rule_label(candidate), first.anchor if first else None,
                                   card(candidate["new"]) if card is not None else None)
    for key in ("taken_by", "made_by"):
        rule = b.get(key)
        if rule is not None:
            # the merge that ended (taken_by) or began (made_by) the candidate's meeting
            where = (first.ended if key == "taken_by" else first.began) if first else None
            setattr(view, key, RuleLink(rule_label(rule), where.row if where else None,
                                        card(rule["new"]) if card is not None else None))
    return view


def page_story(state: Mapping[str, str], active: act.ActiveTokenizer, text: str, scheme: str,
               rows: Sequence[Any]) -> StoryView | None:
    """The story the page state asks for (`story`, a boundary index from 0), or None when it asks for none."""
    raw = state.get("story", "")
    if not raw:
        return None
    try:
        index = read_story(raw)
        if index is None:
            return None
    except ApiError as exc:
        return StoryView(0, error=exc.message)
    try:
        answer = explain_active(active, text, scheme, index)
    except (ApiError, tk.TokenizerError) as exc:
        return StoryView(index, error=exc.message)
    ref = state.get("tokenizer", "")

    def card(token_id: int) -> str:
        return url_for("vocab.vocab_page", tokenizer=ref, token=token_id) + "#card"
    return build_story(answer, index, rows, card if ref else None)


__all__ = ["RuleLink", "StoryStep", "StoryView", "build_story", "page_story", "rule_label"]
