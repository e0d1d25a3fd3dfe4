"""A slow, obviously-correct pre-tokenized trace, the oracle for webapp.tokenizer.pretokenize.

Every distinct pre-token gets its own `encode_trace`, and the pre-token traces are
stitched together (token spans and trees shifted, matches summed, the whole
text's sequence rebuilt after each fired rule). Relabelling is applied after
the fact to every id in the trace.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Sequence

from webapp.tokenizer import TraceLimits, encode_trace
from webapp.tokenizer.pretokenize import pretokenized as pt
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceStep


def shift_tree(node: MergeNode | None, delta: int) -> MergeNode | None:
    if node is None or delta == 0:
        return node
    return MergeNode(
        symbol=node.symbol,
        start=node.start + delta,
        end=node.end + delta,
        rule=node.rule,
        children=tuple(shift_tree(child, delta) for child in node.children),  # type: ignore[misc]
    )


def relabelled(trace: EncodeTrace, relabel: Mapping[int, int]) -> EncodeTrace:
    """A trace with every id replaced through `relabel` (applied after the fact)."""
    m = lambda i: relabel.get(i, i) if isinstance(i, int) else i  # noqa: E731

    def tree(node: MergeNode | None) -> MergeNode | None:
        if node is None:
            return None
        return replace(node, symbol=m(node.symbol), children=tuple(tree(c) for c in node.children))  # type: ignore[misc]

    return replace(
        trace,
        ids=[m(i) for i in trace.ids],
        tokens=[replace(t, id=m(t.id), tree=tree(t.tree)) for t in trace.tokens],
        initial=None if trace.initial is None else tuple(m(s) for s in trace.initial),
        steps=[
            replace(s, left=m(s.left), right=m(s.right), new=m(s.new),
                    sequence=None if s.sequence is None else tuple(m(x) for x in s.sequence))
            for s in trace.steps
        ],
    )


def trace_by_pretokens(
    text: str,
    compiled: Any,
    scheme: str,
    *,
    max_steps: int,
    max_tokens: int,
    max_sequence: int,
) -> EncodeTrace:
    """The same trace from the engine's public encode_trace, one call per distinct pre-token.

    The reference for `pretokenized_encode_trace`, which runs the engine once
    over the whole text with the pre-token boundaries as extra cuts.
    """
    if scheme == "none":
        return encode_trace(
            text, compiled, limits=TraceLimits(max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence)
        )
    pretokens = pt.split_text(text, scheme)
    spans = pt.split_pretokens(text, scheme)
    total_bytes = spans[-1][1] if spans else 0
    record_sequence = total_bytes <= max_sequence

    # Encode each distinct pre-token once, with a full per-piece trace (pre-tokens are
    # short; a pre-token's own trace is bounded by the same caps).
    traces: dict[str, EncodeTrace] = {}
    for pretoken in pretokens:
        if pretoken not in traces:
            traces[pretoken] = encode_trace(
                pretoken,
                compiled,
                limits=TraceLimits(max_steps=max(len(compiled), 1), max_tokens=max(max_tokens, 1),
                                   max_sequence=max_sequence if record_sequence else 0),
            )

    ids: list[int] = []
    tokens: list[Token] = []
    tokens_truncated = False
    fired: dict[int, TraceStep] = {}  # rule -> a step of that rule (for its pair)
    matches: dict[int, int] = {}
    for pretoken, (start, _end) in zip(pretokens, spans):
        trace = traces[pretoken]
        ids.extend(trace.ids)
        for token in trace.tokens:
            if len(tokens) >= max_tokens:
                tokens_truncated = True
                break
            tokens.append(
                Token(
                    id=token.id,
                    value=token.value,
                    start=token.start + start,
                    end=token.end + start,
                    tree=shift_tree(token.tree, start),
                )
            )
        if trace.tokens_truncated:
            tokens_truncated = True
        for step in trace.steps:
            matches[step.rule] = matches.get(step.rule, 0) + step.matches
            fired.setdefault(step.rule, step)
    rule_order = sorted(fired)
    steps_truncated = len(rule_order) > max_steps
    rule_order = rule_order[:max_steps]

    initial: tuple[Any, ...] | None = None
    sequences: dict[int, tuple[Any, ...]] = {}
    if record_sequence and all(t.initial is not None for t in traces.values()):
        initial = tuple(sym for pretoken in pretokens for sym in (traces[pretoken].initial or ()))
        sequences = combined_sequences(pretokens, traces, rule_order)
    steps = [
        TraceStep(
            rule=rule,
            left=fired[rule].left,
            right=fired[rule].right,
            new=fired[rule].new,
            matches=matches[rule],
            sequence=sequences.get(rule),
        )
        for rule in rule_order
    ]
    rules_fired = len(fired)
    return EncodeTrace(
        ids=ids,
        tokens=tokens,
        tokens_truncated=tokens_truncated,
        initial=initial,
        steps=steps,
        steps_truncated=steps_truncated,
        rules_fired=rules_fired,
        rules_idle=max(len(compiled) - rules_fired, 0),
        pretokens=spans,
    )


def combined_sequences(
    pretokens: Sequence[str], traces: dict[str, EncodeTrace], rules: Sequence[int]
) -> dict[int, tuple[Any, ...]]:
    """The whole text's sequence after each fired rule (pre-tokens side by side)."""
    out: dict[int, tuple[Any, ...]] = {}
    if not rules:
        return out
    # Per distinct pre-token: its sequence after each of its own steps, in rule order.
    history: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
    for pretoken, trace in traces.items():
        history[pretoken] = [(s.rule, s.sequence) for s in trace.steps if s.sequence is not None]
        if len(history[pretoken]) != len(trace.steps):
            return {}  # a pre-token did not record its sequence: give none rather than a wrong one
    for rule in rules:
        seq: list[Any] = []
        for pretoken in pretokens:
            current = traces[pretoken].initial or ()
            for step_rule, step_seq in history[pretoken]:
                if step_rule > rule:
                    break
                current = step_seq
            seq.extend(current)
        out[rule] = tuple(seq)
    return out


def without_changes(trace: EncodeTrace) -> EncodeTrace:
    """The trace with what each step changed left out (the per-piece oracle does not
    record it; tests/unit/tokenizer/core/test_trace_changes.py checks it against a literal replay)."""
    import dataclasses

    steps = [dataclasses.replace(s, changed=(), window=None, window_start=None, window_more=(False, False)) for s in trace.steps]
    return dataclasses.replace(trace, steps=steps)
