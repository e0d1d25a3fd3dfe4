"""Which tokenizer a page uses: the one place that decides, for every handler.

A Bytes or Characters page state can name three sources of merges:

- typed: the Merges (and, on Characters, Vocab) fields;
- preset: a real tokenizer shipped with the app (`tokenizer=cl100k_base`);
- file: a tokenizer file the user opened (`tokenizer=<stored id>`).

`resolve(tool, state)` picks exactly one; the encode, decode, "Decode these
ids", "Add missing tokens" and ids-download handlers all ask it, so they can
never disagree (a file open while the decode panel still uses the typed vocab,
say). When a preset or file is active, the typed fields are inactive: the
templates show them so and nothing reads them.

This module only dispatches; parsing stays in `webapp.infra.inputs`, stored files in
`webapp.tokenizers.store`, presets in `webapp.tokenizer.presets`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from webapp.infra import inputs
from webapp.tokenizers import store as tokenizer_store
from webapp import tokenizer as tk
from webapp.tokenizer import TokenizerError, presets
from webapp.tokenizer.pretokenize import pretokenized_encode, pretokenized_encode_trace, split_text


@dataclass(frozen=True)
class ActiveTokenizer:
    """The tokenizer in use: source is "typed", "preset" or "file"; ref names the preset / stored id."""

    source: str
    level: str  # "bytes" | "chars"
    ref: str = ""
    special: Any = ()  # allowed special tokens of a preset or file: () plain text, "all" recognized

    @property
    def typed(self) -> bool:
        return self.source == "typed"


def is_preset(ref: str) -> bool:
    return presets.is_preset(ref)


def resolve(tool: str, state: Mapping[str, Any]) -> ActiveTokenizer:
    """The active tokenizer of a page state (the `tokenizer` field wins over typed fields)."""
    level = "chars" if tool == "chars" else "bytes"
    ref = state.get("tokenizer") or ""
    ref = ref.strip() if isinstance(ref, str) else ""
    if not ref:
        return ActiveTokenizer("typed", level)
    try:
        special = inputs.read_allowed_special(state.get("special", "")) if level == "bytes" else ()
    except TokenizerError:
        special = ()  # the checkbox only ever sends "all"; anything else means plain text
    return ActiveTokenizer("preset" if is_preset(ref) else "file", level, ref, special)


# --- byte level --------------------------------------------------------------


def byte_trace(active: ActiveTokenizer, text: str, merges: Any, scheme: str, *,
               max_steps: int, max_tokens: int, max_sequence: int) -> tuple[Any, dict[int, bytes] | None]:
    """The encode trace and, for a preset or file, the vocab its ids decode with (None: typed merges)."""
    caps = {"max_steps": max_steps, "max_tokens": max_tokens, "max_sequence": max_sequence}
    if not active.typed:  # webapp.tokenizers.store serves presets by name and opened files by id
        return tokenizer_store.page_encode_trace(active.ref, text, scheme, special=active.special, **caps)
    if scheme != "none":
        return pretokenized_encode_trace(text, merges, scheme, max_steps=max_steps, max_tokens=max_tokens,
                                         max_sequence=max_sequence), None
    return tk.encode_trace(text, merges, max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence), None


# Typing into a long text with a preset or file, while the Trace view is not
# shown: the page needs every id but only the first `max_tokens` token spans.
# The ids come from the fast encoder; the spans from a trace of a prefix of the
# text (cut at a pre-token boundary), used only when its ids are
# exactly the first ids of the whole text (else the whole text is traced).
PREFIX_TRACE_MIN_CHARS = 5000
_PREFIX_MARGIN = 64  # extra tokens traced past the last one shown


def prefix_byte_trace(active: ActiveTokenizer, text: str, scheme: str, *,
                      max_tokens: int, max_sequence: int) -> tuple[Any, dict[int, bytes] | None] | None:
    """(trace with all ids but spans of a prefix, vocab), or None when that would not help or not match."""
    if active.typed or scheme == "none" or len(text) < PREFIX_TRACE_MIN_CHARS:
        return None
    ids = byte_ids(active, text, None, scheme)
    if len(ids) <= max_tokens + _PREFIX_MARGIN:
        return None
    size = 4 * (max_tokens + _PREFIX_MARGIN)
    while size < len(text) // 2:
        cut = 0
        for pretoken in split_text(text[: size + 256], scheme):
            cut += len(pretoken)
            if cut >= size:
                break
        trace, vocab = tokenizer_store.page_encode_trace(active.ref, text[:cut], scheme, special=active.special, max_steps=0,
                                               max_tokens=max_tokens + _PREFIX_MARGIN, max_sequence=max_sequence)
        if len(trace.ids) >= max_tokens + _PREFIX_MARGIN:
            shown = trace.tokens[:max_tokens]
            if [t.id for t in shown] != ids[: len(shown)]:
                return None
            return dataclasses.replace(trace, ids=ids, tokens=shown, tokens_truncated=True), vocab
        size *= 2
    return None


def byte_ids(active: ActiveTokenizer, text: str, merges: Any, scheme: str) -> list[int]:
    """All ids of `text` with the active tokenizer (no trace, no caps)."""
    if not active.typed:
        return tokenizer_store.page_encode_ids(active.ref, text, scheme, special=active.special)
    return pretokenized_encode(text, merges, scheme)


def byte_vocab(active: ActiveTokenizer) -> dict[int, bytes]:
    """The {id: bytes} a preset or file decodes with (typed merges: use the Vocab field instead)."""
    if not active.typed:
        entry = tokenizer_store.load_tokenizer(active.ref)
        if entry.tok.level != "bytes":
            raise TokenizerError(
                "tokenizer: this is a character-level tokenizer; open it on the Characters page", field="tokenizer"
            )
        return entry.file_vocab or {}
    raise ValueError("typed merges have no stored vocab")


def own_pretokenize(active: ActiveTokenizer) -> str | None:
    """The pre-tokenization a byte-level preset or file comes with (None: typed merges, or unknown)."""
    if active.typed:
        return None
    try:
        tok = tokenizer_store.load_tokenizer(active.ref).tok
    except TokenizerError:
        return None
    return tok.pretokenize if tok.level == "bytes" else None


def special_ids(active: ActiveTokenizer) -> frozenset[int]:
    """Ids of the active preset's or file's special tokens (styled apart in the spans)."""
    if active.typed:
        return frozenset()
    return tokenizer_store.page_special_ids(active.ref)


# --- character level -----------------------------------------------------------


def char_parts(active: ActiveTokenizer) -> tuple[Any, dict[str, int]]:
    """(merges, vocab) of an opened character-level file."""
    return tokenizer_store.page_char_tokenizer(active.ref)


def char_trace(active: ActiveTokenizer, text: str, *, max_steps: int, max_tokens: int, max_sequence: int) -> Any:
    """An opened tokenizer.json's own pipeline trace (normalizer, pre-tokenizer, added tokens), or None."""
    if active.typed:
        return None
    return tokenizer_store.page_char_trace(active.ref, text, max_steps=max_steps, max_tokens=max_tokens, max_sequence=max_sequence)


def char_ids(active: ActiveTokenizer, text: str) -> list[int]:
    """All ids of `text` with an opened character-level file, exactly as its page encodes."""
    return tokenizer_store.page_encode_ids(active.ref, text)
