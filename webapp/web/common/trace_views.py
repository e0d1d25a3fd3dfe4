"""A trace -> the rows of the Trace view: each step's rule, its matches and its sequence of chips.

`byte_trace_rows` and `char_trace_rows` turn an `EncodeTrace` into `TraceRow`s
of `Chip`s (a long sequence shown as a window around the step's first match).
Like viewmodels.py, it does no escaping (the templates do) and never touches Flask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from webapp.tokenizer import EncodeTrace
from webapp.web.common.viewmodels import hue_class, printable, printable_bytes


@dataclass
class Chip:
    """One item of a trace sequence."""

    id: int | None
    hue: str
    text: str
    changed: bool = False  # made by this row's rule (highlighted)
    show_id: bool = False  # the id is printed under the text (tokens made by merges, on the Bytes page)


@dataclass
class TraceRow:
    label: str
    rule: str
    matches: int | None
    chips: list[Chip] | None
    length: int | None
    window_at: int | None = None  # chips are a window of a long sequence, from this text offset
    more: tuple[bool, bool] = (False, False)  # more of the sequence before / after the window
    rule_tokens: str = ""  # the rule in the tokenizer's tokens, when its ids are not bytes
    rule_index: int | None = None  # the step's rule (list index or rank); None for start / result rows
    piece_at: int | None = None  # a library-order step: its piece's start (else the step's window start)
    anchor: str = ""  # the row's id, when a boundary's story links to rows
    story_notes: list[str] = field(default_factory=list)  # what this row did at the story's boundary


def _step_chips(step: Any, chip: Callable[[Any], Chip]) -> tuple[list[Chip] | None, int | None, tuple[bool, bool]]:
    """A step's chips (whole sequence, or the window around its first match) with its changes marked."""
    items = step.sequence if step.sequence is not None else step.window
    if items is None:
        return None, None, (False, False)
    chips = [chip(s) for s in items]
    for k in step.changed:
        chips[k].changed = True
    if step.sequence is not None:
        return chips, None, (False, False)
    return chips, step.window_start, tuple(step.window_more)


START_WINDOW = 25  # symbols of a long start sequence shown (the passes show 2 x 12 + 1)


def byte_trace_rows(trace: EncodeTrace, text: str | None = None,
                    vocab: Mapping[int, bytes] | None = None, *, metaspace: bool = False) -> list[TraceRow]:
    """`start / after rule k` rows for the byte-level trace table.

    `vocab` is a preset's or opened file's {id: bytes}: its ids are not bytes
    (cl100k_base numbers the byte "H" 39), so each chip shows what its id
    means there. Without it (typed merges) ids 0..255 are bytes and each
    rule's new id is tracked step by step (rule order), so odd lists that
    redefine an id still show what the id meant at that point. A trace cut
    after its first passes ends with a "result" row: the tokens themselves.
    """
    own = vocab is not None

    def spell(value: bytes) -> str:
        # A SentencePiece-style file (`metaspace`) sees its text with spaces as "▁" and so do its
        # tokens in the Tokens view; its decode vocab holds spaces: spell them as the file does.
        return printable_bytes(value.replace(b" ", "\u2581".encode()) if metaspace else value)

    known: dict[int, bytes] = {i: bytes([i]) for i in range(256)} if vocab is None else dict(vocab)
    byte_ids = {value[0]: i for i, value in known.items() if len(value) == 1} if own else {b: b for b in range(256)}

    def chip(symbol: Any) -> Chip:
        value = known.get(symbol, b"")
        return Chip(symbol, hue_class(symbol), spell(value) if value else str(symbol),
                    show_id=len(value) != 1 if own else symbol >= 256)

    def name(symbol: Any) -> str:
        value = known.get(int(symbol))
        return f"{spell(value)!r}" if value else str(symbol)

    shown_text = trace.text if trace.text is not None else text
    rows: list[TraceRow] = []
    if trace.initial is not None:
        rows.append(TraceRow("start", "", None, [chip(s) for s in trace.initial], len(trace.initial)))
    elif shown_text is not None:  # too long to show whole: its beginning, as the passes show windows
        head = shown_text.encode("utf-8", "surrogatepass")[:START_WINDOW]
        rows.append(TraceRow("start", "", None, [chip(byte_ids.get(b, b)) for b in head], None, 0, (False, True)))
    else:
        rows.append(TraceRow("start", "", None, None, None))
    for n, step in enumerate(trace.steps, start=1):
        if not own:
            known[int(step.new)] = known.get(int(step.left), b"") + known.get(int(step.right), b"")
        rule = f"rule {step.rule + 1}: {step.left} {step.right} → {step.new}"
        spelled = f"{name(step.left)} + {name(step.right)} → {name(step.new)}" if own else ""
        chips, at, more = _step_chips(step, chip)
        rows.append(TraceRow(f"pass {n}", rule, step.matches, chips,
                             len(step.sequence) if step.sequence is not None else None, at, more, spelled,
                             rule_index=step.rule,
                             piece_at=step.piece_start if step.piece_start is not None else step.window_start))
    if _ends_short(trace, trace.ids):
        rows.append(_result_row(trace, lambda t: Chip(
            t.id, hue_class(t.id), spell(t.value) if isinstance(t.value, bytes) else str(t.id),
            show_id=(len(t.value) != 1) if own else t.id >= 256)))
    return rows


RESULT_CHIPS = 100  # tokens shown in the "result" row of a trace cut after its first passes


def _ends_short(trace: EncodeTrace, output: Sequence[Any]) -> bool:
    """Does the table's last row fail to show the whole `output` (the symbols the text became)?
    Passes cut at TRACE_MAX_STEPS; a last pass shown as a window, or as one piece only (a
    library-order file fires piece by piece); no pass at all while the output is not the start
    (ignore_merges takes a piece whole)."""
    if trace.steps_truncated:
        return True
    if not trace.steps:
        return trace.initial is not None and list(trace.initial) != list(output)
    last = trace.steps[-1]
    shown = last.sequence if last.sequence is not None else last.window
    return shown is None or len(shown) != len(trace.ids) or last.window_more != (False, False)


def _result_row(trace: EncodeTrace, chip: Callable[[Any], Chip]) -> TraceRow:
    """The last row of a trace whose passes were cut: the output tokens (the first ones recorded)."""
    chips = [chip(t) for t in trace.tokens[:RESULT_CHIPS]]
    more = len(trace.ids) > len(chips)
    return TraceRow("result", "after every rule", None, chips, None if more else len(chips),
                    0 if more else None, (False, more))


def char_trace_rows(trace: EncodeTrace, vocab: dict[str, int], text: str | None = None) -> list[TraceRow]:
    """The same table for character-level traces (chips show the token strings)."""

    def chip(symbol: Any) -> Chip:
        token_id = vocab.get(str(symbol))
        return Chip(token_id, hue_class(token_id), printable(str(symbol)))

    rows: list[TraceRow] = []
    if trace.initial is not None:
        rows.append(TraceRow("start", "", None, [chip(s) for s in trace.initial], len(trace.initial)))
    elif text is not None:
        rows.append(TraceRow("start", "", None, [chip(c) for c in text[:START_WINDOW]], None, 0, (False, True)))
    else:
        rows.append(TraceRow("start", "", None, None, None))
    for n, step in enumerate(trace.steps, start=1):
        rule = f"rule {step.rule + 1}: {printable(str(step.left))} {printable(str(step.right))} → {printable(str(step.new))}"
        chips, at, more = _step_chips(step, chip)
        rows.append(TraceRow(f"pass {n}", rule, step.matches, chips,
                             len(step.sequence) if step.sequence is not None else None, at, more))
    if _ends_short(trace, [t.value for t in trace.tokens]):
        rows.append(_result_row(trace, lambda t: chip(t.value)))
    return rows
