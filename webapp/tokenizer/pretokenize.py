"""Optional pre-tokenization: split text with a regular expression, encode each piece.

The algorithms in the GUIDE encode the whole text as one sequence, and that
stays the default (scheme "none"). Real tokenizers first split the text with a
regular expression (GPT-2's pattern, or cl100k's for GPT-3.5/4) and run BPE
inside each piece only. This module offers those two schemes:

- `split_pieces(text, scheme)` gives the pieces as UTF-8 byte spans;
- `pretokenized_encode(text, merges, scheme)` encodes every piece with the
  same ordered-rule semantics as `encode` and concatenates the ids;
- `pretokenized_encode_trace(...)` does the same and returns one `EncodeTrace`
  for the whole text (token spans in byte offsets of the whole text, the
  pieces in `EncodeTrace.pieces`).

Identical pieces give identical ids, so each distinct piece is encoded once
per call. What it does not do: special tokens, normalisation, or prefix
spaces; character-level encoding (the option is for byte-level merges).
The patterns are the published ones, compiled with the `regex` package
(Unicode classes such as \\p{L} and the scoped (?i:...) flag need it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

import regex

from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.traces import EncodeTrace, MergeNode, Token, TraceStep

SCHEMES: tuple[str, ...] = ("none", "gpt2", "cl100k")

# GPT-2's pattern as published with its encoder (also the `tokenizers`
# ByteLevel pre-tokenizer's regex), and cl100k_base's pattern.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
CL100K_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
PATTERNS: dict[str, str] = {"gpt2": GPT2_PATTERN, "cl100k": CL100K_PATTERN}
_COMPILED: dict[str, Any] = {name: regex.compile(p) for name, p in PATTERNS.items()}


def check_scheme(scheme: Any) -> str:
    """The scheme name if known, else a TokenizerError naming the choices."""
    if isinstance(scheme, str) and scheme in SCHEMES:
        return scheme
    raise TokenizerError(
        f"pretokenize: expected one of {', '.join(SCHEMES)}, got {scheme!r}",
        field="pretokenize",
    )


def scheme_for_pattern(pattern: str) -> str | None:
    """Which of our schemes a regex (from a tokenizer file) is, or None."""
    for name, ours in PATTERNS.items():
        if pattern == ours:
            return name
    # tiktoken and minbpe publish possessive / reordered variants of the same
    # patterns; recognise them by their distinctive parts.
    compact = pattern.replace("++", "+").replace("?+", "?").replace("{1,3}+", "{1,3}")
    if r"\p{N}{1,3}" in compact and r"[^\r\n\p{L}\p{N}]?" in compact:
        return "cl100k"
    if r" ?\p{L}+" in compact and r" ?\p{N}+" in compact:
        return "gpt2"
    return None


def split_text(text: str, scheme: str) -> list[str]:
    """The pieces as strings (for scheme "none": the whole text, if not empty)."""
    check_scheme(scheme)
    if scheme == "none":
        return [text] if text else []
    return _COMPILED[scheme].findall(text)


def split_pieces(text: str, scheme: str) -> list[tuple[int, int]]:
    """The pieces as (start, end) UTF-8 byte offsets into `text`, end exclusive."""
    spans = []
    offset = 0
    for piece in split_text(text, scheme):
        size = _utf8_len(piece)
        spans.append((offset, offset + size))
        offset += size
    return spans


def _utf8_len(piece: str) -> int:
    try:
        return len(piece.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"text: character {exc.start + 1} of a piece is a lone surrogate, which UTF-8 cannot encode",
            field="text",
        ) from None


def _engine() -> Any:
    # Imported late: the engine package imports nothing from here, and this
    # keeps `import webapp.tokenizer.pretokenize` cheap and cycle-free.
    from webapp import tokenizer

    return tokenizer


def _compiled(merges: Any) -> Any:
    tk = _engine()
    compiled_type = getattr(tk, "CompiledByteMerges", None)
    if compiled_type is not None and isinstance(merges, compiled_type):
        return merges
    return tk.compile_byte_merges(merges)


def pretokenized_encode(text: str, merges: Any, scheme: str) -> list[int]:
    """Ids of `text`: each piece encoded like `encode`, the ids concatenated."""
    check_scheme(scheme)
    tk = _engine()
    if scheme == "none":
        return list(tk.encode(text, merges))
    compiled = _compiled(merges)
    text = tk.validate_text(text)
    # One call over the whole text with the piece boundaries as extra cuts:
    # the engine then batches and caches the pieces like any other text.
    cuts = [end for _, end in split_pieces(text, scheme)]
    return compiled.encode_bytes(text.encode("utf-8"), cuts)


def _shift_tree(node: MergeNode | None, delta: int) -> MergeNode | None:
    if node is None or delta == 0:
        return node
    return MergeNode(
        symbol=node.symbol,
        start=node.start + delta,
        end=node.end + delta,
        rule=node.rule,
        children=tuple(_shift_tree(child, delta) for child in node.children),  # type: ignore[misc]
    )


def pretokenized_encode_trace(
    text: str,
    merges: Any,
    scheme: str,
    *,
    max_steps: int = 200,
    max_tokens: int = 3000,
    max_sequence: int = 2000,
    relabel: Mapping[int, int] | None = None,
) -> EncodeTrace:
    """One trace for the whole text, each piece encoded on its own.

    Encoding pieces separately is the same as encoding the text with extra
    cut points at the piece boundaries, so the trace is the engine's own trace
    builder run over the union of its cut points and ours: steps are rules
    with their matches summed over all pieces, sequences are the whole text's.
    `relabel` maps ids for display and output (an imported file's own ids);
    ids it does not list stay as they are. `EncodeTrace.pieces` holds the
    pre-tokenization spans (empty for "none").
    """
    check_scheme(scheme)
    compiled = _compiled(merges)
    spans = split_pieces(text, scheme) if scheme != "none" else []
    try:
        from webapp.tokenizer.tracing import build_trace
        from webapp.tokenizer.byte_level import DEFAULT_MAX_TREE_NODES

        run = compiled.table.run
        rules = compiled.rules
    except (ImportError, AttributeError):  # pragma: no cover - engine without these internals
        trace = _trace_by_pieces(text, compiled, scheme, max_steps=max_steps,
                                 max_tokens=max_tokens, max_sequence=max_sequence)
        return _relabelled(trace, relabel) if relabel else trace
    _engine().validate_text(text)
    data = text.encode("utf-8")
    cuts = set(compiled.bounds(data))
    cuts.update(start for start, _ in spans)
    bounds = sorted(cuts)
    keys: list[bytes] = []
    events: dict[bytes, list[Any]] = {}
    piece_ids: dict[bytes, list[int]] = {}
    ids: list[int] = []
    for start, end in zip(bounds, bounds[1:]):
        piece = data[start:end]
        keys.append(piece)
        if piece not in events:
            events[piece] = []
            piece_ids[piece] = run(piece, events[piece])
        ids.extend(piece_ids[piece])
    show: Callable[[int], Any] = int
    if relabel:
        mapping = dict(relabel)
        show = lambda i: mapping.get(i, i)  # noqa: E731
        ids = [mapping.get(i, i) for i in ids]
    trace = build_trace(
        initial=data,
        bounds=bounds,
        keys=keys,
        events=events,
        rules=rules,
        ids=ids,
        show=show,
        value=lambda start, end: data[start:end],
        max_steps=max_steps,
        max_tokens=max_tokens,
        max_sequence=max_sequence,
        max_tree_nodes=DEFAULT_MAX_TREE_NODES,
    )
    return replace(trace, pieces=spans)


def _relabelled(trace: EncodeTrace, relabel: Mapping[int, int]) -> EncodeTrace:
    """A trace with every id replaced through `relabel` (fallback path only)."""
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


def _trace_by_pieces(
    text: str,
    compiled: Any,
    scheme: str,
    *,
    max_steps: int,
    max_tokens: int,
    max_sequence: int,
) -> EncodeTrace:
    """The same trace from the engine's public encode_trace, one call per distinct piece.

    Kept as the reference for the fast path above (the tests compare them) and
    as a fallback should the engine's internals change.
    """
    tk = _engine()
    if scheme == "none":
        return tk.encode_trace(
            text, compiled, max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence
        )
    pieces = split_text(text, scheme)
    spans = split_pieces(text, scheme)
    total_bytes = spans[-1][1] if spans else 0
    record_sequence = total_bytes <= max_sequence

    # Encode each distinct piece once, with a full per-piece trace (pieces are
    # short; a piece's own trace is bounded by the same caps).
    traces: dict[str, EncodeTrace] = {}
    for piece in pieces:
        if piece not in traces:
            traces[piece] = tk.encode_trace(
                piece,
                compiled,
                max_steps=max(len(compiled), 1),
                max_tokens=max(max_tokens, 1),
                max_sequence=max_sequence if record_sequence else 0,
            )

    ids: list[int] = []
    tokens: list[Token] = []
    tokens_truncated = False
    fired: dict[int, TraceStep] = {}  # rule -> a step of that rule (for its pair)
    matches: dict[int, int] = {}
    for piece, (start, _end) in zip(pieces, spans):
        trace = traces[piece]
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
                    tree=_shift_tree(token.tree, start),
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
        initial = tuple(sym for piece in pieces for sym in (traces[piece].initial or ()))
        sequences = _combined_sequences(pieces, traces, rule_order)
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
        pieces=spans,
    )


def _combined_sequences(
    pieces: Sequence[str], traces: dict[str, EncodeTrace], rules: Sequence[int]
) -> dict[int, tuple[Any, ...]]:
    """The whole text's sequence after each fired rule (pieces side by side)."""
    out: dict[int, tuple[Any, ...]] = {}
    if not rules:
        return out
    # Per distinct piece: its sequence after each of its own steps, in rule order.
    history: dict[str, list[tuple[int, tuple[Any, ...]]]] = {}
    for piece, trace in traces.items():
        history[piece] = [(s.rule, s.sequence) for s in trace.steps if s.sequence is not None]
        if len(history[piece]) != len(trace.steps):
            return {}  # a piece did not record its sequence: give none rather than a wrong one
    for rule in rules:
        seq: list[Any] = []
        for piece in pieces:
            current = traces[piece].initial or ()
            for step_rule, step_seq in history[piece]:
                if step_rule > rule:
                    break
                current = step_seq
            seq.extend(current)
        out[rule] = tuple(seq)
    return out
