"""One side of a parity check, and what each of its stages made of one text (`View`).

A `Side` is made from a loaded tokenizer's stages (`side_of_tokenizer`) or typed byte-level merges
(`side_of_merges`); each stage's output comes from the stages the encode itself runs (the pipeline's
normalized stretches, the explanations' segments and replay), never from a second tokenizer.

What it does not do: compare two sides (attribute.py), name a merge rule (rules.py), HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges
from webapp.tokenizer.core.token_sizes import ImpliedVocab
from webapp.tokenizer.explain import loaded_stages, replay_model
from webapp.tokenizer.explain.explain import Model, list_model
from webapp.tokenizer.explain.stages import Piece, Special, Stages, scheme_stages
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode
from webapp.tokenizer.stages.special import split_special
from webapp.tokenizer.stages.splitters import FilePipeline, PlaygroundSplit, WholeText
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.validation import validate_text

#: (added token id, its content) or (None, a normalized stretch of text), in order.
Normalized = list[tuple[int | None, str]]


@dataclass(frozen=True)
class Side:
    """How one tokenizer runs each stage on a text."""

    label: str
    encode: Callable[[str], list[int]]  # the model's ids, special tokens included, no post-processor
    post: tuple[tuple[int, ...], tuple[int, ...]]  # the ids the post-processor puts before and after
    normalize: Callable[[str], Normalized]
    stages: Callable[[str], Stages]  # special tokens and pieces, with each piece's first symbols
    model: Model  # a piece's merges replayed (explain/explain.py)
    token_bytes: Callable[[list[int], int], dict[int, bytes]]  # {id: bytes} for ids of a text of n bytes
    order: str  # "library" (rank) or "list" (rule index)


@dataclass(frozen=True)
class View:
    """What each stage of one side made of one text."""

    normalized: Normalized
    segments: list[Piece | Special]
    model_text: bytes  # the text the model sees, as bytes (pieces and special tokens' text)
    ids: list[int]  # the model's ids (no post-processor)
    post: tuple[tuple[int, ...], tuple[int, ...]]  # the post-processor's ids before and after them
    tokens: list[bytes]  # each final id's bytes (special tokens: their text)

    @property
    def final(self) -> list[int]:
        """The ids with the post-processor's."""
        return [*self.post[0], *self.ids, *self.post[1]]

    @property
    def model_tokens(self) -> list[bytes]:
        """The bytes of the model's ids (without the post-processor's)."""
        first = len(self.post[0])
        return self.tokens[first:first + len(self.ids)]


def view_of(side: Side, text: str) -> View:
    """Every stage's output for `text` (the ids from the side's own encode)."""
    stages = side.stages(text)
    ids = side.encode(text)
    final = [*side.post[0], *ids, *side.post[1]]
    specials = {seg.id: seg.text.encode("utf-8", "surrogatepass") for seg in stages.segments
                if isinstance(seg, Special)}
    model_text = stages.text.encode("utf-8", "surrogatepass")
    known = side.token_bytes([i for i in final if i not in specials], len(model_text))
    tokens = [specials.get(i) or known.get(i) or b"" for i in final]
    return View(side.normalize(text), stages.segments, model_text, ids, side.post, tokens)


def side_of_tokenizer(tokenizer: Tokenizer, allowed: frozenset[str], label: str) -> Side:
    """A preset or an opened file, run as its `encode` runs it, special tokens split out when `allowed`."""
    pipeline = tokenizer.pipeline
    post = (tuple(pipeline.post_before), tuple(pipeline.post_after)) if pipeline is not None else ((), ())
    normalize = tokenizer.split.visit(_Normalizer(allowed))
    vocab = tokenizer.ordinary_bytes
    names = _added_names(tokenizer)

    def token_bytes(ids: list[int], _size: int) -> dict[int, bytes]:
        table = vocab()
        return {i: table[i] if i in table else names.get(i, b"") for i in ids}

    model = replay_model(tokenizer)
    loaded_stages(tokenizer, "", allowed)  # (a kind the explanations do not cover is refused here, at once)
    return Side(label, lambda text: tokenizer.encode(text, allowed), post, normalize,
                lambda text: loaded_stages(tokenizer, text, allowed), model, token_bytes, model.order)


def side_of_merges(merges: Any, scheme: str, label: str = "typed merges") -> Side:
    """Typed byte-level rules in list order, the text split by a playground `scheme`, no special tokens."""
    compiled = compile_byte_merges(merges)
    implied = ImpliedVocab(compiled.rules)

    def token_bytes(ids: list[int], size: int) -> dict[int, bytes]:
        return implied.bytes_for(ids, size) or {}

    model = list_model(compiled.table, compiled.rules.__getitem__, lambda i: i)
    return Side(label, lambda text: pretokenized_encode(text, compiled, scheme), ((), ()),
                lambda text: [(None, validate_text(text))] if text else [],
                lambda text: scheme_stages(validate_text(text), scheme, frozenset(), {}), model, token_bytes, "list")


def _added_names(tokenizer: Tokenizer) -> dict[int, bytes]:
    """The text of every special or added token, by id (the post-processor's ids among them)."""
    names = {i: name.encode("utf-8", "surrogatepass") for name, i in tokenizer.loaded.special_tokens.items()}
    if tokenizer.pipeline is not None:
        names.update({i: text.encode("utf-8", "surrogatepass") for i, text in tokenizer.pipeline.token_text.items()})
    return names


class _Normalizer:
    """A `SplitVisitor`: the normalizer's output for each way the text reaches the model."""

    def __init__(self, allowed: frozenset[str]) -> None:
        self.allowed = allowed

    def file_pipeline(self, split: FilePipeline) -> Callable[[str], Normalized]:
        allowed = self.allowed
        return lambda text: split.pipeline.normalized(validate_text(text), allowed)

    def playground_split(self, split: PlaygroundSplit) -> Callable[[str], Normalized]:
        allowed, specials = self.allowed, split.special_tokens
        return lambda text: [(specials[part] if special else None, part)
                             for part, special in split_special(validate_text(text), allowed) if part]

    def whole_text(self, split: WholeText) -> Callable[[str], Normalized]:
        return lambda text: [(None, validate_text(text))] if text else []


__all__ = ["Normalized", "Side", "View", "side_of_merges", "side_of_tokenizer", "view_of"]
