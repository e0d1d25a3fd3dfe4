"""Build a bounded `EncodeTrace` from the engine's per-segment merge events.

What it does not do: encode anything itself, or look tokens up in a vocab.
Rule indices in traces (`TraceStep.rule`, `MergeNode.rule`) count from 0, like
positions in the merge list the caller passed.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

from webapp.tokenizer.core.list_order.engine import Event
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Symbol, Token, TraceLimits, TraceStep


def run_segments(
    seq: Sequence[Any], bounds: Sequence[int], run: Callable[[Any, list[Event]], list[int]],
    symbols: Callable[[Any], Any] = lambda segment: segment,
) -> tuple[list[Hashable], dict[Hashable, list[Event]], list[int]]:
    """Encode `seq` segment by segment (each distinct segment once), recording merge events.

    Returns the segment keys in text order, each distinct segment's events, and
    the output symbols of the whole text; `symbols` turns a segment into what
    `run` takes (the segment itself for bytes, code points for characters).
    """
    keys: list[Hashable] = []
    events: dict[Hashable, list[Event]] = {}
    segment_out: dict[Hashable, list[int]] = {}
    out: list[int] = []
    for start, end in zip(bounds, bounds[1:]):
        segment = seq[start:end]
        keys.append(segment)
        if segment not in events:
            events[segment] = []
            segment_out[segment] = run(symbols(segment), events[segment])
        out.extend(segment_out[segment])
    return keys, events, out


def _steps(occurrences: Counter, events: dict[Hashable, list[Event]]) -> tuple[list[int], Counter]:
    """Rules that fired (sorted) and how many matches each had over the whole text."""
    counts: Counter = Counter()
    for key, times in occurrences.items():
        for rule, _left, _right in events[key]:
            counts[rule] += times
    return sorted(counts), counts


def _sequences(
    initial: Sequence[int],
    bounds: Sequence[int],
    keys: Sequence[Hashable],
    events: dict[Hashable, list[Event]],
    news: Mapping[int, int],
    recorded: Sequence[int],
    counts: Counter,
    show: Callable[[int], Symbol],
    max_sequence: int,
) -> list[tuple[Symbol, ...] | None]:
    """The whole sequence after each recorded rule, or None while it is too long."""
    out: list[tuple[Symbol, ...] | None] = []
    length = len(initial)
    first_short = None
    for j, rule in enumerate(recorded):
        length -= counts[rule]
        if length <= max_sequence and first_short is None:
            first_short = j
    if first_short is None:
        return [None] * len(recorded)
    out = [None] * first_short
    cut = recorded[first_short]
    later = set(recorded[first_short + 1 :])
    vals = list(initial)
    dead = bytearray(len(initial))
    buckets: dict[int, list[tuple[int, int]]] = {rule: [] for rule in later}
    # Replay every event up to the first short step (per segment they are in rule
    # order), and bucket the later recorded ones by rule.
    for start, key in zip(bounds, keys):
        for rule, left, right in events[key]:
            if rule <= cut:
                vals[start + left] = news[rule]
                dead[start + right] = 1
            elif rule in later:
                buckets[rule].append((start + left, start + right))
    alive = [i for i in range(len(vals)) if not dead[i]]
    out.append(tuple(show(vals[i]) for i in alive))
    for rule in recorded[first_short + 1 :]:
        new = news[rule]
        for left, right in buckets[rule]:
            vals[left] = new
            dead[right] = 1
        alive = [i for i in alive if not dead[i]]
        out.append(tuple(show(vals[i]) for i in alive))
    return out


WINDOW_RADIUS = 12  # symbols shown on each side of a long sequence's first change


def _changes(
    initial: Sequence[int],
    bounds: Sequence[int],
    keys: Sequence[Hashable],
    events: dict[Hashable, list[Event]],
    news: Mapping[int, int],
    recorded: Sequence[int],
    sequences: Sequence[tuple[Symbol, ...] | None],
    show: Callable[[int], Symbol],
    radius: int = WINDOW_RADIUS,
) -> list[tuple[tuple[int, ...], tuple[Symbol, ...] | None, int | None, tuple[bool, bool]]]:
    """What each recorded rule changed: (changed indices, window, window start, more before/after)."""
    n = len(initial)
    vals = list(initial)
    dead = bytearray(n)
    wanted = set(recorded)
    buckets: dict[int, list[tuple[int, int]]] = {rule: [] for rule in recorded}
    for start, key in zip(bounds, keys):
        for rule, left, right in events[key]:
            if rule in wanted:
                buckets[rule].append((start + left, start + right))
    out: list[tuple[tuple[int, ...], tuple[Symbol, ...] | None, int | None, tuple[bool, bool]]] = []
    alive: list[int] | None = None
    for rule, sequence in zip(recorded, sequences):
        new = news[rule]
        lefts = []
        for left, right in buckets[rule]:
            vals[left] = new
            dead[right] = 1
            lefts.append(left)
        made = set(lefts)
        if sequence is not None:
            alive = [i for i in (alive if alive is not None else range(n)) if not dead[i]]
            out.append((tuple(k for k, i in enumerate(alive) if i in made), None, None, (False, False)))
            continue
        first = min(lefts) if lefts else 0
        before: list[int] = []
        i = first - 1
        while i >= 0 and len(before) < radius:
            if not dead[i]:
                before.append(i)
            i -= 1
        more_before = any(not dead[j] for j in range(i, -1, -1)) if i >= 0 else False
        after: list[int] = []
        i = first
        while i < n and len(after) < radius + 1:
            if not dead[i]:
                after.append(i)
            i += 1
        more_after = False
        while i < n:
            if not dead[i]:
                more_after = True
                break
            i += 1
        shown = before[::-1] + after
        window = tuple(show(vals[j]) for j in shown)
        out.append((tuple(k for k, j in enumerate(shown) if j in made), window, shown[0] if shown else 0,
                    (more_before, more_after)))
    return out


def _tokens(
    initial: Sequence[int],
    bounds: Sequence[int],
    keys: Sequence[Hashable],
    events: dict[Hashable, list[Event]],
    news: Mapping[int, int],
    ids: Sequence[int],
    show: Callable[[int], Symbol],
    value: Callable[[int, int], bytes | str],
    max_tokens: int,
    max_tree_nodes: int,
) -> list[Token]:
    """The first `max_tokens` tokens with spans, and trees while the node budget lasts."""
    tokens: list[Token] = []
    budget = max_tree_nodes
    for start, end, key in zip(bounds, bounds[1:], keys):
        if len(tokens) >= max_tokens:
            break
        segment_events = events[key]
        consumed = {right for _rule, _left, right in segment_events}
        starts = [i for i in range(end - start) if i not in consumed]
        # Events grouped by the final token that holds their left operand.
        per_token: list[list[Event]] = [[] for _ in starts]
        for event in segment_events:
            per_token[bisect_right(starts, event[1]) - 1].append(event)
        for t, token_start in enumerate(starts):
            if len(tokens) >= max_tokens:
                break
            token_end = starts[t + 1] if t + 1 < len(starts) else end - start
            size = 2 * (token_end - token_start) - 1
            tree = None
            if size <= budget:
                budget -= size
                tree = _tree(initial, start, token_start, token_end, per_token[t], news, show)
            tokens.append(
                Token(
                    id=ids[len(tokens)],
                    value=value(start + token_start, start + token_end),
                    start=start + token_start,
                    end=start + token_end,
                    tree=tree,
                )
            )
    return tokens


def _tree(
    initial: Sequence[int],
    offset: int,
    token_start: int,
    token_end: int,
    token_events: list[Event],
    news: Mapping[int, int],
    show: Callable[[int], Symbol],
) -> MergeNode:
    """Replay one token's events over its leaves (offsets made absolute)."""
    nodes: dict[int, MergeNode] = {
        i: MergeNode(show(initial[offset + i]), offset + i, offset + i + 1)
        for i in range(token_start, token_end)
    }
    for rule, left, right in token_events:
        a = nodes[left]
        b = nodes.pop(right)
        nodes[left] = MergeNode(show(news[rule]), a.start, b.end, rule, (a, b))
    return nodes[token_start]


def build_trace(
    *,
    initial: Sequence[int],
    bounds: Sequence[int],
    keys: Sequence[Hashable],
    events: dict[Hashable, list[Event]],
    rules: Sequence[tuple[int, int, int]],
    ids: list[int],
    show: Callable[[int], Symbol],
    value: Callable[[int, int], bytes | str],
    limits: TraceLimits,
) -> EncodeTrace:
    """The trace of one encoding: `bounds` are segment starts plus the end, `keys[i]` segment i's cache key."""
    occurrences = Counter(keys)
    fired, counts = _steps(occurrences, events)
    # Each fired rule's new id (only those: a preset has 100,000 rules, and a list of
    # all of them cost more than the rest of a short text's trace).
    news = {rule: rules[rule][2] for rule in counts}
    recorded = fired[:limits.max_steps]
    sequences = _sequences(initial, bounds, keys, events, news, recorded, counts, show, limits.max_sequence)
    changes = _changes(initial, bounds, keys, events, news, recorded, sequences, show)
    steps = [
        TraceStep(
            rule=rule,
            left=show(rules[rule][0]),
            right=show(rules[rule][1]),
            new=show(rules[rule][2]),
            matches=counts[rule],
            sequence=sequence,
            changed=changed,
            window=window,
            window_start=window_start,
            window_more=more,
        )
        for rule, sequence, (changed, window, window_start, more) in zip(recorded, sequences, changes)
    ]
    tokens = _tokens(initial, bounds, keys, events, news, ids, show, value, limits.max_tokens, limits.max_tree_nodes)
    return EncodeTrace(
        ids=ids,
        tokens=tokens,
        tokens_truncated=len(ids) > len(tokens),
        initial=tuple(show(s) for s in initial) if len(initial) <= limits.max_sequence else None,
        steps=steps,
        steps_truncated=len(fired) > len(steps),
        rules_fired=len(fired),
        rules_idle=len(rules) - len(fired),
    )
