"""The stage half of the prompt-end proof: which leading pieces no appended text can change.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

import numpy as np
import regex

from webapp.tokenizer.explain.alternatives import alternative_at, top_alternatives
from webapp.tokenizer.pretokenize.patterns import GPT2_PATTERN, PATTERNS
from webapp.tokenizer.loaded import Part
from webapp.tokenizer.stages.splitters import FilePipeline, PlaygroundSplit
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.vocab.pieces import reach_of, reaches_of

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


def _normalizer_reach(node: Any, text: str) -> int | None:
    """How many characters at the end of `text` appended text could change through the normalizer
    (None: a normalizer this proof does not follow)."""
    if not node:
        return 0
    kind = node.get("type")
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        at = _last_starter(text)
        composes = kind in ("NFC", "NFKC") and at < len(text) and _composes_first(text[at])
        return len(text) - at if composes else max(len(text) - at - 1, 0)
    if kind in ("Lowercase", "Prepend"):
        return 0
    if kind == "Replace" and "String" in node.get("pattern", {}):
        return max(len(node["pattern"]["String"]) - 1, 0)
    if kind == "Strip" and not node.get("strip_right", True):
        return 0
    if kind == "SentencePiece" and not node.get("charsmap") and not node.get("remove_extra_whitespaces") \
            and not node.get("treat_whitespace_as_suffix"):
        return 0  # (escaping spaces and a dummy prefix change no character by what follows it)
    if kind == "Sequence":
        reaches = [_normalizer_reach(child, text) for child in node.get("normalizers", [])]
        if any(r is None for r in reaches) or sum(1 for r in reaches if r) > 1:
            return None
        return max([r for r in reaches if r is not None], default=0)
    return None


def _held(node: Any, model_text: str, fixed: int) -> list[str]:
    """What the one character an NFC or NFKC normalizer holds back (the model's text's last) may become
    in a longer text: itself or a character it composes into. Empty when that is not the case."""
    kinds = {n.get("type") for n in (node.get("normalizers", []) if node and node.get("type") == "Sequence"
                                     else [node]) if n}
    if fixed != len(model_text) - 1 or not kinds or not kinds <= {"NFC", "NFKC"}:
        return []
    last = model_text[-1]
    if unicodedata.combining(last):
        return []  # (a mark held back may be reordered after another one: anything may stand there)
    return [last, *compositions(last)]


def _last_starter(text: str) -> int:
    """The text's last starter (combining class 0) that does not compose with its left neighbour: no
    following character reorders anything before it, or composes with anything but it."""
    at = len(text)
    while at > 0:
        at -= 1
        ch = text[at]
        if unicodedata.combining(ch) == 0 and (at == 0 or len(unicodedata.normalize("NFC", text[at - 1:at + 1])) == 2):
            return at
    return 0


def _composes_first(ch: str) -> bool:
    """Can `ch` be the first of two characters that compose (a following character then changes it)?"""
    code = ord(ch)
    if 0x1100 <= code <= 0x1112 or 0xAC00 <= code <= 0xD7A3 and (code - 0xAC00) % 28 == 0:
        return True  # (a Hangul leading consonant takes a vowel; a syllable without a final takes one)
    return ch in _composition_firsts()


@lru_cache(maxsize=1)
def _composition_firsts() -> frozenset[str]:
    """Every character that begins a canonical composition (made once, from Python's Unicode tables)."""
    firsts = set()
    for code in range(0x110000):
        ch = chr(code)
        mapping = unicodedata.decomposition(ch)
        if mapping and not mapping.startswith("<") and len(mapping.split()) == 2 \
                and unicodedata.normalize("NFC", ch) == ch:  # (not excluded from composition)
            firsts.add(chr(int(mapping.split()[0], 16)))
    return frozenset(firsts)


@lru_cache(maxsize=1)
def _by_first() -> dict[str, list[str]]:
    """Every character with a canonical decomposition, by the first character of that decomposition."""
    out: dict[str, list[str]] = {}
    for code in range(0x110000):
        ch = chr(code)
        parts = unicodedata.normalize("NFD", ch)
        if parts != ch and not 0xD800 <= code < 0xE000 and unicodedata.normalize("NFC", ch) == ch:
            out.setdefault(parts[0], []).append(ch)
    return out


def compositions(ch: str) -> list[str]:
    """The characters `ch` composes into with marks after it (NFC: "e" + U+0301 is "é")."""
    own = unicodedata.normalize("NFD", ch)
    return [d for d in _by_first().get(own[0], []) if d != ch and unicodedata.normalize("NFD", d).startswith(own)
            and unicodedata.normalize("NFC", ch + unicodedata.normalize("NFD", d)[len(own):]) == d]


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


def _pieces(plan: list[_Split], text: str, fixed: int, added: list[tuple[int, int]],
            held: Sequence[str] = ()) -> list[_Piece]:
    """The pieces of `text` (character spans) with their status, split by each pattern in turn; `fixed`:
    the characters of `text` every longer text keeps (`held`: what the one character it holds back may
    become). Stretches between matched added tokens are split on their own; those before the last added
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
            pieces = [child for piece in pieces
                      for child in _split_piece(split.pattern, compiled, text, piece, fixed, held)]
        out += pieces
    return out


def _char_spans(spans: list[tuple[int, int]], offsets: list[int]) -> list[tuple[int, int]]:
    """Byte spans as character spans (`offsets`: each character's byte offset)."""
    at = {offset: index for index, offset in enumerate(offsets)}
    return [(at[s], at[e]) for s, e in spans if s in at and e in at]


def _split_piece(pattern: str, compiled: Any, text: str, parent: _Piece, fixed: int,
                 held: Sequence[str] = ()) -> list[_Piece]:
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
    if held:  # (an attempt that reads the held-back character stops there whatever it becomes: it is kept)
        one = reach_of(pattern)
        for at in [a for a, stopped in stops.items() if not stopped and a < fixed]:
            stops[at] = all(one(text[:fixed] + ch, at, fixed + 1) for ch in held)

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
            out.append(_Piece(s, e, GROWS, fixed) if kept and s < fixed <= e else _Piece(s, e, OPEN))
    return out


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
    reach = _normalizer_reach(desc.get("normalizer"), text)
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
    held = _held(desc.get("normalizer"), model_text, fixed) if by_normalizer == reach == 1 and fixed == len(kept_model) \
        else []
    pieces = _pieces(plan, model_text, fixed, _char_spans(list(added), offsets), held)
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
                           held=tuple(held))
        if piece.status == OPEN:
            return Settled(start, None)
    return Settled(offsets[-1], None)


def _byte_offsets(text: str) -> list[int]:
    """The UTF-8 byte offset of each character of `text`, and of its end."""
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    sizes = 1 + (codes >= 0x80) + (codes >= 0x800) + (codes >= 0x10000)
    return [0, *np.cumsum(sizes).tolist()]


__all__ = ["Settled", "settled"]
