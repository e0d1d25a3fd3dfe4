"""Boundary explanations: why each pair of neighbouring tokens is not one token (docs/explain.md).

- `explain_loaded(tokenizer, text, ...)`: a preset or an opened file, through
  the same stages as its encode (stages/: special tokens, its pipeline or scheme,
  its merge order), each replayed by the stage kind it holds;
- `explain_merges(text, merges, scheme)`: typed byte-level rules in list order;
- `explain_chars(text, vocab, merges)`: typed character-level rules.

Each checks its ids against the normal encode's. The modules: replay.py (a
piece's merges replayed, every meeting recorded), causes.py (a boundary's
cause inside a piece), stages.py (what the stages did), alternatives.py (the
pattern alternative a pre-token matched), explain.py (the answer).

What it does not do: HTTP, limits (the web layer checks them first), traces.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from webapp.tokenizer.core.list_order.byte_level import compile_byte_merges
from webapp.tokenizer.core.list_order.char_level import bpe_encode_text, compile_char_merges
from webapp.tokenizer.errors import TokenizerError
from webapp.tokenizer.explain.explain import explain_stages, library_model_of, list_model, relabel
from webapp.tokenizer.explain.stages import char_stages, pipeline_stages, scheme_stages
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes
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
    """A preset or an opened file, as the stages of `stages_` run it; ids as its `encode` gives them."""
    text = validate_text(text)
    tok, split, model_stage = stages_.loaded, stages_.split, stages_.model
    if isinstance(split, WholeText):
        return explain_chars(text, tok.vocab, list(tok.merges), story=story)
    if isinstance(model_stage, LibraryOrder):
        model_ = model_stage.library
        rule_of = lambda r: tok.unit.file_rule(tok, r)  # noqa: E731
        fallback = frozenset(i for i in (model_.fallback or ()) if i is not None)
        model = library_model_of(model_.merges, rule_of, fallback)
    elif isinstance(model_stage, ListOrderBytes):
        mapping = dict(tok.id_map)
        for b in tok.unknown_bytes:
            if tok.unk_id is not None:
                mapping[b] = tok.unk_id
        model = list_model(model_stage.compiled.table, tok.merges.__getitem__, relabel(mapping))
        if tok.unknown_bytes and isinstance(split, PlaygroundSplit):
            raise _not_covered("a file with bytes it has no token for, split by a playground scheme")
    else:
        raise _not_covered("a character-level file in list order with a pipeline")
    ids = stages_.encode(text, allowed)
    if isinstance(split, FilePipeline):
        stages = pipeline_stages(tok, text, allowed)
    elif isinstance(model_stage, LibraryOrder):
        raise _not_covered("a Hugging Face file split by a playground scheme instead of its own pre-tokenizer")
    else:
        stages = scheme_stages(text, split.scheme, allowed, tok.special_tokens)
    answer = explain_stages(stages, model, "bytes", ids, story)
    if isinstance(split, FilePipeline):
        answer["model_text"] = stages.text
    return answer


def _not_covered(what: str) -> Exception:
    return TokenizerError(f"explain: {what} is not explained yet; encode it without explain", field="tokenizer")


def causes_of(answer: Mapping[str, Any]) -> Sequence[str]:
    """The cause of each boundary of an answer, in order (for tests and pages)."""
    return [b["cause"] for b in answer["boundaries"]]


__all__ = ["CAUSES", "causes_of", "explain_chars", "explain_loaded", "explain_merges"]
