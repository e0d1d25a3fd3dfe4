"""Boundary explanations: why each pair of neighbouring tokens is not one token (docs/explain.md).

`explain_loaded` (a preset or an opened file, through the same stages as its
encode), `explain_merges` (typed byte-level rules) and `explain_chars` (typed
character-level rules); each checks its ids against the normal encode's.

What it does not do: HTTP, limits (the web layer checks them first), traces.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges
from webapp.tokenizer.core.list_order.char_level import bpe_encode_text, compile_char_merges
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.explain.explain import Model, explain_stages, library_model_of, list_model, relabel
from webapp.tokenizer.explain.stages import Stages, char_stages, pipeline_stages, scheme_stages
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes, ListOrderChars
from webapp.tokenizer.stages.splitters import FilePipeline, PlaygroundSplit, WholeText
from webapp.tokenizer.stages.tokenizer import Tokenizer
from webapp.tokenizer.pretokenize.pretokenized import pretokenized_encode
from webapp.tokenizer.validation import validate_text

CAUSES = ("special", "normalizer", "pre_tokenizer", "byte_fallback", "no_rule", "blocked", "overlap", "made_later")


def explain_merges(text: str, merges: Any, scheme: str = "none", *, story: int | None = None) -> dict[str, Any]:
    """Typed byte-level rules (validated or compiled) in list order, text split by `scheme`."""
    compiled = compile_byte_merges(merges)
    ids = pretokenized_encode(text, compiled, scheme)
    rules = compiled.rules
    model = list_model(compiled.table, rules.__getitem__, lambda i: i)
    return explain_stages(scheme_stages(validate_text(text), scheme, frozenset(), {}), model, "bytes", ids, story)


def explain_chars(text: str, vocab: Mapping[str, int], merges: Any, *, story: int | None = None) -> dict[str, Any]:
    """Typed character-level rules and a vocab: offsets in code points, ids from the vocab."""
    ids = bpe_encode_text(text, vocab, merges)  # (raises for a token missing from the vocab, naming it)
    compiled = compile_char_merges(merges)
    model = list_model(compiled.table, compiled.int_rules.__getitem__, lambda i: vocab.get(compiled.string(i), -1))
    answer = explain_stages(char_stages(validate_text(text)), model, "chars", None, story)
    answer["ids"] = [t["id"] for t in answer["tokens"]]
    if answer["ids"] != ids:
        raise AssertionError("the character replay differs from bpe_encode_text")
    return answer


def explain_loaded(stages_: Tokenizer, text: str, allowed: frozenset[str], *,
                   story: int | None = None) -> dict[str, Any]:
    """A preset or an opened file, as the stages of `stages_` run it; ids as its `encode` gives them.

    Each stage answers through its `visit` (no isinstance here): the splitter
    says how the text reached the model, the model how its pieces merge."""
    return stages_.split.visit(_LoadedExplainer(stages_, validate_text(text), allowed, story))


class _LoadedExplainer:
    """A `SplitVisitor`: the explanation of a text, for each way the text reaches the model."""

    def __init__(self, tokenizer: Tokenizer, text: str, allowed: frozenset[str], story: int | None) -> None:
        self.tokenizer, self.text, self.allowed, self.story = tokenizer, text, allowed, story

    def whole_text(self, split: WholeText) -> dict[str, Any]:
        tok = self.tokenizer.loaded
        return explain_chars(self.text, tok.vocab, list(tok.merges), story=self.story)

    def file_pipeline(self, split: FilePipeline) -> dict[str, Any]:
        model = self.tokenizer.model.visit(_ReplayModel(self.tokenizer.loaded))
        ids = self.tokenizer.encode(self.text, self.allowed)
        stages = pipeline_stages(self.tokenizer.loaded, self.text, self.allowed)
        answer = explain_stages(stages, model, "bytes", ids, self.story)
        answer["model_text"] = stages.text
        return answer

    def playground_split(self, split: PlaygroundSplit) -> dict[str, Any]:
        tok = self.tokenizer.loaded
        model = self.tokenizer.model.visit(_ReplayModel(tok))
        if model.order == "list" and tok.unknown_bytes:
            raise _not_covered("a file with bytes it has no token for, split by a playground scheme")
        ids = self.tokenizer.encode(self.text, self.allowed)
        if model.order == "library":
            raise _not_covered("a Hugging Face file split by a playground scheme instead of its own pre-tokenizer")
        stages = scheme_stages(self.text, split.scheme, self.allowed, tok.special_tokens)
        return explain_stages(stages, model, "bytes", ids, self.story)


def replay_model(tokenizer: Tokenizer) -> Model:
    """How the model stage of `tokenizer` merges one piece, replayed in its ids (for readers beside the
    explanations: the parity lab names a merge rule with it)."""
    return tokenizer.model.visit(_ReplayModel(tokenizer.loaded))


def loaded_stages(tokenizer: Tokenizer, text: str, allowed: frozenset[str]) -> Stages:
    """What the stages before the model did to `text` (its special tokens, its pieces with their first
    symbols), as `explain_loaded` sees them."""
    return tokenizer.split.visit(_StagesOf(tokenizer, validate_text(text), allowed))


class _StagesOf:
    """A `SplitVisitor`: the segments of a text, for each way the text reaches the model."""

    def __init__(self, tokenizer: Tokenizer, text: str, allowed: frozenset[str]) -> None:
        self.tokenizer, self.text, self.allowed = tokenizer, text, allowed

    def whole_text(self, split: WholeText) -> Stages:
        raise _stages_unread("a character-level file without a pipeline")

    def file_pipeline(self, split: FilePipeline) -> Stages:
        return pipeline_stages(self.tokenizer.loaded, self.text, self.allowed)

    def playground_split(self, split: PlaygroundSplit) -> Stages:
        tok = self.tokenizer.loaded
        if tok.library_order:
            raise _stages_unread("a Hugging Face file split by a playground scheme instead of its own pre-tokenizer")
        if tok.unknown_bytes:
            raise _stages_unread("a file with bytes it has no token for, split by a playground scheme")
        return scheme_stages(self.text, split.scheme, self.allowed, tok.special_tokens)


def _stages_unread(what: str) -> Exception:
    return TokenizerError(f"tokenizer: the stages of {what} cannot be read one by one yet; use its own "
                          "pre-tokenization", field="tokenizer")


class _ReplayModel:
    """A `ModelVisitor`: the explanations' replay of a model stage's merges, in the file's ids."""

    def __init__(self, tok: LoadedTokenizer) -> None:
        self.tok = tok

    def in_library_order(self, model: LibraryOrder) -> Model:
        tok = self.tok
        fallback = frozenset(i for i in (model.library.fallback or ()) if i is not None)
        return library_model_of(model.library.merges, lambda r: tok.unit.file_rule(tok, r), fallback)

    def in_list_order_bytes(self, model: ListOrderBytes) -> Model:
        tok = self.tok
        mapping = dict(tok.id_map)
        for b in tok.unknown_bytes:
            if tok.unk_id is not None:
                mapping[b] = tok.unk_id
        return list_model(model.compiled.table, tok.merges.__getitem__, relabel(mapping))

    def in_list_order_chars(self, model: ListOrderChars) -> Model:
        raise _not_covered("a character-level file in list order with a pipeline")


def _not_covered(what: str) -> Exception:
    return TokenizerError(f"explain: {what} is not explained yet; encode it without explain", field="tokenizer")


def causes_of(answer: Mapping[str, Any]) -> Sequence[str]:
    """The cause of each boundary of an answer, in order (for tests and pages)."""
    return [b["cause"] for b in answer["boundaries"]]


__all__ = ["CAUSES", "causes_of", "explain_chars", "explain_loaded", "explain_merges", "loaded_stages", "replay_model"]
