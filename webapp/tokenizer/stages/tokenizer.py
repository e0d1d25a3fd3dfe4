"""`Tokenizer`: one loaded tokenizer made of its stages, and `tokenizer_of`, the one place that chooses them.

What it does not do: parse files (formats/), HTTP, or the tiktoken API's
argument checks (api/encoding.py).

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence, Union

from webapp.tokenizer.hf import pipeline as hp
from webapp.tokenizer.loaded import LoadedTokenizer, Part
from webapp.tokenizer.pretokenize.patterns import check_scheme
from webapp.tokenizer.stages.models import LibraryOrder, ListOrderBytes, ListOrderChars
from webapp.tokenizer.stages.splitters import FilePipeline, PlaygroundSplit, WholeText
from webapp.tokenizer.traces import EncodeTrace, TraceLimits
from webapp.tokenizer.validation import validate_text

Model = Union[ListOrderBytes, ListOrderChars, LibraryOrder]
_MODEL: Part[Model] = Part("model")
_ORDINARY_BYTES: Part[dict[int, bytes]] = Part("ordinary bytes")
Splitter = Union[PlaygroundSplit, FilePipeline, WholeText]


@dataclass(frozen=True)
class Tokenizer:
    """A loaded tokenizer's stages: `split` (holding the `model`), the post-processor and the decoder."""

    loaded: LoadedTokenizer
    split: Splitter
    model: Model
    pipeline: hp.Pipeline | None  # a tokenizer.json's (its post-processor and decoder), None for other files

    def encode(self, text: str, allowed: frozenset[str] | None = None) -> list[int]:
        """The file's ids for `text`; `allowed`: the special tokens split out (None: the file's default,
        every added token of a tokenizer.json, none otherwise; a character-level file without a
        pipeline has none).

        >>> from webapp.tokenizer import load_preset, tokenizer_of
        >>> tokenizer_of(load_preset("cl100k_base")).encode("hello <|endoftext|>", frozenset({"<|endoftext|>"}))
        [15339, 220, 100257]
        """
        return self.split.encode(text, allowed)

    def encode_batch(self, texts: list[str], allowed: frozenset[str] | None = None) -> list[list[int]]:
        """`encode` of each text (split byte-level text: all of them together, which is faster than a loop)."""
        return self.split.encode_batch(texts, allowed)

    def trace(self, text: str, allowed: frozenset[str] | None, limits: TraceLimits,
              unit: str = "bytes") -> tuple[EncodeTrace, list[int]]:
        """The model's run over the pieces of `text`, recorded (offsets in the text the model sees, `trace.text`
        when that is not `text`; `unit` "bytes" for the Bytes page, "chars" for the Characters page), and
        the indexes of the added (special) tokens among its recorded tokens."""
        if not (self.on_bytes_page if unit == "bytes" else self.on_chars_page):
            raise ValueError(f"the {unit} page does not show this tokenizer ({self.model.kind})")
        return self.model.record(self.split.pieces(validate_text(text), allowed, unit), limits)

    def shows_on(self, page: str) -> bool:
        """Can the page ("bytes" or "chars") run its model (byte-level rules or any file in the library's
        order on the Bytes page; character-level rules on the Characters page)?"""
        return page in self.model.pages

    @property
    def on_bytes_page(self) -> bool:
        """Can the Bytes page show it?"""
        return self.shows_on("bytes")

    @property
    def on_chars_page(self) -> bool:
        """Is it a character-level file the Characters page traces through the file's own pipeline?"""
        return self.shows_on("chars") and isinstance(self.split, FilePipeline)

    @property
    def takes_page_scheme(self) -> bool:
        """Can a page's scheme split its text instead (byte-level rules)? A character-level file is split
        by its own pipeline, or not at all, whatever scheme the page names."""
        return self.loaded.unit.takes_page_scheme

    @property
    def writes_metaspace(self) -> bool:
        """A SentencePiece-style file (its text seen with spaces as "\u2581"): a trace spells its tokens so."""
        return self.loaded.unit.writes_metaspace(self.loaded)

    def post_process(self, ids: list[int]) -> list[int]:
        """What the file's post-processor adds around a single text's ids (the library's add_special_tokens)."""
        if self.pipeline is None or not (self.pipeline.post_before or self.pipeline.post_after):
            return ids
        return [*self.pipeline.post_before, *ids, *self.pipeline.post_after]

    def decode(self, ids: Sequence[int], *, skip_special: bool = True, max_bytes: int | None = None) -> str:
        """The library's `decode(ids, skip_special_tokens=skip_special)` through the file's decoder
        (`max_bytes`: refuse a longer output before it is joined; the web routes' LIMIT_DECODE_BYTES)."""
        if self.pipeline is None:
            raise ValueError("decode through a decoder needs a tokenizer.json pipeline")
        return hp.decode_ids(self.pipeline, ids, self.loaded.unit.name_lookup(self.loaded), skip_special=skip_special,
                             max_bytes=max_bytes)

    def ordinary_bytes(self) -> dict[int, bytes]:
        """{id: bytes} of the tokens text is merged into (no special tokens), made once."""
        return self.loaded.built.get(_ORDINARY_BYTES, self.model.ordinary_bytes)

    @property
    def sentencepiece(self) -> bool:
        """Is the file's model a SentencePiece model (scores, control pieces)?"""
        return '"type":"SentencePiece"' in self.loaded.pipeline

    @property
    def special_default(self) -> str:
        """The API's default for `allowed_special`: "all" for a tokenizer.json's pipeline (the library splits
        its added tokens out), "none" otherwise and for a SentencePiece model (its `encode` reads control
        pieces' text as plain text; user-defined pieces are not special and always match), and for a GGUF
        file (llama.cpp tokenizes with `parse_special` off unless asked)."""
        if not isinstance(self.split, FilePipeline) or self.sentencepiece or self.loaded.source == "gguf":
            return "none"
        return "all"

    def typed_offsets(self, text: str) -> list[int] | None:
        """For a SentencePiece model's pipeline: for each UTF-8 byte offset of the text its model sees (and
        its end), the byte offset in `text` it comes from, as sentencepiece's `norm_to_orig` (a token's span
        in the typed text is then [offsets[start], offsets[end])). None for other tokenizers."""
        if not isinstance(self.split, FilePipeline) or not self.sentencepiece:
            return None
        alignment = getattr(self.split.pipeline.normalizer, "alignment", None)
        return alignment(validate_text(text))[1] if alignment is not None else None

    def stages(self) -> dict[str, str]:
        """What each stage is, by name (the page's status line and the explanations name them)."""
        pipeline = self.pipeline
        split = self.split
        return {
            "special_tokens": "the file's added tokens" if pipeline is not None else
                              ("none" if isinstance(split, WholeText) else "split out when allowed"),
            "normalizer": type(pipeline.normalizer).__name__ if pipeline is not None and pipeline.normalizer else "none",
            "pre_tokenizer": ("the file's own" if pipeline is not None else
                              split.scheme if isinstance(split, PlaygroundSplit) else "none"),
            "model": self.model.kind,
            "post_processor": "adds ids" if pipeline is not None and (pipeline.post_before or pipeline.post_after)
                              else "none",
            "decoder": "the file's own" if pipeline is not None and pipeline.decoder else "bytes joined",
        }


def tokenizer_of(tok: LoadedTokenizer, scheme: str | None = None, compiled: Any = None) -> Tokenizer:
    """The stages of `tok`, split by its own pipeline or scheme, or by the playground `scheme` chosen instead.

    >>> from webapp.tokenizer import load_preset, tokenizer_of
    >>> tokenizer_of(load_preset("cl100k_base")).stages()["model"]
    'list order, bytes'
    """
    own = scheme is None or scheme == tok.pretokenize
    if not own:
        check_scheme(scheme)  # (before it becomes a key: only the few known schemes are ever kept)
    model = tok.built.get(_MODEL, lambda: _model_of(tok, compiled))
    if compiled is not None and isinstance(model, ListOrderBytes):
        model.offer(compiled)
    chosen = None if own else scheme
    return tok.built.get(Part("stages", chosen), lambda: _stages_of(tok, model, chosen))


def build_tokenizer(tok: LoadedTokenizer, scheme: str | None = None, compiled: Any = None) -> Tokenizer:
    """`tokenizer_of` made anew, kept nowhere: a model of its own (for benchmarks that time a cold model)."""
    own = scheme is None or scheme == tok.pretokenize
    if not own:
        check_scheme(scheme)
    return _stages_of(tok, _model_of(tok, compiled), None if own else scheme)


def needs_compiled(tok: LoadedTokenizer) -> bool:
    """Does this tokenizer's model run on a compiled rule list (byte-level rules in list order)?"""
    return not tok.model and tok.level == "bytes"


def _model_of(tok: LoadedTokenizer, compiled: Any) -> Model:
    if tok.model:  # a Hugging Face file's options: the library's order
        return LibraryOrder(tok)
    if needs_compiled(tok):
        return ListOrderBytes(tok, compiled)
    return ListOrderChars(tok)


def _stages_of(tok: LoadedTokenizer, model: Model, scheme: str | None) -> Tokenizer:
    pipeline = hp.compile_pipeline(tok.pipeline) if tok.pipeline else None
    split: Splitter
    if pipeline is not None and scheme is None:
        split = FilePipeline(model, pipeline, tok.special_tokens)
    elif isinstance(model, ListOrderChars) and pipeline is None:
        split = WholeText(model)
    else:
        split = PlaygroundSplit(model, scheme or tok.pretokenize, tok.special_tokens, tok.unit.spell)
    return Tokenizer(tok, split, model, pipeline)


__all__ = ["Model", "Splitter", "Tokenizer", "build_tokenizer", "needs_compiled", "tokenizer_of"]
