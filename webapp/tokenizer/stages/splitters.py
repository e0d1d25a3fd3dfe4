"""The stages before the model: special tokens, normalizer and pre-tokenizer, one class per way a file has them.

What it does not do: merge (models.py), choose the splitter (tokenizer.py's
`tokenizer_of` does, once) or HTTP.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from typing import Mapping, Protocol, TypeVar

from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.stages.models import ListOrderChars, special_positions
from webapp.tokenizer.stages.special import encode_with_specials, split_special
from webapp.tokenizer.traces import EncodeTrace, TraceLimits
from webapp.tokenizer.validation import validate_text


class SchemeModel(Protocol):
    """What a model offers a playground scheme (every model in models.py has it)."""

    def encode_pieces(self, text: str, scheme: str) -> list[int]: ...

    def encode_pieces_batch(self, texts: list[str], scheme: str) -> list[list[int]]: ...

    def trace_scheme(self, text: str, scheme: str, allowed: frozenset[str],
                     limits: TraceLimits) -> tuple[EncodeTrace, list[int]]: ...


class PipelineModel(Protocol):
    """What a model offers a tokenizer.json's pipeline (every model in models.py has it)."""

    def encode_parts(self, pipeline: hp.Pipeline, text: str, allowed: frozenset[str] | None) -> list[int]: ...

    def trace_parts(self, pipeline: hp.Pipeline, text: str, allowed: frozenset[str] | None, limits: TraceLimits,
                    unit: str = ...) -> EncodeTrace: ...


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

    def __init__(self, model: SchemeModel, scheme: str, special_tokens: Mapping[str, int]) -> None:
        self.model = model
        self.scheme = scheme
        self.special_tokens = special_tokens

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

    def trace(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        return self.model.trace_scheme(text, self.scheme, allowed or frozenset(), limits)

    def trace_chars(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> EncodeTrace:
        raise ValueError("a playground scheme's trace is in bytes; the Characters page traces a file's pipeline")

    def visit(self, visitor: SplitVisitor[_R]) -> _R:
        return visitor.playground_split(self)


class FilePipeline:
    """A tokenizer.json's normalizer, added tokens and pre-tokenizer, then its model on each piece."""

    def __init__(self, model: PipelineModel, pipeline: hp.Pipeline, special_tokens: Mapping[str, int]) -> None:
        self.model = model
        self.pipeline = pipeline
        self.special_tokens = special_tokens

    def encode(self, text: str, allowed: frozenset[str] | None) -> list[int]:
        return self.model.encode_parts(self.pipeline, validate_text(text), allowed)

    def encode_batch(self, texts: list[str], allowed: frozenset[str] | None) -> list[list[int]]:
        return [self.encode(text, allowed) for text in texts]

    def trace(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        """Offsets in the text the model sees (`trace.text`); the added tokens found by their ids."""
        trace = self.model.trace_parts(self.pipeline, text, allowed, limits, "bytes")
        return trace, special_positions(trace, self.special_tokens)

    def trace_chars(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> EncodeTrace:
        return self.model.trace_parts(self.pipeline, text, allowed, limits, "chars")

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

    def trace(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> tuple[EncodeTrace, list[int]]:
        raise ValueError("a character-level file without a pipeline is traced by the Characters page's rules")

    def trace_chars(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits) -> EncodeTrace:
        raise ValueError("a character-level file without a pipeline is traced by the Characters page's rules")

    def visit(self, visitor: SplitVisitor[_R]) -> _R:
        return visitor.whole_text(self)


__all__ = ["FilePipeline", "PipelineModel", "PlaygroundSplit", "SchemeModel", "SplitVisitor", "WholeText"]
