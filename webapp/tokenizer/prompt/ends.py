"""Where a prompt ends: which leading tokens no appended text can change, and a witness for each other one.

`prompt_end(tokenizer, text)` traces the text once (special tokens are text, as in the other
explanations), proves the stable tokens with the stage half (splits.py) and the model half
(crossing.py), then looks for witnesses: appended texts, each checked by encoding text + it.
A token neither proven nor witnessed is undecided. `healing` counts the vocabulary tokens a
healed generation may choose from. What it does not do: read requests, bound the text (the
web layer does), or cache.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any, Callable, Iterator

from webapp.tokenizer.prompt.crossing import FINAL, Crossing, Fits, PieceModel, piece_model
from webapp.tokenizer.prompt.normalizers import futures
from webapp.tokenizer.prompt.splits import Settled, mark_at, no_match_inside, settled
from webapp.tokenizer.core.list_order.byte_level import CompiledByteMerges, implied_byte_vocab
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.splitters import FilePipeline
from webapp.tokenizer.stages.tokenizer import Tokenizer, tokenizer_of
from webapp.tokenizer.traces import TraceLimits

#: Continuations tried when the proof's own candidates change nothing (likelier first).
TRIED: tuple[str, ...] = (
    "s", " ", "a", "e", "zy", "x", "1", "0", ".", ",", "'", "'s", "\n", "-", "!", "_", "A", "\u0301",
    "\u200d", "é", "中", "\U0001F642", "\t", "  ", "ing", "=", "/", "\"",
)
#: The most texts encoded in search of witnesses (each one encode of text + it).
WITNESS_TRIES = 24
#: The most characters a held-back last character is tried as (itself and what it composes into).
COMPOSITIONS = 48
#: Healing examples listed.
EXAMPLES = 8


@dataclass
class PromptEnd:
    """`stable`: leading tokens proven final; `unstable`: (index, witness) of every token from the first
    witnessed one; `undecided`: the indexes between; `note`: what the proof could not follow."""

    ids: list[int]
    stable: int
    unstable: list[tuple[int, str]] = field(default_factory=list)
    undecided: list[int] = field(default_factory=list)
    candidates: int = 0
    examples: list[tuple[int, bytes]] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)
    note: str = ""

    @property
    def end(self) -> str:
        """Is the boundary at the text's end final ("final"), movable ("changeable") or "undecided"?"""
        if self.stable == len(self.ids):
            return "final"
        return "changeable" if self.unstable and self.unstable[-1][0] == len(self.ids) - 1 else "undecided"

    def answer(self) -> dict[str, Any]:
        """The JSON answer of the prompt routes."""
        return {
            "ids": self.ids, "stable": self.stable,
            "unstable": [{"index": i, "witness": w} for i, w in self.unstable],
            "undecided": self.undecided, "end": self.end,
            "healing": {"candidates": self.candidates, "examples": [
                {"id": i, "text": data.decode("utf-8", "backslashreplace")} for i, data in self.examples]},
        }


def typed_tokenizer(compiled: CompiledByteMerges, scheme: str = "none") -> Tokenizer:
    """The `Tokenizer` of typed byte rules (list order), split by a playground scheme or not."""
    tok = LoadedTokenizer(level="bytes", merges=compiled.rules, vocab=implied_byte_vocab(compiled),
                          pretokenize=scheme, source="playground")
    return tokenizer_of(tok, scheme, compiled)


@dataclass(frozen=True)
class _Token:
    id: int
    start: int
    end: int


def _spelled(tokenizer: Tokenizer, model: PieceModel, text: str) -> tuple[str, list[_Token]] | None:
    """(the model's text, its tokens with their spans) from the fast encode and each token's bytes, when
    no added token is matched and the bytes spell the model's text back (normalized: the file's
    normalizer on the whole text); else None, and the text is traced."""
    pipeline = tokenizer.pipeline if isinstance(tokenizer.split, FilePipeline) else None
    model_text = pipeline.normalizer(text) if pipeline is not None and pipeline.normalizer is not None and text else text
    ids = tokenizer.encode(text, frozenset())
    if pipeline is not None and set(ids) & set(pipeline.by_id):
        return None  # (an added token matched: the trace knows where)
    spelt = [model.spelling.get(i, b"") for i in ids]
    if b"".join(spelt) != model_text.encode("utf-8", "surrogatepass"):
        return None
    ends = list(accumulate(map(len, spelt)))
    return model_text, [_Token(i, e - len(d), e) for i, d, e in zip(ids, spelt, ends)]


def _matched(tokenizer: Tokenizer, text: str, pretokens: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans of the added tokens the file's splitter matched (not a piece the model merged into a token
    that happens to be an added one): its parts walked beside the trace's pieces, one span for each."""
    if not isinstance(tokenizer.split, FilePipeline) or tokenizer.pipeline is None:
        return []
    spans = iter(pretokens)
    out = []
    for added_id, value in tokenizer.pipeline.parts(text, frozenset()):
        if added_id is not None:
            out.append(next(spans, (-1, -1)))
        else:
            for _ in value:
                next(spans, None)
    return out


def prompt_end(tokenizer: Tokenizer, text: str, *, traced: bool = False) -> PromptEnd:
    """The prompt-end answer for `text` (see the module docstring). The tokens' spans come from the fast
    encode when it spells the text back, else (or with `traced`: the tests compare both) from a trace."""
    model = piece_model(tokenizer)
    fast = None if traced else _spelled(tokenizer, model, text)
    if fast is not None:  # (the pieces are then checked against the tokens' ends, not the trace's pieces)
        model_text, spelt = fast
        tokens: list[Any] = list(spelt)
        pretokens: list[tuple[int, int]] | None = None
        added: list[tuple[int, int]] = []
    else:
        size = len(text.encode("utf-8", "surrogatepass"))
        limits = TraceLimits(max_steps=0, max_tokens=size + 1, max_sequence=0, max_tree_nodes=0)  # (no trees)
        trace, added_at = tokenizer.trace(text, frozenset(), limits)
        tokens = list(trace.tokens)
        model_text = trace.text if trace.text is not None else text
        pretokens = trace.pretokens
        added = _matched(tokenizer, text, trace.pretokens) if added_at else []
    ids = [t.id for t in tokens]
    out = PromptEnd(ids, len(ids), spans=[(t.start, t.end) for t in tokens])
    if not ids:
        return out
    found = settled(tokenizer, text, model_text, pretokens, added, {t.end for t in tokens})
    out.note = found.note
    stable = sum(1 for t in tokens if t.end <= found.until)
    hints: list[bytes] = []
    if found.keeps is not None:
        stable, hints = _inside_piece(model, model_text, tokens, found, stable)
    out.stable = stable
    last = tokens[-1]
    out.candidates, out.examples = _healing(model, model.spelling.get(last.id, b""))
    if found.holds and text:
        # (the normalizer holds the last character back: the marks it composes with, or is put after, change it)
        at = next((i for i in range(len(text) - found.holds, len(text)) if not unicodedata.combining(text[i])),
                  len(text) - 1)
        own = unicodedata.normalize("NFD", text[at:])[1:]
        hints += [_missing(unicodedata.normalize("NFD", d)[1:], own).encode("utf-8")
                  for d in futures(text[at], text[at + 1:])[1:5]]
        hints += [ch.encode("utf-8") for ch in _put_before(text[-1])]
    if stable < len(ids):
        _witness(tokenizer, text, out, _tried(model, hints, out.examples, tokenizer.writes_metaspace))
    if out.undecided and found.keeps is not None:
        proven = _composed_ends(model, model_text, tokens, found, stable)
        out.stable = min(proven, out.stable + len(out.undecided))
        out.undecided = [i for i in out.undecided if i >= out.stable]
    return out


def _inside_piece(model: PieceModel, model_text: str, tokens: list[Any], found: Settled,
                  stable: int) -> tuple[int, list[bytes]]:
    """(stable tokens after the model half's verdicts, the appended bytes it found crossing a boundary)."""
    data = model_text.encode("utf-8", "surrogatepass")
    until, keeps = found.until, found.keeps or 0
    piece = [t for t in tokens if t.start >= until]
    short = found.short - until if found.short is not None else None
    after = data[keeps:found.known] if found.known is not None else b""
    crossing = Crossing(model, data[until:keeps], [t.id for t in piece], [t.end - until for t in piece],
                        _fits(found, data), short, after)
    verdicts = crossing.decide()
    for verdict in verdicts:
        if verdict != FINAL:
            break
        stable += 1
    # (a hint runs from the kept text's end: what the text itself has there comes first, then the witness)
    rest = data[keeps:]
    hints = [hint[len(rest):] for hint in (crossing.candidates[b] for b in sorted(crossing.candidates))
             if hint.startswith(rest)]
    if not hints and rest and found.held and crossing.candidates:
        # (what crosses runs over another character than the one held back: ask with the text's own, for a
        # witness; "spec" + "i" -> "al")
        again = Crossing(model, data[until:], [t.id for t in piece], [t.end - until for t in piece],
                         _fits(found, data), keeps - until)
        again.decide()
        hints = [again.candidates[b] for b in sorted(again.candidates)]
    return stable, hints


def _fits(found: Settled, data: bytes) -> Fits:
    """What the kept piece's bytes must fit: its split's shape, and those of the earlier splits' pieces holding
    it (each after its own bytes before the piece)."""
    outer: list[tuple[Callable[[bytes], bool], bytes]] = [
        (Fits(shape, pattern), data[at:found.until]) if shape is not None else (no_match_inside(pattern), b"")
        for shape, pattern, at in found.outer]
    if found.shape is None and found.pattern is not None:  # (the piece is itself a stretch between matches)
        outer.append((no_match_inside(found.pattern), b""))
    if found.marked and found.known is not None:
        outer.append((mark_at(found.known - found.until), b""))
    return Fits(found.shape, found.pattern, outer)


def _composed_ends(model: PieceModel, model_text: str, tokens: list[Any], found: Settled, stable: int) -> int:
    """Stable tokens when the normalizer holds back one last character that appended marks may compose
    with (NFC: "ス" may become "ズ"): the piece then holds the kept bytes and that character or one it
    composes into, each tried in turn instead of any continuation, with a mark after it when one is left
    there in every case (tried only when needed: it is slower)."""
    data = model_text.encode("utf-8", "surrogatepass")
    until, keeps = found.until, found.keeps or 0
    piece = [t for t in tokens if until <= t.start and t.end <= keeps]
    if not found.held or not piece or len(found.held) > COMPOSITIONS:
        return stable  # (no character held back whose futures are known: a mark may be reordered, say)
    kept = data[until:keeps]
    verdicts: list[list[str]] = []
    for composed in found.held:
        fits = _fits(found, data)
        if found.held_marked:  # (a mark stands after it, whatever it becomes)
            fits.outer = [*fits.outer, (mark_at(keeps - until + len(composed.encode("utf-8"))), b"")]
        crossing = Crossing(model, kept + composed.encode("utf-8"), [t.id for t in piece], [t.end - until for t in piece],
                            fits, len(kept))
        verdicts.append(crossing.decide())
    proven = stable
    base = sum(1 for t in tokens if t.end <= until)
    for index in range(len(piece)):
        if not all(v[index] == FINAL for v in verdicts):
            break
        proven = max(proven, base + index + 1)
    return proven


def _missing(marks: str, have: str) -> str:
    """The marks of `marks` that `have` lacks (what to append for a held-back starter to become another)."""
    left, out = list(have), []
    for ch in marks:
        if ch in left:
            left.remove(ch)
        else:
            out.append(ch)
    return "".join(out)


def _put_before(mark: str) -> list[str]:
    """A few marks that canonical ordering puts before `mark` (a lower class, near it: its own script's
    first, then U+0334, U+093C and U+3099), so appending one changes what stands after the last starter."""
    own = unicodedata.combining(mark)
    if own <= 1:
        return []
    near = [chr(c) for c in range(max(ord(mark) - 0x80, 0), ord(mark) + 0x80)
            if 0 < unicodedata.combining(chr(c)) < own]
    # (and two of other first bytes, for a token that holds only the first byte of the marks there)
    return [*near[:3], *(m for m in ("\u0334", "\u093c", "\u3099") if unicodedata.combining(m) < own)]


def _healing(model: PieceModel, last: bytes) -> tuple[int, list[tuple[int, bytes]]]:
    """(how many tokens' bytes start with the last token's, the first of them by id: the most common)."""
    if not last:
        return 0, []
    count, ids = model.starting_with(last, EXAMPLES)
    return count, [(i, model.spelling[i]) for i in ids]


def _tried(model: PieceModel, hints: list[bytes], examples: list[tuple[int, bytes]],
           metaspace: bool) -> Iterator[str]:
    """Continuations to try, the proof's first, then the healing examples' tails, then TRIED."""
    last = min((data for _, data in examples), key=len, default=b"")
    tails = [data[len(last):] for _, data in examples if len(data) > len(last)]
    seen: set[str] = set()
    # (a hint's token may stand there only when the piece goes on: one letter more lets most patterns' pieces do)
    for data in [*hints, *(hint + b"a" for hint in hints[:2]), *tails]:
        for typed in _completed(data):
            if metaspace:
                typed = typed.replace("\u2581", " ")
            if typed and typed not in seen:
                seen.add(typed)
                yield typed
    for typed in TRIED:
        if typed not in seen:
            seen.add(typed)
            yield typed


def _completed(data: bytes) -> list[str]:
    """`data` as text: itself when it is UTF-8, else with its last character completed (a few ways)."""
    try:
        return [data.decode("utf-8")]
    except UnicodeDecodeError:
        pass
    out = []
    for extra in (b"\x80", b"\xa0", b"\xb0", b"\x80\x80", b"\xa0\x80", b"\x80\x80\x80"):
        try:
            out.append((data + extra).decode("utf-8"))
        except UnicodeDecodeError:
            continue
        if len(out) == 2:
            break
    return out


def _witness(tokenizer: Tokenizer, text: str, out: PromptEnd, tried: Iterator[str]) -> None:
    """Fill `unstable` and `undecided`: each continuation is checked by encoding text + it."""
    ids = out.ids
    found: list[tuple[int, str]] = []  # (first changed index, witness)
    for _, typed in zip(range(WITNESS_TRIES), tried):
        other = tokenizer.encode(text + typed, frozenset())
        same = 0
        for a, b in zip(ids, other):
            if a != b:
                break
            same += 1
        if same < len(ids):
            found.append((same, typed))
            if same <= out.stable:
                break
    first = min((d for d, _ in found), default=len(ids))
    out.stable = min(out.stable, first)  # (a witness is a fact: were a proof ever wrong, it gives way)
    out.undecided = list(range(out.stable, first))
    out.unstable = [(i, next(w for d, w in found if d <= i)) for i in range(first, len(ids))]


__all__ = ["PromptEnd", "prompt_end", "typed_tokenizer"]
