"""The stage half of the prompt-end proof: which leading pieces no appended text can change.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import codecs
import json
import re
import unicodedata
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Callable, Sequence

import numpy as np
import regex

from webapp.tokenizer.explain.alternatives import alternative_at, top_alternatives
from webapp.tokenizer.pretokenize.patterns import GPT2_PATTERN, PATTERNS
from webapp.tokenizer.loaded import Part
from webapp.tokenizer.stages.splitters import FilePipeline, PlaygroundSplit
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.prompt.normalizers import held_back, mark_after, marks, marks_follow, normalizer_reach
from webapp.tokenizer.vocab.pieces import kinds_among, reach_of, reaches_of

#: What an alternative may not hold (outside its character classes) for a match that ran to the text's end
#: to be only lengthened by more text: a lookaround, an anchor, a lazy quantifier.
_NOT_GROWING = re.compile(r"\(\?[=!<]|\\[bBAzZG]|[\^$]|[*+?}]\?")
_CLASS = re.compile(r"\[(?:\\.|[^\]])*\]")

CLOSED, GROWS, OPEN = "closed", "grows", "open"


@dataclass(frozen=True)
class Settled:
    """`until`: every piece ending at or before this byte of the model's text is final; `keeps`: the piece
    that starts there starts so in every longer text and holds the model's text up to this byte (None:
    not proven); `note`: why nothing is proven (or "")."""

    until: int
    keeps: int | None
    note: str = ""
    shape: str | None = None  # a pattern every longer text's piece there matches (None: any text)
    short: int | None = None  # or that piece ends at this byte, short of `keeps`
    pattern: str | None = None  # the split pattern `shape` comes from
    held: tuple[str, ...] = ()  # what the one character the normalizer holds back may become (else empty)
    holds: int = 0  # the text's last characters the normalizer holds back (appended text may change them)
    marked: bool = False  # a mark stands right after the kept text (at `known`) in every longer text
    held_marked: bool = False  # a mark stands right after the held-back character, whatever it becomes
    known: int | None = None  # every longer text keeps the model's text up to this byte (past `keeps`, or at it)
    outer: tuple[tuple[str | None, str, int], ...] = ()  # (shape, pattern, start byte) of earlier splits' pieces
    # holding it (a None shape: a stretch between that pattern's matches)


@dataclass(frozen=True)
class _Split:
    pattern: str  # matches are pieces, and so are the stretches between them (the library's Isolated)


def _split_plan(tokenizer: Tokenizer) -> list[_Split] | None:
    """The pre-tokenizer as a list of regex splits, None when it is one this proof does not follow."""
    split = tokenizer.split
    if isinstance(split, PlaygroundSplit):
        return [] if split.scheme == "none" else [_Split(PATTERNS[split.scheme])]
    if not isinstance(split, FilePipeline):
        return []  # (the whole text is one piece)
    desc = json.loads(tokenizer.loaded.pipeline)
    return _plan_of(desc.get("pre_tokenizer"), desc.get("normalizer"))


def _plan_of(node: Any, normalizer: Any) -> list[_Split] | None:
    if node is None:
        return []
    kind = node.get("type")
    if kind == "Sequence":
        plan: list[_Split] = []
        for child in node.get("pretokenizers", []):
            part = _plan_of(child, normalizer)
            if part is None:
                return None
            plan += part
        return plan
    if kind == "ByteLevel":
        return [_Split(GPT2_PATTERN)] if node.get("use_regex", True) else []
    if kind == "Split" and not node.get("invert"):
        pattern = node.get("pattern", {})
        if "String" in pattern and _never_left(pattern["String"], normalizer):
            return []
        if node.get("behavior") != "Isolated":
            return None
        return [_Split(pattern["Regex"] if "Regex" in pattern else regex.escape(pattern["String"]))]
    return None


def _never_left(literal: str, normalizer: Any) -> bool:
    """Does the normalizer replace every `literal` (a SentencePiece-style file's spaces), so a split on it
    never cuts?"""
    nodes = normalizer.get("normalizers", []) if normalizer and normalizer.get("type") == "Sequence" else [normalizer]
    return any(n and n.get("type") == "Replace" and n.get("pattern") == {"String": literal}
               and literal not in n.get("content", literal) for n in nodes)


@dataclass(frozen=True)
class _AddedStarts:
    """Every proper prefix of the added tokens a file always matches, matched in the text as typed (`raw`)
    or in the normalized text (`normal`, their normalized content), made once per tokenizer."""

    raw: frozenset[str]
    normal: frozenset[str]
    longest: int

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> "_AddedStarts":
        pipeline = tokenizer.pipeline
        always = [t for t in pipeline.added if not t.special] if pipeline is not None else []
        raw = [t.content for t in always if not t.normalized]
        normal = [pipeline.token_text[t.id] for t in always if t.normalized] if pipeline is not None else []
        return cls(_starts(raw), _starts(normal), max(map(len, raw + normal), default=0))


def _starts(contents: list[str]) -> frozenset[str]:
    return frozenset(c[:k] for c in contents for k in range(1, len(c)))


_ADDED_STARTS: Part[_AddedStarts] = Part("prompt end: added tokens' starts")


def _added_reach(tokenizer: Tokenizer, text: str, normalized: bool = False) -> int:
    """Characters at the end of `text` (as typed, or `normalized`) that could become the start of an added
    token matched in any text (special tokens are text here, so only those the file always matches)."""
    if not isinstance(tokenizer.split, FilePipeline):
        return 0  # (a playground split matches no added token: special tokens are text here)
    added = tokenizer.loaded.built.get(_ADDED_STARTS, lambda: _AddedStarts.of(tokenizer))
    starts = added.normal if normalized else added.raw
    for size in range(min(added.longest - 1, len(text)), 0, -1):
        if text[len(text) - size:] in starts:
            return size
    return 0


@dataclass(frozen=True)
class _Piece:
    start: int
    end: int
    status: str
    keep: int = 0  # (GROWS: every longer text's piece at `start` holds the characters up to here)
    shape: str | None = None  # (GROWS: a pattern every such piece matches; None: any text)
    short: int | None = None  # (GROWS: or that piece ends here, short of `keep`)
    pattern: str | None = None  # (GROWS: the split pattern the shape comes from)
    outer: tuple[tuple[str | None, str, int], ...] = ()  # (GROWS: (shape, pattern, start) of the pieces it lies in;
    # a None shape: a stretch between the pattern's matches)


def _pieces(plan: list[_Split], text: str, fixed: int, added: list[tuple[int, int]],
            held: Sequence[str] = (), known: int = 0) -> list[_Piece]:
    """The pieces of `text` (character spans) with their status, split by each pattern in turn; `fixed`:
    the characters of `text` every longer text keeps (`held`: what the one character it holds back may
    become; `known`: past `fixed`, the characters still there as text or in an added token). Stretches
    between matched added tokens are split on their own; those before the last added
    token, and such tokens ending in the kept text, are final."""
    runs: list[_Piece] = []
    done = 0
    for start, end in added:
        if done < start:  # (it ends where an added token starts, in every longer text, if that is kept)
            runs.append(_Piece(done, start, CLOSED if start <= fixed else OPEN))
        runs.append(_Piece(start, end, CLOSED if end <= fixed else OPEN))
        done = end
    tail = [_Piece(done, len(text), GROWS, fixed)] if done < len(text) else []  # (a child past `fixed` is open)
    out: list[_Piece] = []
    for run in [*runs, *tail]:
        if run.start in {s for s, _ in added}:
            out.append(run)
            continue
        pieces = [run]
        for split in plan:
            compiled = regex.compile(split.pattern)
            pieces = [_inside(child, piece) for piece in pieces
                      for child in _split_piece(split.pattern, compiled, text, piece, fixed, held, known)]
        out += pieces
    return out


def _inside(child: _Piece, parent: _Piece) -> _Piece:
    """`child` knowing the shapes of the growing pieces it lies in (an earlier split's piece holds it: every
    longer text's piece there begins with the parent's characters before it, then the child's)."""
    if child.status != GROWS or parent.status != GROWS:
        return child
    outer = parent.outer + (((parent.shape, parent.pattern, parent.start),) if parent.pattern else ())
    return replace(child, outer=outer)


def _char_spans(spans: list[tuple[int, int]], offsets: list[int]) -> list[tuple[int, int]]:
    """Byte spans as character spans (`offsets`: each character's byte offset)."""
    at = {offset: index for index, offset in enumerate(offsets)}
    return [(at[s], at[e]) for s, e in spans if s in at and e in at]


def _split_piece(pattern: str, compiled: Any, text: str, parent: _Piece, fixed: int,
                 held: Sequence[str] = (), known: int = 0) -> list[_Piece]:
    spans: list[tuple[int, int, bool]] = []  # (start, end, a match?)
    done = parent.start
    for m in compiled.finditer(text, parent.start, parent.end):
        if m.start() == m.end():
            continue
        if done < m.start():
            spans.append((done, m.start(), False))
        spans.append((m.start(), m.end(), True))
        done = m.end()
    if done < parent.end:
        spans.append((done, parent.end, False))
    if parent.status != GROWS:
        return [_Piece(s, e, parent.status) for s, e, _ in spans]
    wanted = sorted({a for s, e, is_match in spans
                     for a in ([s] if is_match else [*range(s, min(e, fixed)), e]) if a < len(text)})
    stops = dict(zip(wanted, reaches_of(pattern)(text, wanted, fixed).tolist()))  # (every attempt at once)
    for at in [a for a, stopped in stops.items() if not stopped and a < fixed]:
        stops[at] = _held_stops(pattern, compiled, text[:fixed], at, held) \
            or _first_alternative_stops(pattern, text[:fixed], at, fixed) \
            or _added_stops(pattern, compiled, text, at, fixed, known)

    def reach(at: int) -> bool:
        return bool(stops.get(at, at >= fixed))

    out: list[_Piece] = []
    for s, e, is_match in spans:
        if out and out[-1].status != CLOSED:
            out.append(_Piece(s, e, OPEN))
            continue
        if is_match:
            if reach(s):  # (the attempt found this match reading nothing appended text changes)
                out.append(_Piece(s, e, CLOSED))
            else:
                out.append(_kept_match(pattern, compiled, text, s, e, fixed))
            continue
        # (a stretch between matches: every attempt in it failed, and fails whatever follows)
        kept = all(reach(a) for a in range(s, min(e, fixed)))
        if e < fixed and kept and (reach(e) or _persists(pattern, compiled, text, e, fixed)):
            # (and the match after it starts where it did)
            out.append(_Piece(s, e, CLOSED))
        else:
            out.append(_Piece(s, e, GROWS, fixed, pattern=pattern) if kept and s < fixed <= e else _Piece(s, e, OPEN))
    return out


def _held_stops(pattern: str, compiled: Any, kept: str, at: int, held: Sequence[str]) -> bool:
    """Does the attempt at `at` find one same match, ending in the kept text (or none), whatever the one
    held-back character after it becomes (`held`: each thing it may be), reading nothing past it?"""
    return all(_attempt_stops(pattern, kept + ch, at, len(kept) + 1) for ch in held) \
        and _one_match(compiled, [kept + ch for ch in held], at, len(kept))


def _added_stops(pattern: str, compiled: Any, text: str, at: int, fixed: int, known: int) -> bool:
    """When the characters from `fixed` to `known` are kept out only because an added token may begin in them:
    does the attempt at `at` find one same match, ending in the kept text (or none), both when they are
    text and it reads nothing past them, and when the stretch ends where an added token would begin?"""
    return fixed < known and _attempt_stops(pattern, text[:known], at, known) \
        and _one_match(compiled, [text[:end] for end in range(fixed, known + 1)], at, fixed)


def _one_match(compiled: Any, texts: list[str], at: int, limit: int) -> bool:
    """Do the attempts at `at` in these texts find one same match ending by `limit` (or all none)?"""
    found = {m.span() if (m := compiled.match(t, at)) is not None and m.end() > at else None for t in texts}
    return len(found) == 1 and all(span is None or span[1] <= limit for span in found)


def _attempt_stops(pattern: str, text: str, at: int, end: int) -> bool:
    """Does the attempt at `at` find what it finds in every text that starts with `text[:end]`?"""
    return reach_of(pattern)(text, at, end) or _first_alternative_stops(pattern, text[:end], at, end)


def _first_alternative_stops(pattern: str, text: str, at: int, end: int) -> bool:
    """The engine tries the top-level alternatives in order and takes the first that matches: does each one
    up to the first that matches `text` at `at` stop reading before `end`? Then every longer text's attempt
    there fails in the same ones and finds the same match (the union of all paths may read further: a
    later alternative that would is never tried)."""
    for alternative in top_alternatives(pattern):
        try:
            if not reach_of(alternative)(text, at, end):
                return False
        except ValueError:
            return False  # (an alternative outside the subset the automaton follows: nothing is known)
        found = _compiled(alternative).match(text[:end], at)
        if found is not None:  # (checked against the whole pattern's match: a flag set for all would differ)
            whole = _compiled(pattern).match(text[:end], at)
            return whole is not None and whole.span() == found.span()
    return _compiled(pattern).match(text[:end], at) is None  # (all fail, reading only the kept text: for good)


_compiled: Callable[[str], Any] = lru_cache(maxsize=64)(regex.compile)  # (each alternative compiled once)


#: The one lookahead of the published patterns: a run of spaces gives its last one to what follows.
_SPACES_BUT_LAST = r"\s+(?!\S)"


def _kept_match(pattern: str, compiled: Any, text: str, start: int, end: int, fixed: int) -> _Piece:
    """The first match whose attempt reads past the kept text: what every longer text's match there holds."""
    kept_text = text[:fixed]
    if start >= fixed:
        return _Piece(start, end, OPEN)
    found = compiled.match(kept_text, start)
    if end < fixed:  # (it read past the kept text, yet ends before: a longer text's match holds it at least)
        chosen = alternative_at(pattern, kept_text, start, end) if found is not None and found.end() == end else None
        if chosen == _SPACES_BUT_LAST:
            return _Piece(start, end, OPEN)
        fixed = end
    else:
        chosen = alternative_at(pattern, kept_text, start, fixed) if found is not None and found.end() == fixed \
            else None
    alternatives = top_alternatives(pattern)
    if chosen is None or chosen not in alternatives:
        return _Piece(start, end, OPEN)
    keep, shape, short = fixed, chosen, None
    if chosen == _SPACES_BUT_LAST:  # (a lone space is kept whole: the other alternative, \s+, takes it)
        shape, short = r"\s+", (end - 1 if end - start >= 2 else None)
    live = [alt for alt in alternatives[:alternatives.index(chosen)] if not _fails_for_good(alt, kept_text, start)]
    if any(_NOT_GROWING.search(_CLASS.sub("C", alt)) for alt in [*live, shape]):
        return _Piece(start, end, OPEN)
    return _Piece(start, end, GROWS, keep, "|".join(f"(?:{alt})" for alt in [*live, shape]), short, pattern)


def _persists(pattern: str, compiled: Any, text: str, start: int, fixed: int) -> bool:
    """Does a match start at `start` in every longer text? It does on the kept text, by an alternative that,
    like every one before it that may match there, neither looks ahead, anchors nor is lazy."""
    kept_text = text[:fixed]
    found = compiled.match(kept_text, start)
    if found is None or found.end() == start:
        return False
    chosen = alternative_at(pattern, kept_text, start, found.end())
    alternatives = top_alternatives(pattern)
    if chosen is None or chosen not in alternatives:
        return False
    live = [alt for alt in alternatives[:alternatives.index(chosen)] if not _fails_for_good(alt, kept_text, start)]
    return not any(_NOT_GROWING.search(_CLASS.sub("C", alt)) for alt in [*live, chosen])


@lru_cache(maxsize=16)
def no_match_inside(pattern: str) -> Callable[[bytes], bool]:
    """For a stretch between `pattern`'s matches: can a stretch begin with these bytes? Not when the pattern
    matches (non-empty) at one of their characters: it would be tried there and start a match. Read only
    for a pattern that neither looks around, anchors nor is lazy (so a match found in a prefix stays one);
    for others every text may."""
    compiled = regex.compile(pattern)
    if _NOT_GROWING.search(_CLASS.sub("C", pattern)) or compiled.fullmatch("") is not None:
        return lambda data: True

    def fits(data: bytes) -> bool:
        text = codecs.getincrementaldecoder("utf-8")().decode(data, final=False)  # (a cut last character: left out)
        return not any((m := compiled.match(text, i)) is not None and m.end() > i for i in range(len(text)))
    return fits


@lru_cache(maxsize=64)
def mark_at(offset: int) -> Callable[[bytes], bool]:
    """Can a piece begin with these bytes when a mark stands at this byte of it in every longer text? Their
    character from there must be a mark (or, cut short, begin one)."""
    def fits(data: bytes) -> bool:
        rest = data[offset:offset + 4]
        if not rest:
            return True
        size = 1 if rest[0] < 0xC0 else 2 if rest[0] < 0xE0 else 3 if rest[0] < 0xF0 else 4
        if len(rest) < size:
            return rest in _mark_starts()
        try:
            return unicodedata.combining(rest[:size].decode("utf-8")) != 0
        except UnicodeDecodeError:
            return False
    return fits


@lru_cache(maxsize=1)
def _mark_starts() -> frozenset[bytes]:
    return frozenset(m.encode("utf-8")[:k] for m in marks() for k in range(1, len(m.encode("utf-8"))))


def _fails_for_good(alternative: str, text: str, start: int) -> bool:
    """Does `alternative` fail at `start` reading nothing past `text`'s end (so it fails in any longer text)?"""
    try:
        reach = reach_of(alternative)
    except ValueError:
        return False
    return regex.compile(alternative).match(text, start) is None and reach(text, start, len(text))


def settled(tokenizer: Tokenizer, text: str, model_text: str, pretokens: list[tuple[int, int]] | None,
            added: Sequence[tuple[int, int]] = (), token_ends: set[int] | None = None) -> Settled:
    """Where the first piece appended text may change starts (see the module docstring); `model_text`,
    `pretokens` and `added` (the added tokens it matched) are the trace's UTF-8 byte spans. Without
    `pretokens`, the pieces found here must at least end where tokens end (`token_ends`)."""
    plan = _split_plan(tokenizer)
    if plan is None:
        return Settled(0, None, "its pre-tokenizer is not one this proof follows")
    own = isinstance(tokenizer.split, FilePipeline) and tokenizer.pipeline is not None  # (its normalizer runs)
    desc = json.loads(tokenizer.loaded.pipeline) if own else {}
    reach = normalizer_reach(desc.get("normalizer"), text)
    if reach is None:
        return Settled(0, None, "its normalizer is not one this proof follows")
    by_normalizer, reach = reach, max(reach, _added_reach(tokenizer, text))
    kept = text[:len(text) - reach]
    normal = tokenizer.pipeline.normalizer if own and tokenizer.pipeline is not None else None
    kept_model = normal(kept) if normal is not None and kept else kept
    if not model_text.startswith(kept_model):
        return Settled(0, None, "its normalizer's output could not be followed")
    offsets = _byte_offsets(model_text)
    fixed = min(len(kept_model), len(model_text) - _added_reach(tokenizer, model_text, normalized=True))
    # (only a character the normalizer alone holds back: one an added token may take could become anything)
    held = held_back(desc.get("normalizer"), model_text, fixed) if by_normalizer == reach and fixed == len(kept_model) \
        else []
    # (or marks held back, after the kept text's last starter: whichever comes first is a mark, of some kind)
    marked = by_normalizer == reach and fixed == len(kept_model) and not held \
        and marks_follow(desc.get("normalizer"), text, model_text, reach, fixed)
    kinds = list(dict.fromkeys(ch for split in plan for ch in kinds_among(split.pattern, marks()))) if marked else held
    known = _known(normal, text, model_text, by_normalizer, fixed)
    pieces = _pieces(plan, model_text, fixed, _char_spans(list(added), offsets), kinds, known)
    spans = [(offsets[p.start], offsets[p.end]) for p in pieces]
    if pretokens is None:
        followed = token_ends is not None and all(end in token_ends for _, end in spans)
    else:
        followed = spans == pretokens or pretokens == [] and len(spans) <= 1
    if not followed:
        return Settled(0, None, "its pieces could not be followed")
    for piece, (start, _) in zip(pieces, spans):
        if piece.status == GROWS:
            short = offsets[piece.short] if piece.short is not None else None
            return Settled(start, offsets[piece.keep], shape=piece.shape, short=short, pattern=piece.pattern,
                           held=tuple(held), marked=marked, holds=by_normalizer, known=offsets[known],
                           held_marked=mark_after(model_text, fixed, held),
                           outer=tuple((shape, outer, offsets[at]) for shape, outer, at in piece.outer))
        if piece.status == OPEN:
            return Settled(start, None, holds=by_normalizer)
    return Settled(offsets[-1], None, holds=by_normalizer)


def _known(normal: Any, text: str, model_text: str, by_normalizer: int, fixed: int) -> int:
    """Characters of the model's text every longer text has, as text or inside an added token: those the
    normalizer alone keeps (past `fixed` when an added token may begin before them: they are still there)."""
    kept = text[:len(text) - by_normalizer]
    kept_model = normal(kept) if normal is not None and kept else kept
    return max(fixed, len(kept_model)) if model_text.startswith(kept_model) else fixed


def _byte_offsets(text: str) -> list[int]:
    """The UTF-8 byte offset of each character of `text`, and of its end."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sizes = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
    return [0, *np.cumsum(sizes).tolist()]


__all__ = ["Settled", "mark_at", "no_match_inside", "settled"]
