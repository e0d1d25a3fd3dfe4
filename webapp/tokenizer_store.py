"""Opened tokenizers kept server-side: stored content-addressed, parsed and compiled once per process.

- `store_tokenizer(tok)` keeps a `LoadedTokenizer` (compressed stored form,
  webapp.storage's blobs; an in-process store when the app has no storage)
  and gives back a `Loaded`: the same tokenizer always gets the same id.
- `load_tokenizer(id)` gives it back by id, or a preset by name, from the
  bounded cache `LOADED` or from storage; an unknown id is a TokenizerError
  with field "tokenizer".
- The hooks the pages call: `page_encode_trace`, `page_encode_ids`,
  `page_special_ids`, `page_char_trace`, `page_char_tokenizer`, and
  `opened_status` (what the page's status line shows for its `tokenizer`).

What it does not do: routes (webapp.files, webapp.presets_web), read
requests (webapp.file_import) or parse file formats (webapp.tokenizer.formats).
"""

from __future__ import annotations

import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from flask import current_app

from webapp import inputs, storage
from webapp import tokenizer as tk
from webapp.tokenizer import (
    BoundedCache,
    LoadedTokenizer,
    TokenizerError,
    allowed_set,
    char_pipeline_trace,
    dumps_stored,
    encode_loaded,
    encode_special,
    encode_trace_special,
    get_preset,
    is_preset,
    load_compiled,
    load_preset,
    loads_stored,
    uses_pipeline,
)

BLOB_KIND = "tokenizer"


FORMAT_LABELS = {
    "hf": "Hugging Face tokenizer.json",
    "vocab-merges": "vocab.json + merges.txt",
    "tiktoken": "tiktoken rank file",
    "minbpe": "minbpe .model",
    "seed": "playground JSON",  # the source tag of playground JSON files (the format's old name)
    "playground": "playground",
    "preset": "preset",
}


@dataclass(frozen=True)
class Loaded:
    """A stored tokenizer ready to use: parsed, and (byte level) compiled."""

    id: str
    tok: LoadedTokenizer
    compiled: Any  # CompiledByteMerges for the byte level, None for characters
    file_vocab: dict[int, bytes] | None = None  # byte level: {file id: bytes}, for decoding


def _rules_of(key: str, entry: Loaded) -> int:
    return len(entry.tok.merges)


#: Opened tokenizers by id, parsed and compiled: 8 of them, 600,000 rules in all.
LOADED: BoundedCache[str, Loaded] = BoundedCache(8, 600_000, weigh=_rules_of, name="tokenizer_store.loaded")

# Used only when the app has no blob storage (webapp.storage not initialised):
# a bounded in-process store with the same content-addressed ids.
# Used only when the app has no blob storage (webapp.storage not initialised):
# a bounded in-process store with the same content-addressed ids.
_FALLBACK_BLOBS: OrderedDict[str, bytes] = OrderedDict()
_FALLBACK_MAX = 16
_FALLBACK_LOCK = threading.Lock()


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
    with _FALLBACK_LOCK:
        _FALLBACK_BLOBS[blob_id] = data
        while len(_FALLBACK_BLOBS) > _FALLBACK_MAX:
            _FALLBACK_BLOBS.popitem(last=False)
    return blob_id


def _get_blob(blob_id: str) -> bytes | None:
    if _has_storage():
        return storage.get_blob(BLOB_KIND, blob_id)
    return _FALLBACK_BLOBS.get(blob_id)


def make_entry(blob_id: str, tok: LoadedTokenizer, compiled: Any = None) -> Loaded:
    """`compiled`, when given, is the tokenizer's compiled list (a preset's precompiled form)."""
    if tok.level != "bytes":
        return Loaded(blob_id, tok, None, None)
    vocab = tok.file_vocab()
    for token, token_id in tok.special_tokens.items():
        vocab.setdefault(token_id, token.encode("utf-8"))  # decoding shows a special token as its text
    return Loaded(blob_id, tok, compiled if compiled is not None else tk.compile_byte_merges(list(tok.merges)), vocab)


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


_PRESET_ENTRIES: dict[str, Loaded] = {}  # preset name -> Loaded (one per preset, kept for the process)
_PRESET_LOCK = threading.Lock()
_BUILD_LOCK = threading.Lock()  # one conversion at a time: each costs a second and ~100 MB


def preset_entry(name: str) -> Loaded:
    """The preset as a `Loaded` (parsed, compiled), built once per process."""
    canonical = get_preset(name).name
    with _PRESET_LOCK:
        hit = _PRESET_ENTRIES.get(canonical)
    if hit is not None:
        return hit
    with _BUILD_LOCK:
        with _PRESET_LOCK:
            hit = _PRESET_ENTRIES.get(canonical)
        if hit is None:
            hit = make_entry(canonical, load_preset(canonical), load_compiled(canonical))
            with _PRESET_LOCK:
                _PRESET_ENTRIES[canonical] = hit
    return hit


# --- hooks for the pages -------------------------------------------------------


def page_encode_trace(
    tokenizer_id: str, text: str, scheme: str | None = None, *, special: Any = (), **caps: int
) -> tuple[Any, dict[int, bytes]]:
    """Encode `text` with a stored byte-level tokenizer: (trace in the file's ids, decode vocab).

    `special` is the allowed special tokens ("all" or a list; default none:
    their text is plain text). The decode vocab includes the special tokens.
    """
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level != "bytes":
        raise TokenizerError(
            "tokenizer: this is a character-level tokenizer; open it on the Characters page",
            field="tokenizer",
        )
    allowed = allowed_set(special, entry.tok.special_tokens)
    trace, _ = encode_trace_special(entry.tok, text, allowed, compiled=entry.compiled, scheme=scheme, **caps)
    return trace, entry.file_vocab or {}


def page_encode_ids(tokenizer_id: str, text: str, scheme: str | None = None, *, special: Any = ()) -> list[int]:
    """All ids of `text` (the file's numbering) with a stored tokenizer, as its page encodes."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level == "chars":
        if uses_pipeline(entry.tok):
            return encode_loaded(entry.tok, text)
        return tk.bpe_encode_text(text, entry.tok.vocab, list(entry.tok.merges))
    allowed = allowed_set(special, entry.tok.special_tokens)
    return encode_special(entry.tok, text, allowed, compiled=entry.compiled, scheme=scheme)


def page_special_ids(tokenizer_id: Any) -> frozenset[int]:
    """The ids of a stored tokenizer's special tokens (for styling them), or none."""
    try:
        return frozenset(load_tokenizer(tokenizer_id).tok.special_tokens.values()) if tokenizer_id else frozenset()
    except TokenizerError:
        return frozenset()


def page_char_trace(tokenizer_id: str, text: str, *, max_steps: int, max_tokens: int, max_sequence: int) -> Any:
    """The Characters page's trace with a stored tokenizer.json's own pipeline, or None without one."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level != "chars" or not uses_pipeline(entry.tok):
        return None
    return char_pipeline_trace(entry.tok, text, max_steps=max_steps, max_tokens=max_tokens,
                               max_sequence=max_sequence)


def page_char_tokenizer(tokenizer_id: str) -> tuple[tuple[tuple[str, str], ...], dict[str, int]]:
    """(merges, vocab) of a stored character-level tokenizer."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level != "chars":
        raise TokenizerError(
            "tokenizer: this is a byte-level tokenizer; open it on the Bytes page", field="tokenizer"
        )
    return entry.tok.merges, entry.tok.vocab


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
        return OpenedStatus(summary=tokenizer_summary(load_tokenizer(tokenizer_id)))
    except TokenizerError as exc:
        return OpenedStatus(error=exc.message)


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
