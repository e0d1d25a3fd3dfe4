"""The stages before the model: special tokens, normalizer and pre-tokenizer, one class per way a file has them.

What it does not do: merge (models.py), choose the splitter (tokenizer.py's
`tokenizer_of` does, once) or HTTP.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Mapping, Protocol, TypeVar

from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.core.alphabet import model_piece
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.stages.models import ListOrderChars
from webapp.tokenizer.pieces import Pieces
from webapp.tokenizer.stages.special import encode_with_specials, split_special
from webapp.tokenizer.validation import validate_text


class SchemeModel(Protocol):
    """What a model offers a playground scheme (every model in models.py has it)."""

    def encode_pieces(self, text: str, scheme: str) -> list[int]: ...

    def encode_pieces_batch(self, texts: list[str], scheme: str) -> list[list[int]]: ...


class PipelineModel(Protocol):
    """What a model offers a tokenizer.json's pipeline (every model in models.py has it)."""

    def encode_parts(self, pipeline: hp.Pipeline, texts: list[str],
                     allowed: frozenset[str] | None) -> list[list[int]]: ...

    def known(self, piece: str) -> str: ...


_R = TypeVar("_R", covariant=True)


class SplitVisitor(Protocol[_R]):
    """One method per splitter: what a reader of the stages (the explanations) does with each kind.

    A splitter calls its own method (`visit`), so a reader needs no isinstance, and a new kind of
    splitter is a type error in every reader until the reader says what to do with it."""

    def playground_split(self, split: "PlaygroundSplit") -> _R: ...
    def file_pipeline(self, split: "FilePipeline") -> _R: ...
    def whole_text(self, split: "WholeText") -> _R: ...


class PlaygroundSplit:
    """Special tokens by `split_special`, then a playground scheme's split, each piece merged alone."""

    def __init__(self, model: SchemeModel, scheme: str, special_tokens: Mapping[str, int],
                 spell: Callable[[str], str]) -> None:
        self.model = model
        self.scheme = scheme
        self.special_tokens = special_tokens
        self.spell = spell  # (a piece as a library-order model reads it)

    def encode(self, text: str, allowed: frozenset[str] | None) -> list[int]:
        scheme = self.scheme
        return encode_with_specials(text, allowed or frozenset(), self.special_tokens,
                                    lambda part: self.model.encode_pieces(part, scheme))

    def encode_batch(self, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        """`encode` of each text; the ordinary parts of all of them go to the model together."""
        split = [split_special(text, allowed or frozenset()) for text in texts]
        ordinary = [part for parts in split for part, special in parts if not special]
        encoded = iter(self.model.encode_pieces_batch(ordinary, self.scheme))
        out: list[list[int]] = []
        for parts in split:
            ids: list[int] = []
            for part, special in parts:
                if special:
                    ids.append(self.special_tokens[part])
                else:
                    ids.extend(next(encoded))
            out.append(ids)
        return out

    def pieces(self, text: str, allowed: frozenset[str] | None, unit: str) -> Pieces:
        """The allowed special tokens as added tokens, the text between them split by the scheme ("none": one
        piece). Its pre-tokens: the pieces and the special tokens, none when nothing split the text."""
        spans: list[tuple[int, int]] = []
        strings: list[str] = []
        added: list[tuple[int, int, int]] = []
        offset = 0
        for part, special in split_special(text, allowed or frozenset()):
            if special:
                size = _size(part, unit)
                added.append((offset, offset + size, self.special_tokens[part]))
                offset += size
                continue
            for piece in split_text(part, self.scheme) if self.scheme != "none" else [part]:
                size = _size(piece, unit)
                spans.append((offset, offset + size))
                strings.append(piece)
                offset += size
        split = self.scheme != "none" or bool(added)
        pretokens = sorted([*spans, *((s, e) for s, e, _ in added)]) if split else []
        return Pieces(text, unit, spans, strings, added, pretokens, spell=self.spell)

    def visit(self, visitor: SplitVisitor[_R]) -> _R:
        return visitor.playground_split(self)


class FilePipeline:
    """A tokenizer.json's normalizer, added tokens and pre-tokenizer, then its model on each piece."""

    def __init__(self, model: PipelineModel, pipeline: hp.Pipeline, special_tokens: Mapping[str, int]) -> None:
        self.model = model
        self.pipeline = pipeline
        self.special_tokens = special_tokens

    def encode(self, text: str, allowed: frozenset[str] | None) -> list[int]:
        return self.model.encode_parts(self.pipeline, [validate_text(text)], allowed)[0]

    def encode_batch(self, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        return self.model.encode_parts(self.pipeline, [validate_text(text) for text in texts], allowed)

    def pieces(self, text: str, allowed: frozenset[str] | None, unit: str) -> Pieces:
        """The file's added tokens and pre-tokenizer's pieces, offsets in the text its model sees (normalized,
        prefixed); the pieces as the model reads them."""
        pipeline = self.pipeline
        parts: list[hp.Part] = [(aid, value) if aid is not None else (None, [self.model.known(p) for p in value])
                                for aid, value in pipeline.parts(text, allowed)]
        shown, spans, added = hp.layout(pipeline, parts, unit=unit)
        pieces = [piece for aid, value in parts if aid is None for piece in value]
        kept = [(span, piece) for span, piece in zip(spans, pieces) if span[1] > span[0]]
        spans = [span for span, _ in kept]
        return Pieces(shown, unit, spans, [piece for _, piece in kept], added,
                      sorted([*spans, *((s, e) for s, e, _ in added)]), rewritten=True, fuse_unk=pipeline.fuse_unk,
                      drop_unknown_first=True, spell=partial(model_piece, byte_level=pipeline.byte_level,
                                                             spelt_in_alphabet=pipeline.spelt_in_alphabet))

    def visit(self, visitor: SplitVisitor[_R]) -> _R:
        return visitor.file_pipeline(self)


class WholeText:
    """A character-level file without a pipeline: the whole text through its rules, no special tokens."""

    def __init__(self, model: ListOrderChars) -> None:
        self.model = model

    def encode(self, text: str, allowed: frozenset[str] | None) -> list[int]:
        return self.model.encode_whole(text)

    def encode_batch(self, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        return [self.encode(text, allowed) for text in texts]

    def pieces(self, text: str, allowed: frozenset[str] | None, unit: str) -> Pieces:
        """The whole text, one piece."""
        whole = [(0, _size(text, unit))] if text else []
        return Pieces(text, unit, whole, [text] if text else [], [], [])

    def visit(self, visitor: SplitVisitor[_R]) -> _R:
        return visitor.whole_text(self)


def _size(text: str, unit: str) -> int:
    return len(text.encode("utf-8", "surrogatepass")) if unit == "bytes" else len(text)


__all__ = ["FilePipeline", "PipelineModel", "PlaygroundSplit", "SchemeModel", "SplitVisitor", "WholeText"]
