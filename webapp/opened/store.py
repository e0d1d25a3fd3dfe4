"""Opened tokenizers kept server-side: stored content-addressed, parsed and compiled once per process.

What it does not do: encode (webapp.opened.active does, with the entry a
request resolved once), routes (webapp.web.files.routes, webapp.web.presets.routes), read
requests (webapp.web.files.reading) or parse file formats (webapp.tokenizer.formats).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from flask import Flask, current_app, has_app_context

from webapp.infra import inputs
from webapp.infra import storage
from webapp import tokenizer as tk
from webapp.tokenizer.stages import needs_compiled
from webapp.tokenizer import (
    LoadedTokenizer,
    PRESET_NAMES,
    Tokenizer,
    TokenizerError,
    dumps_stored,
    get_preset,
    is_preset,
    load_preset,
    loads_stored,
    set_cache_dir,
)
from webapp.tokenizer.caches import BoundedCache, estimated_bytes
from webapp.tokenizer.hf.held import pipeline_bytes
from webapp.tokenizer.presets.catalog import PRESET_RULES, load_compiled, make_tables as make_preset_tables
from webapp.tokenizer.api import register_resolver

BLOB_KIND = "tokenizer"


FORMAT_LABELS = {
    "hf": "Hugging Face tokenizer.json",
    "vocab-merges": "vocab.json + merges.txt",
    "tiktoken": "tiktoken rank file",
    "minbpe": "minbpe .model",
    "tekken": "Mistral Tekken file",
    "gguf": "llama.cpp GGUF file",
    "seed": "playground JSON",  # the source tag of playground JSON files (the format's old name)
    "playground": "playground",
    "preset": "preset",
}


@dataclass(frozen=True)
class Loaded:
    """A stored tokenizer ready to use: parsed, and (byte level) compiled."""

    id: str
    tok: LoadedTokenizer
    compiled: Any  # CompiledByteMerges for byte-level rules in list order, else None
    file_vocab: dict[int, bytes] | None = None  # shown on the Bytes page: {file id: bytes}, for decoding
    tokenizer: Tokenizer | None = None  # its stages, split by its own pipeline or scheme

    def stages(self, scheme: str | None = None) -> Tokenizer:
        """Its stages, split by its own pipeline or scheme, or by the playground `scheme` chosen instead."""
        if self.tokenizer is not None and (scheme is None or scheme == self.tok.pretokenize):
            return self.tokenizer
        return tk.tokenizer_of(self.tok, scheme, self.compiled)

    @cached_property
    def _estimate(self) -> int:
        """What it holds (docs/limits.md#caches): about 430 bytes a rule (RSS growth of opening measured,
        a vocab entry per rule included), the vocab entries beyond the rules, and what its pipeline
        holds once built (a SentencePiece charsmap, compiled regexes, added tokens)."""
        tok = self.tok
        rules = tok.rule_count
        entries = rules if "vocab" in tok.contents.pending() else len(tok.vocab)
        return (rules * LOADED_RULE_BYTES + max(0, entries - rules) * LOADED_ENTRY_BYTES
                + pipeline_bytes(tok.pipeline))

    def estimated_bytes(self) -> int:
        return self._estimate  # (worked out once: a cache's weight may not change)


def _rules_of(key: str, entry: Loaded) -> int:
    return len(entry.tok.merges)


LOADED_RULE_BYTES = 430
#: A vocab entry that no rule makes (a SentencePiece piece nothing joins, say): its text, id and dict slot.
LOADED_ENTRY_BYTES = 200
#: Opened tokenizers by id, parsed and compiled: 8 of them, 256 MiB of their estimated bytes in all
#: (one of any size up to 624,000 rules fits).
LOADED_BYTES = 256 * 2**20
LOADED: BoundedCache[str, Loaded] = BoundedCache(8, LOADED_BYTES, weigh=estimated_bytes, name="tokenizer_store.loaded")

# Used only when the app has no blob storage (webapp.infra.storage not initialised):
# a bounded in-process store with the same content-addressed ids, 16 files and
# 64 MiB of compressed stored forms at most.
FALLBACK_BLOBS: BoundedCache[str, bytes] = BoundedCache(16, 64 * 2**20, weigh=lambda key, data: len(data),
                                                        name="tokenizer_store.fallback_blobs")


def _has_storage() -> bool:
    return getattr(storage, "EXTENSION_KEY", None) in current_app.extensions


def _put_blob(data: bytes) -> str:
    if _has_storage():
        try:
            return storage.put_blob(BLOB_KIND, data)
        except storage.BlobTooLarge as exc:
            raise TokenizerError(
                f"file: stored compressed, this tokenizer takes {exc.size:,} bytes, over the storage "
                f"limit of {exc.limit:,} bytes (setting LIMIT_BLOB_BYTES)",
                field="file",
                location={"limit": exc.limit},
            ) from None
    blob_id = storage.content_id(BLOB_KIND, data)
    FALLBACK_BLOBS.put(blob_id, data)
    return blob_id


def _get_blob(blob_id: str) -> bytes | None:
    if _has_storage():
        return storage.get_blob(BLOB_KIND, blob_id)
    return FALLBACK_BLOBS.get(blob_id)


def make_entry(blob_id: str, tok: LoadedTokenizer, compiled: Any = None) -> Loaded:
    """`compiled`, when given, is the tokenizer's compiled list (a preset's precompiled form).

    Only byte-level rules in list order need a compiled list; a tokenizer the Bytes page
    shows (byte level, or a character-level one in the library's order, SentencePiece
    style) gets a bytes vocab for decoding.
    """
    if needs_compiled(tok):
        if compiled is None:
            compiled = tk.compile_byte_merges(list(tok.merges))
        compiled.share_rules(tok.merges)  # (one tuple of rules, not a second one made for the first trace)
    else:
        compiled = None
    tokenizer = tk.tokenizer_of(tok, compiled=compiled)
    if not tokenizer.on_bytes_page:
        return Loaded(blob_id, tok, None, None, tokenizer)
    vocab = tok.unit.page_bytes(tok)
    for token, token_id in tok.special_tokens.items():
        vocab.setdefault(token_id, token.encode("utf-8"))  # decoding shows a special token as its text
    return Loaded(blob_id, tok, compiled, vocab, tokenizer)


def store_tokenizer(tok: LoadedTokenizer) -> Loaded:
    """Keep a tokenizer server-side; the same tokenizer always gets the same id."""
    data = zlib.compress(dumps_stored(tok, limits=inputs.current_limits().sizes), 6)
    blob_id = _put_blob(data)
    entry = LOADED.get(blob_id)
    if entry is None:
        entry = make_entry(blob_id, tok)
        LOADED.put(entry.id, entry)
    return entry


def _bad_id(tokenizer_id: Any) -> TokenizerError:
    shown = tokenizer_id if isinstance(tokenizer_id, str) and len(tokenizer_id) <= 40 else "that"
    return TokenizerError(
        f"tokenizer: no tokenizer is stored with id {shown!r}; open the file again",
        field="tokenizer",
    )


def load_tokenizer(tokenizer_id: Any) -> Loaded:
    """A stored tokenizer by id (cached in-process), or a TokenizerError (field "tokenizer")."""
    if is_preset(tokenizer_id):
        return preset_entry(tokenizer_id)  # a real tokenizer by name (cl100k_base, gpt2, ...)
    if not storage.is_valid_id(tokenizer_id):
        raise _bad_id(tokenizer_id)
    entry = LOADED.get(tokenizer_id)
    if entry is not None:
        return entry
    data = _get_blob(tokenizer_id)
    if data is None:
        raise _bad_id(tokenizer_id)
    try:
        raw = zlib.decompress(data)
    except zlib.error:
        raise TokenizerError("tokenizer: the stored tokenizer is damaged", field="tokenizer") from None
    tok = loads_stored(raw, limits=inputs.current_limits().sizes)
    entry = make_entry(tokenizer_id, tok)
    LOADED.put(entry.id, entry)
    return entry


#: Presets as `Loaded`, one per preset name, kept for the process: as many entries as the app
#: ships presets, and every preset's rules once (PRESET_RULES), so none is evicted.
PRESET_ENTRIES: BoundedCache[str, Loaded] = BoundedCache(len(PRESET_NAMES), PRESET_RULES, weigh=_rules_of,
                                                         name="tokenizer_store.presets")
_BUILD_LOCK = threading.Lock()  # one conversion at a time: each costs a second and ~100 MB


def preset_entry(name: str) -> Loaded:
    """The preset as a `Loaded` (parsed, compiled), built once per process."""
    canonical = get_preset(name).name
    hit = PRESET_ENTRIES.get(canonical)
    if hit is not None:
        return hit
    with _BUILD_LOCK:
        hit = PRESET_ENTRIES.get(canonical)
        if hit is None:
            hit = make_entry(canonical, load_preset(canonical), load_compiled(canonical))
            make_preset_tables(hit.tok, hit.compiled)  # (made now, once, as before the API deferred them)
            PRESET_ENTRIES.put(canonical, hit)
    return hit


#: A short text for `warm_preset`: several scripts, digits, an emoji, code, runs of spaces.
WARM_TEXT = "Hello world! Tiếng Việt 東京 русский العربية 👍🏽 def f(x):\n    return x  12345 naïve café"


def warm_preset(name: str) -> Loaded:
    """The preset opened, and what its first encodes build once per process built now.

    For gunicorn's master before it forks (gunicorn.conf.py): the indexes that an encode or a
    trace builds on first use (a list-order preset's rules as Python tuples and its rule table,
    a file's compiled pipeline, the `get_tokenizer` handle and its decode table) are then made
    once and shared by every worker instead of each worker building its own copy (about 160 MB
    a worker with every preset, docs/limits.md#every-preset-open). Encodes the way the API's
    encode route and the pages do: the ids, then the trace.
    """
    entry = preset_entry(name)
    tokenizer = entry.stages()
    tk.get_tokenizer(name).encode(WARM_TEXT)
    allowed = frozenset(entry.tok.special_tokens)
    if tokenizer.on_chars_page:
        tokenizer.trace(WARM_TEXT, allowed, tk.TraceLimits.tokens_only(len(WARM_TEXT) + 1), "chars")
    elif tokenizer.on_bytes_page:
        tokenizer.trace(WARM_TEXT, allowed, tk.TraceLimits.tokens_only(len(WARM_TEXT.encode("utf-8")) + 1))
    return entry


@dataclass(frozen=True)
class OpenedStatus:
    """What the page's status line shows: the opened tokenizer's summary, or why it cannot be used."""

    summary: dict[str, Any] | None = None
    error: str | None = None


def opened_status(tokenizer_id: Any) -> OpenedStatus:
    """The status of a page's `tokenizer` field (empty: nothing opened)."""
    if not tokenizer_id:
        return OpenedStatus()
    try:
        return status_of(load_tokenizer(tokenizer_id))
    except TokenizerError as exc:
        return OpenedStatus(error=exc.message)


def status_of(entry: Loaded) -> OpenedStatus:
    """The status line of an opened tokenizer."""
    return OpenedStatus(summary=tokenizer_summary(entry))


def tokenizer_summary(entry: Loaded) -> dict[str, Any]:
    """What an opened tokenizer is, for the page: its summary, id, labels and special token names."""
    summary = entry.tok.summary()
    summary["id"] = entry.id
    summary["source_label"] = FORMAT_LABELS.get(entry.tok.source, entry.tok.source)
    summary["special_names"] = sorted(entry.tok.special_tokens, key=entry.tok.special_tokens.__getitem__)
    if is_preset(entry.id):
        preset = get_preset(entry.id)
        summary["preset"] = preset.name
        summary["source_label"] = f"{preset.name} ({preset.description})"
    return summary


def _resolve_stored(tokenizer_id: str) -> Any:
    """`get_tokenizer`'s way to stored files (needs the app: storage lives there)."""
    if not has_app_context():
        return None
    try:
        return load_tokenizer(tokenizer_id).tok
    except TokenizerError:
        return None


def init_app(app: Flask) -> None:
    """Point the preset cache at `instance/presets` and let `get_tokenizer` open stored files by id."""
    set_cache_dir(Path(app.instance_path) / "presets")
    register_resolver(_resolve_stored)
