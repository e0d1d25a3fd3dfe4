"""What each stage did to a text, as segments: special tokens, and pieces with their initial symbols.

What it does not do: merge (replay.py), decide causes (causes.py), or JSON.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from webapp.tokenizer.explain.alternatives import alternative_at
from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.core.alphabet import model_piece
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.pretokenize.patterns import PATTERNS
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.stages.models import library_model
from webapp.tokenizer.stages.special import split_special


@dataclass
class Piece:
    """One piece the model merges on its own."""

    start: int  # offset of the piece (unit of the tokens)
    symbols: list[int]  # initial symbols (the model's ids before any merge)
    sizes: list[int]  # each symbol's size in the unit
    text: str  # the piece as the pre-tokenizer gave it (before any byte-alphabet spelling)
    run: int  # pieces of one run (a stretch between special tokens) are cut by the pre-tokenizer
    alternative: str | None = None  # the pattern alternative that matched it
    whole: int | None = None  # ignore_merges: the piece is this one vocab token
    model_text: str = ""  # what the model reads (a byte-level file: the byte alphabet)


@dataclass
class Special:
    start: int
    end: int
    id: int
    text: str


@dataclass
class Stages:
    segments: list[Piece | Special] = field(default_factory=list)
    split: str = "none"  # the pre-tokenizer's name (a scheme, or the file's pre-tokenizer type)
    pattern: str | None = None  # the regex the alternatives come from
    text: str = ""  # the text the offsets index (the model's text for a tokenizer.json)


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogatepass")


def _alternatives(pattern: str | None, stretch: str, pieces: list[str]) -> list[str | None]:
    """The alternative of `pattern` each piece of `stretch` matched, where the pieces spell the stretch."""
    if pattern is None or "".join(pieces) != stretch:
        return [None] * len(pieces)
    out: list[str | None] = []
    at = 0
    for piece in pieces:
        out.append(alternative_at(pattern, stretch, at, at + len(piece)))
        at += len(piece)
    return out


def scheme_stages(text: str, scheme: str, allowed: frozenset[str], specials: dict[str, int]) -> Stages:
    """Byte-level list order: special tokens split out, each part pre-tokenized by `scheme`, bytes as symbols."""
    pattern = PATTERNS.get(scheme)
    out = Stages(split=scheme, pattern=pattern, text=text)
    offset = 0
    for run, (part, special) in enumerate(split_special(text, allowed)):
        size = len(_utf8(part))
        if special:
            out.segments.append(Special(offset, offset + size, specials[part], part))
            offset += size
            continue
        pieces = split_text(part, scheme)
        for piece, alt in zip(pieces, _alternatives(pattern, part, pieces)):
            data = _utf8(piece)
            out.segments.append(Piece(offset, list(data), [1] * len(data), piece, run, alt, model_text=piece))
            offset += len(data)
    return out


def char_stages(text: str) -> Stages:
    """Character-level rules without a file pipeline: the whole text is one piece of code points."""
    out = Stages(text=text)
    if text:
        out.segments.append(Piece(0, [ord(ch) for ch in text], [1] * len(text), text, 0, model_text=text))
    return out


def _split_regexes(node: Any) -> list[str]:
    if not isinstance(node, dict):
        return []
    if node.get("type") == "Sequence":
        return [p for child in node.get("pretokenizers", []) for p in _split_regexes(child)]
    pattern = node.get("pattern")
    if node.get("type") == "Split" and isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
        return [pattern["Regex"]]
    return []


def _pre_name(node: Any) -> str:
    if not isinstance(node, dict):
        return "none"
    if node.get("type") == "Sequence":
        return "+".join(_pre_name(child) for child in node.get("pretokenizers", []))
    return str(node.get("type"))


def pipeline_stages(tok: LoadedTokenizer, text: str, allowed: frozenset[str] | None) -> Stages:
    """A tokenizer.json through its own pipeline; byte offsets of the model's text (as its trace shows them).

    The symbols are the library model's (library order) or the piece's bytes (list order)."""
    pipeline = hp.compile_pipeline(tok.pipeline)
    desc = json.loads(tok.pipeline)
    regexes = _split_regexes(desc.get("pre_tokenizer"))
    out = Stages(split=_pre_name(desc.get("pre_tokenizer")), pattern=regexes[0] if regexes else None)
    model = library_model(tok) if tok.library_order else None
    unit = tok.unit.symbol_unit("bytes")
    drop = tok.unknown_bytes if tok.unk_id is None else frozenset()
    texts: list[str] = []
    offset = 0
    for run, (added_id, value) in enumerate(pipeline.parts(text, allowed)):
        if added_id is not None:
            size = len(_utf8(value))
            out.segments.append(Special(offset, offset + size, added_id, value))
            texts.append(value)
            offset += size
            continue
        stretch = "".join(value)
        alts: list[str | None] = [None] * len(value)
        for pattern in regexes:  # the first Split whose alternatives spell every piece
            found = _alternatives(pattern, stretch, value)
            if all(a is not None for a in found):
                alts = found
                break
        for piece, alt in zip(value, alts):
            data = pipeline.piece_bytes(piece)
            texts.append(data.decode("utf-8", "surrogatepass"))
            spelt = model_piece(piece, pipeline.byte_level, pipeline.spelt_in_alphabet)
            if model is not None:
                symbols, sizes = model.symbols(spelt, unit)
                whole = model.vocab.get(spelt) if model.ignore_merges else None
            else:
                kept = bytes(b for b in data if b not in drop) if drop else data
                symbols, sizes, whole = list(kept), [1] * len(kept), None
                if drop and sizes:
                    sizes[-1] += len(data) - len(kept)  # (dropped bytes: given to the last symbol)
            out.segments.append(Piece(offset, symbols, sizes, piece, run, alt, whole, spelt))
            offset += len(data)
    out.text = "".join(texts)
    return out


__all__ = ["Piece", "Special", "Stages", "char_stages", "pipeline_stages", "scheme_stages"]
