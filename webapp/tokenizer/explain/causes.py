"""Why a boundary inside one piece is there, decided from the piece's replay (replay.py).

What it does not do: replay (replay.py), stages, offsets, text.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from webapp.tokenizer.explain.replay import LEFT, Meeting, Replay

#: A rule as the explanation names it: (list index or rank, left, right, new), in the replay's ids.
Rule = tuple[int, int, int, int]


@dataclass(frozen=True)
class PieceCause:
    """The cause of one boundary inside a piece (replay ids; the caller relabels them)."""

    cause: str  # "no_rule", "blocked", "overlap", "made_later"
    would_join: Rule | None = None
    taken_by: Rule | None = None  # blocked, overlap: the merge that took a side first
    took: str | None = None  # which side it took ("left" / "right")
    took_token: int | None = None
    step: int | None = None  # when it fired: its rule index (list order) or step number (library order)
    made_by: Rule | None = None  # made_later: the later rule that made a side
    made: str | None = None  # which side it made
    meeting: int = -1  # which meeting the candidate is (index into the offset's meetings)


def _taker(meeting: Meeting, rule_at: Callable[[int], Rule]) -> tuple[Rule, int | None]:
    assert meeting.end is not None
    token = meeting.left if meeting.took == LEFT else meeting.right
    return rule_at(meeting.end), token


def list_cause(meetings: Sequence[Meeting], indices: Callable[[int, int], Sequence[int]],
               rule_at: Callable[[int], Rule]) -> PieceCause:
    """List order: `indices(left, right)` all rule indices of a pair (ascending); `rule_at(index)` the rule."""
    best: tuple[int, int] | None = None  # (rule index, meeting)
    for number, meeting in enumerate(meetings):
        if meeting.end is not None and meeting.end == meeting.start:
            continue  # made and taken within one visit: never neighbours between two visits
        found = indices(meeting.left, meeting.right)
        if found and (best is None or found[0] < best[0]):
            best = (found[0], number)
    if best is None:
        return PieceCause("no_rule")
    index, number = best
    meeting = meetings[number]
    rule = rule_at(index)
    if index <= meeting.start:
        return PieceCause("made_later", would_join=rule, made_by=rule_at(meeting.start), made=meeting.made,
                          step=meeting.start, meeting=number)
    assert meeting.end is not None and meeting.end <= index, "a pair present at its rule's visit always merges"
    taker, token = _taker(meeting, rule_at)
    cause = "overlap" if meeting.end == index else "blocked"
    if cause == "overlap":
        assert meeting.took == LEFT, "within one visit the overlapping pair to the left matches first"
    return PieceCause(cause, would_join=rule, taken_by=taker, took=meeting.took, took_token=token, step=meeting.end,
                      meeting=number)


def library_cause(meetings: Sequence[Meeting], rank_of: Callable[[int, int], int | None],
                  rule_at: Callable[[int], Rule], fired: Sequence[int]) -> PieceCause:
    """Library order: `rank_of(left, right)` the pair's rank or None; `fired[step]` the rank that fired."""
    best: tuple[int, int] | None = None  # (rank, meeting)
    for number, meeting in enumerate(meetings):
        rank = rank_of(meeting.left, meeting.right)
        if rank is not None and (best is None or rank < best[0]):
            best = (rank, number)
    if best is None:
        return PieceCause("no_rule")
    rank, number = best
    meeting = meetings[number]
    assert meeting.end is not None, "the lowest-ranked pair present always merges"
    taken = fired[meeting.end]
    assert taken <= rank, "the rule that fired first has the lower rank"
    token = meeting.left if meeting.took == LEFT else meeting.right
    cause = "overlap" if taken == rank else "blocked"
    if cause == "overlap":
        assert meeting.took == LEFT, "among equal ranks the leftmost pair fires"
    return PieceCause(cause, would_join=rule_at(rank), taken_by=rule_at(taken), took=meeting.took,
                      took_token=token, step=meeting.end, meeting=number)


def piece_causes(replay: Replay, decide: Callable[[Sequence[Meeting]], PieceCause]) -> dict[int, PieceCause]:
    """The cause at every boundary of the piece, by the index of the initial symbol it stands before."""
    return {start: decide(replay.meetings[start]) for start in replay.starts[1:]}


__all__ = ["PieceCause", "Rule", "library_cause", "list_cause", "piece_causes"]
