"""Unreachable tokens: the tokens whose own text does not encode to exactly themselves.

Exact by construction: each token's text (its bytes decoded as UTF-8) is encoded through
the tokenizer's whole pipeline - the file's normalizer, added tokens and pre-tokenizer,
or the preset's split pattern, then the merges - with no special token recognised, the
same stages' `Tokenizer.encode` the API's tiktoken-like handle uses, and the ids compared with
`[id]`. Nothing is estimated or sampled: every token is encoded, one call each (the
encoders' caches make a 200,000-token vocabulary a few seconds; docs/performance.md).

A token whose bytes are not valid UTF-8 alone (half a character) has no text to encode:
it is listed in `partial`, never in `ids`.

Every unreachable token gets exactly one group, the first of these that holds; each is a
fact the caller can check by replaying it (tests/unit/tokenizer/vocab/test_vocab.py does):

- "special": a special or added token of the file; with special tokens off its text is
  encoded as ordinary text;
- "normalizer": the file's normalizer changes its text;
- "added_inside": its text contains an added token that the pipeline cuts out;
- "pre_tokenizer": the pre-tokenizer (or split pattern) cuts its text into several pieces;
- "inside": its text is one piece and the merges of that piece end in other tokens, while
  some rules take it as an operand (a longer token's rule uses it);
- "unused": the same, and no rule takes it as an operand.

What it does not do: decide when this runs as a job, or cache the answer (the web layer).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from webapp.tokenizer.hf.pipeline import Pipeline, compile_pipeline
from webapp.tokenizer.loaded import LoadedTokenizer
from webapp.tokenizer.stages.tokenizer import tokenizer_of
from webapp.tokenizer.pretokenize.pretokenized import split_text
from webapp.tokenizer.vocab.index import VocabIndex

#: The groups in the order they are tried, with what each one says (shown on the page).
GROUPS: tuple[tuple[str, str], ...] = (
    ("special", "special or added tokens: with special tokens off, their text is ordinary text"),
    ("normalizer", "changed by the normalizer: the file's normalizer rewrites their text"),
    ("added_inside", "an added token inside: the pipeline cuts an added token out of their text"),
    ("pre_tokenizer", "split by the pre-tokenizer: their text is cut into several pieces"),
    ("inside", "steps toward longer tokens: their own text merges into other tokens, "
               "but some rules take them as an operand"),
    ("unused", "never used: their own text merges into other tokens, and no rule uses them"),
)
GROUP_NAMES = tuple(name for name, _ in GROUPS)

Progress = Callable[[int, int], None]  # (tokens done, tokens in all)


@dataclass(frozen=True)
class Reach:
    """The unreachable tokens (`ids`), the partial ones, and each unreachable token's group."""

    ids: list[int]
    partial: list[int]
    groups: dict[str, list[int]] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"count": len(self.ids), "ids": self.ids, "partial": self.partial,
                "groups": {name: self.groups.get(name, []) for name in GROUP_NAMES}}


class TextView:
    """How the tokenizer's encode sees a text before the merges: its normalizer and its pieces."""

    def __init__(self, tok: LoadedTokenizer) -> None:
        self.tok = tok
        self.pipeline: Pipeline | None = compile_pipeline(tok.pipeline) if tok.pipeline else None
        self.scheme = tok.unit.own_scheme(tok) or "none"

    def normalized(self, text: str) -> str:
        normalizer = self.pipeline.normalizer if self.pipeline is not None else None
        return normalizer(text) if normalizer is not None else text

    def cut(self, text: str) -> tuple[int, int]:
        """(added tokens cut out, pieces for the model) of `text`, no special token allowed."""
        if self.pipeline is None:
            return 0, len(split_text(text, self.scheme)) if self.scheme != "none" else 1
        added = pieces = 0
        for added_id, value in self.pipeline.parts(text, frozenset()):
            if added_id is not None:
                added += 1
            else:
                pieces += len(value)
        return added, pieces


def encoder(tok: LoadedTokenizer, compiled: Any = None) -> Callable[[str], list[int]]:
    """The whole pipeline's encode with no special tokens (the tiktoken-like handle's `encode`)."""
    stages = tokenizer_of(tok, compiled=compiled)
    nothing: frozenset[str] = frozenset()
    return lambda text: stages.encode(text, nothing)


def self_ids(index: VocabIndex, encode: Callable[[str], list[int]], token_id: int) -> list[int] | None:
    """What the token's own text encodes to (None: its bytes are not UTF-8 alone)."""
    text = index.text(token_id)
    return None if text is None else encode(text)


def group_of(index: VocabIndex, tok: LoadedTokenizer, token_id: int, view: TextView | None = None) -> str:
    """The first group of GROUPS that holds for an unreachable token (see the module docstring)."""
    view = view if view is not None else TextView(tok)
    if token_id in index.special:
        return "special"
    text = index.text(token_id) or ""
    if view.normalized(text) != text:
        return "normalizer"
    added, pieces = view.cut(text)
    if added:
        return "added_inside"
    if pieces > 1:
        return "pre_tokenizer"
    return "inside" if index.used_by(token_id, some=0)[0] else "unused"


def unreachable(index: VocabIndex, tok: LoadedTokenizer, compiled: Any = None,
                progress: Progress | None = None, every: int = 10_000) -> Reach:
    """Every token encoded from its own text; the ones that do not give `[id]`, grouped."""
    encode = encoder(tok, compiled)
    view = TextView(tok)
    ids: list[int] = []
    partial: list[int] = []
    groups: dict[str, list[int]] = {name: [] for name in GROUP_NAMES}
    total = len(index.ids)
    data = index.data
    for done, token_id in enumerate(index.ids):
        if progress is not None and done % every == 0:
            progress(done, total)
        try:
            text = data[token_id].decode("utf-8")
        except UnicodeDecodeError:
            partial.append(token_id)
            continue
        got = encode(text)
        if len(got) != 1 or got[0] != token_id:
            ids.append(token_id)
            groups[group_of(index, tok, token_id, view)].append(token_id)
    return Reach(ids, partial, groups)
