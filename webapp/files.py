"""Tokenizer files over HTTP: import, export, and loaded tokenizers kept server-side.

Routes (blueprint `files`):

- `POST /api/import` - a tokenizer file in (multipart upload `file` [+ `merges_file`
  for a vocab.json + merges.txt pair], a JSON body `{"content", "format",
  "merges_txt", "filename"}`, or the raw file as the body); out: its id, a
  summary and the playground's merges and vocab (`?include=summary` leaves
  those out). The tokenizer is stored content-addressed, so the same file
  always gets the same id and share links can point at it.
- `GET /api/tokenizers/<id>` - a stored tokenizer (summary, merges, vocab).
- `POST /api/tokenizers/<id>/encode` - `{"text"[, "pretokenize"]}` -> ids in the
  file's own numbering, tokens with byte spans, pre-tokenization pieces; for a
  tokenizer.json encoded with its own pipeline, `model_text` is the text the
  spans index (after its normalizer, prefix spaces, ...).
- `GET|POST /api/export?format=seed|hf|minbpe|tiktoken` - a download of a
  stored tokenizer (`tokenizer`), of merges [+ vocab, `level`], or of the
  merges learned from `words` + `num_merges`.
- `POST /files/open/<tool>`, `POST /files/close/<tool>`, `POST /files/export/<tool>` -
  the page controls (partials/open_tokenizer.html, partials/export.html);
  they answer htmx with a fragment and a plain form post with the full page
  or the download.

Hooks for the pages (call these; they raise TokenizerError with field
"tokenizer" for an unknown id):

- `page_encode_trace(tokenizer_id, text, scheme, **caps)` -> (EncodeTrace in the
  file's ids, {id: bytes} vocab to decode those ids);
- `page_encode_ids(tokenizer_id, text, scheme)` -> all ids (the file's numbering);
- `page_char_tokenizer(tokenizer_id)` -> (merges, vocab) for the Characters page;
- `tokenizer_summary(tokenizer_id)` -> dict or None, for templates.

What it does not do: parse file formats (webapp.tokenizer.formats),
render tokens (the pages do), or keep anything in the browser.
"""

from __future__ import annotations

import json
import threading
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Mapping

from flask import Blueprint, Response, current_app, g, jsonify, render_template, request

from webapp import inputs
from webapp import tokenizer as tk
from webapp.http import ApiError, cut, is_json_request, quote, read_body, read_json_object
from webapp.tokenizer import TokenizerError
from webapp.tokenizer import formats as tokfiles
from webapp.tokenizer import presets, real
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.errors import short_repr
from webapp.tokenizer.textformats import MAX_JSON_DEPTH, json_depth
from webapp.tokenizer.pretokenize import check_scheme

bp = Blueprint("files", __name__)

BLOB_KIND = "tokenizer"
PAGE_TOOLS = ("bytes", "chars", "train")
FORMAT_LABELS = {
    "hf": "Hugging Face tokenizer.json",
    "vocab-merges": "vocab.json + merges.txt",
    "tiktoken": "tiktoken rank file",
    "minbpe": "minbpe .model",
    "seed": "playground JSON",
    "playground": "playground",
    "preset": "preset",
}


# --------------------------------------------------------------------------
# Loaded tokenizers: stored content-addressed, parsed and compiled once per process


@dataclass(frozen=True)
class Loaded:
    """A stored tokenizer ready to use: parsed, and (byte level) compiled."""

    id: str
    tok: tokfiles.LoadedTokenizer
    compiled: Any  # CompiledByteMerges for the byte level, None for characters
    file_vocab: dict[int, bytes] | None = None  # byte level: {file id: bytes}, for decoding


def _rules_of(key: str, entry: Loaded) -> int:
    return len(entry.tok.merges)


#: Opened tokenizers by id, parsed and compiled: 8 of them, 600,000 rules in all.
LOADED: BoundedCache[str, Loaded] = BoundedCache(8, 600_000, weigh=_rules_of, name="files.loaded")

# Used only when the app has no blob storage (webapp.storage not initialised):
# a bounded in-process store with the same content-addressed ids.
_FALLBACK_BLOBS: OrderedDict[str, bytes] = OrderedDict()
_FALLBACK_MAX = 16
_FALLBACK_LOCK = threading.Lock()


def _has_storage() -> bool:
    from webapp import storage

    return getattr(storage, "EXTENSION_KEY", None) in current_app.extensions


def _put_blob(data: bytes) -> str:
    from webapp import storage

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
    from webapp import storage

    if _has_storage():
        return storage.get_blob(BLOB_KIND, blob_id)
    return _FALLBACK_BLOBS.get(blob_id)


def _entry(blob_id: str, tok: tokfiles.LoadedTokenizer, compiled: Any = None) -> Loaded:
    """`compiled`, when given, is the tokenizer's compiled list (a preset's precompiled form)."""
    if tok.level != "bytes":
        return Loaded(blob_id, tok, None, None)
    vocab = tok.file_vocab()
    for token, token_id in tok.special_tokens.items():
        vocab.setdefault(token_id, token.encode("utf-8"))  # decoding shows a special token as its text
    return Loaded(blob_id, tok, compiled if compiled is not None else tk.compile_byte_merges(list(tok.merges)), vocab)


def store_tokenizer(tok: tokfiles.LoadedTokenizer) -> Loaded:
    """Keep a tokenizer server-side; the same tokenizer always gets the same id."""
    data = zlib.compress(tokfiles.dumps_stored(tok, limits=inputs.current_limits().sizes), 6)
    blob_id = _put_blob(data)
    entry = LOADED.get(blob_id)
    if entry is None:
        entry = _entry(blob_id, tok)
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
    from webapp import storage
    from webapp.presets_web import preset_entry

    if presets.is_preset(tokenizer_id):
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
    tok = tokfiles.loads_stored(raw, limits=inputs.current_limits().sizes)
    entry = _entry(tokenizer_id, tok)
    LOADED.put(entry.id, entry)
    return entry


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
    allowed = real.allowed_set(special, entry.tok.special_tokens)
    trace, _ = real.encode_trace_special(entry.tok, text, allowed, compiled=entry.compiled, scheme=scheme, **caps)
    return trace, entry.file_vocab or {}


def page_encode_ids(tokenizer_id: str, text: str, scheme: str | None = None, *, special: Any = ()) -> list[int]:
    """All ids of `text` (the file's numbering) with a stored tokenizer, as its page encodes."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level == "chars":
        if tokfiles.uses_pipeline(entry.tok):
            return tokfiles.encode_loaded(entry.tok, text)
        return tk.bpe_encode_text(text, entry.tok.vocab, list(entry.tok.merges))
    allowed = real.allowed_set(special, entry.tok.special_tokens)
    return real.encode_special(entry.tok, text, allowed, compiled=entry.compiled, scheme=scheme)


def page_special_ids(tokenizer_id: Any) -> frozenset[int]:
    """The ids of a stored tokenizer's special tokens (for styling them), or none."""
    try:
        return frozenset(load_tokenizer(tokenizer_id).tok.special_tokens.values()) if tokenizer_id else frozenset()
    except TokenizerError:
        return frozenset()


def page_char_trace(tokenizer_id: str, text: str, *, max_steps: int, max_tokens: int, max_sequence: int) -> Any:
    """The Characters page's trace with a stored tokenizer.json's own pipeline, or None without one."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level != "chars" or not tokfiles.uses_pipeline(entry.tok):
        return None
    return tokfiles.char_pipeline_trace(entry.tok, text, max_steps=max_steps, max_tokens=max_tokens,
                                        max_sequence=max_sequence)


def page_char_tokenizer(tokenizer_id: str) -> tuple[tuple[tuple[str, str], ...], dict[str, int]]:
    """(merges, vocab) of a stored character-level tokenizer."""
    entry = load_tokenizer(tokenizer_id)
    if entry.tok.level != "chars":
        raise TokenizerError(
            "tokenizer: this is a byte-level tokenizer; open it on the Bytes page", field="tokenizer"
        )
    return entry.tok.merges, entry.tok.vocab


def tokenizer_summary(tokenizer_id: Any) -> dict[str, Any] | None:
    """For templates: what a loaded tokenizer is, or None when the id is unknown."""
    if not tokenizer_id:
        return None
    try:
        entry = load_tokenizer(tokenizer_id)
    except TokenizerError:
        return None
    summary = entry.tok.summary()
    summary["id"] = entry.id
    summary["source_label"] = FORMAT_LABELS.get(entry.tok.source, entry.tok.source)
    summary["special_names"] = sorted(entry.tok.special_tokens, key=entry.tok.special_tokens.__getitem__)
    if presets.is_preset(entry.id):
        preset = presets.get_preset(entry.id)
        summary["preset"] = preset.name
        summary["source_label"] = f"{preset.name} ({preset.description})"
    return summary


@bp.app_context_processor
def _template_helpers() -> dict[str, Any]:
    return {"tokenizer_summary": tokenizer_summary}


# --------------------------------------------------------------------------
# Reading an import request


@dataclass
class ImportRequest:
    content: bytes | str
    fmt: str
    merges_txt: bytes | str | None
    filename: str | None


def _limit_bytes() -> int:
    return int(current_app.config.get("MAX_CONTENT_LENGTH") or 32 * 1024 * 1024)


def _read_upload(name: str) -> tuple[bytes, str] | None:
    upload = request.files.get(name)
    if upload is None or not upload.filename:
        return None
    return upload.read(), upload.filename


def read_import_request(*, page: bool = False) -> ImportRequest:
    """The file (and format hint) from an upload, a pasted field, a JSON body or a raw body."""
    prefix = "tokenizer_" if page else ""
    mimetype = request.mimetype or ""
    if is_json_request() and not page:
        data = read_json_object(("content", "format", "merges_txt", "filename"), ("content",))
        content = data.get("content")
        merges_txt = data.get("merges_txt")
        if not isinstance(content, str) or not content.strip():
            raise TokenizerError("content: the tokenizer file's text is missing", field="content")
        if merges_txt is not None and not isinstance(merges_txt, str):
            raise TokenizerError("merges_txt: should be the text of merges.txt", field="merges_txt")
        fmt = data.get("format") or request.args.get("format") or "auto"
        if not isinstance(fmt, str):
            raise TokenizerError(f"format: should be a string, got {quote(fmt)}", field="format")
        filename = data.get("filename")
        if filename is not None and not isinstance(filename, str):
            raise TokenizerError(f"filename: should be a string, got {quote(filename)}", field="filename")
        return ImportRequest(content, fmt, merges_txt, filename)
    if page or mimetype in ("multipart/form-data", "application/x-www-form-urlencoded"):
        upload = _read_upload(prefix + "file")
        merges = _read_upload(prefix + "merges_file")
        pasted = request.form.get(prefix + "paste" if page else "content") or ""
        pasted_merges = request.form.get("merges_txt") or None
        fmt = request.form.get(prefix + "format") or request.args.get("format") or "auto"
        if upload is not None:
            content, filename = upload
        elif pasted.strip():
            content, filename = pasted, None
        else:
            raise TokenizerError(
                "file: choose a tokenizer file to upload or paste its content", field="file"
            )
        merges_txt = merges[0] if merges is not None else pasted_merges
        return ImportRequest(content, fmt, merges_txt, filename)
    raw = read_body()
    if not raw.strip():
        raise TokenizerError("file: the request body is empty; send the tokenizer file", field="file")
    return ImportRequest(raw, request.args.get("format") or "auto", None, request.args.get("filename"))


def _check_limits(tok: tokfiles.LoadedTokenizer) -> None:
    limits = inputs.current_limits()
    if len(tok.merges) > limits.rules:
        raise TokenizerError(
            f"merges: {len(tok.merges):,} rules is over the limit of {limits.rules:,} rules (setting LIMIT_RULES)",
            field="merges",
            location={"limit": limits.rules},
        )
    if len(tok.vocab) > limits.vocab:
        raise TokenizerError(
            f"vocab: {len(tok.vocab):,} entries is over the limit of {limits.vocab:,} (setting LIMIT_VOCAB)",
            field="vocab",
            location={"limit": limits.vocab},
        )


def import_from_request(*, page: bool = False) -> Any:
    """The opened tokenizer, or a background job (webapp.offload) for a big file."""
    from webapp import offload

    req = read_import_request(page=page)
    job = offload.import_job(req.content, req.fmt, req.merges_txt, req.filename)
    if job is not None:
        return job
    tok = tokfiles.import_tokenizer(
        req.content, fmt=req.fmt, merges_txt=req.merges_txt, filename=req.filename,
        limits=inputs.current_limits().sizes,
    )
    _check_limits(tok)
    return store_tokenizer(tok)


# --------------------------------------------------------------------------
# JSON API


def _missing_status(exc: TokenizerError) -> int:
    """404 for an unknown id; 503 for a preset this installation lacks (the message says how to add it)."""
    return 503 if isinstance(exc, presets.PresetMissing) else 404


def _load_or_status(tokenizer_id: Any) -> Loaded:
    """A stored tokenizer or preset, or an ApiError with _missing_status's status."""
    try:
        return load_tokenizer(tokenizer_id)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, _missing_status(exc)) from None


def _describe(entry: Loaded, *, full: bool) -> dict[str, Any]:
    tok = entry.tok
    out: dict[str, Any] = {"tokenizer": entry.id, **tok.summary()}
    # "vocab" becomes the vocab itself below; the size is always here too.
    out["vocab_size"] = out["vocab"] + len(tok.special_tokens)
    out["special_tokens"] = tok.special_tokens
    if full:
        seed = json.loads(tokfiles.export_seed(tok))
        out["merges"] = seed["merges"]
        out["vocab"] = seed["vocab"]
        if tok.level == "bytes":
            out["id_map"] = seed.get("id_map", {})
    return out


@bp.post("/api/import")
def api_import() -> Response:
    entry = import_from_request()
    if not isinstance(entry, Loaded):
        from webapp import jobs

        return jobs.accepted(entry)
    return jsonify(_describe(entry, full=request.args.get("include") != "summary"))


@bp.get("/api/tokenizers/<tokenizer_id>")
def api_tokenizer(tokenizer_id: str) -> Response:
    entry = _load_or_status(tokenizer_id)
    # A preset's 50,000-200,000 merges only when asked for (?include=full).
    full = request.args.get("include") == "full" if presets.is_preset(tokenizer_id) else request.args.get("include") != "summary"
    return jsonify(_describe(entry, full=full))


@bp.post("/api/tokenizers/<tokenizer_id>/encode")
def api_tokenizer_encode(tokenizer_id: str) -> Response:
    entry = _load_or_status(tokenizer_id)
    data = read_json_object(("text", "pretokenize", "allowed_special"), ("text",))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    if entry.tok.level == "chars" and tokfiles.uses_pipeline(entry.tok):
        allowed = real.allowed_set(
            inputs.read_allowed_special(data.get("allowed_special", "all")), entry.tok.special_tokens)
        char_trace = tokfiles.char_pipeline_trace(entry.tok, text, allowed_special=allowed, max_steps=0,
                                                  max_tokens=len(text) + 1, max_sequence=0)
        return jsonify({"ids": char_trace.ids, "tokens": [str(t.value) for t in char_trace.tokens],
                        "model_text": char_trace.text})
    if entry.tok.level == "chars":
        ids = tk.bpe_encode_text(text, entry.tok.vocab, list(entry.tok.merges))
        return jsonify({"ids": ids, "tokens": tk.char_tokens(text, list(entry.tok.merges))})
    scheme = inputs.read_pretokenize(data.get("pretokenize") or entry.tok.pretokenize)
    raw_allowed = data.get("allowed_special")
    if raw_allowed is None and tokfiles.uses_pipeline(entry.tok, scheme):
        raw_allowed = "all"  # a tokenizer.json's default, as the library encodes
    allowed = real.allowed_set(inputs.read_allowed_special(raw_allowed), entry.tok.special_tokens)
    trace, special_index = real.encode_trace_special(
        entry.tok, text, allowed, compiled=entry.compiled, scheme=scheme,
        max_steps=0, max_tokens=len(text.encode("utf-8")) + 1, max_sequence=0,
    )
    tokens = []
    specials = set(special_index)
    for index, token in enumerate(trace.tokens):
        value = token.value if isinstance(token.value, bytes) else token.value.encode("utf-8")
        try:
            shown: str | None = value.decode("utf-8")
        except UnicodeDecodeError:
            shown = None
        item = {"id": token.id, "text": shown, "bytes": list(value), "start": token.start, "end": token.end}
        if index in specials:
            item["special"] = True
        tokens.append(item)
    out = {"ids": trace.ids, "tokens": tokens, "pieces": [list(p) for p in trace.pieces], "pretokenize": scheme}
    if trace.text is not None:
        out["model_text"] = trace.text  # what the spans index: the text after the file's normalizer etc.
    return jsonify(out)


@bp.post("/api/tokenizers/<tokenizer_id>/decode")
def api_tokenizer_decode(tokenizer_id: str) -> Response:
    """`{"ids"[, "skip_special_tokens": true]}` -> `{"text"}` through the file's own decoder.

    A tokenizer.json decodes as the library's `decode` does (its decoder, special
    tokens skipped unless asked); other files join the tokens' bytes (byte level)
    or strings (character level).
    """
    entry = _load_or_status(tokenizer_id)
    data = read_json_object(("ids", "skip_special_tokens"), ("ids",))
    ids = inputs.read_ids(data["ids"], inputs.current_limits())
    skip = inputs.read_flag(data.get("skip_special_tokens"), "skip_special_tokens", True)
    tok = entry.tok
    if tok.pipeline:
        text = tokfiles.decode_loaded(tok, ids, skip_special=skip)
    elif tok.level == "bytes":
        text = tk.decode(list(ids), {i: entry.file_vocab[i] for i in set(ids) if entry.file_vocab and i in entry.file_vocab})
    else:
        inverse = {v: k for k, v in tok.vocab.items()}
        missing = next((i for i in ids if i not in inverse), None)
        if missing is not None:
            raise TokenizerError(f"ids: id {missing} is not in the tokenizer's vocab", field="ids")
        text = "".join(inverse[i] for i in ids)
    return jsonify({"text": text})


def _fields() -> dict[str, Any]:
    """Export inputs from the query string, a form, or a JSON body (later wins)."""
    fields: dict[str, Any] = dict(request.args.items())
    if request.method == "POST":
        if is_json_request():
            fields.update(read_json_object(None))
        else:
            fields.update(request.form.items())
    return fields


def tokenizer_from_fields(fields: Mapping[str, Any], *, level: str | None = None) -> tokfiles.LoadedTokenizer:
    """What to export: a stored tokenizer, learned merges (words), or given merges [+ vocab]."""
    limits = inputs.current_limits()
    scheme = inputs.read_pretokenize(fields.get("pretokenize") or "none")
    if fields.get("tokenizer"):
        tok = load_tokenizer(fields["tokenizer"]).tok
        if fields.get("pretokenize"):
            tok = tokfiles.with_pretokenize(tok, scheme)
        return tok
    if level == "train" or (level is None and "words" in fields):
        words = inputs.read_words(fields.get("words", ""), limits, form=isinstance(fields.get("words"), str))
        num_merges = inputs.read_num_merges(fields.get("num_merges", ""), limits)
        trace = tk.train_trace(words, num_merges, runners_up=0, max_steps=0, max_token_chars=limits.vocab_bytes)
        vocab = tk.training_vocab(words, trace.pairs)
        return tokfiles.from_playground(level="chars", merges=trace.pairs, vocab=vocab)
    if "merges" not in fields:
        raise TokenizerError(
            "merges: missing; export takes a stored tokenizer (tokenizer), merges [+ vocab], or words + num_merges",
            field="merges",
        )
    if level is None:
        level = fields.get("level") or _guess_level(fields["merges"])
    if level == "chars":
        merges = inputs.read_char_merges(fields["merges"], limits)
        vocab = inputs.read_char_vocab(fields.get("vocab", ""), limits)
        return tokfiles.from_playground(level="chars", merges=merges, vocab=vocab)
    if level != "bytes":
        raise TokenizerError(f'level: expected "bytes" or "chars", got {cut(repr(level)) if isinstance(level, str) else quote(level)}', field="level")
    compiled = inputs.read_byte_merges(fields["merges"], limits)
    return tokfiles.from_playground(level="bytes", merges=list(compiled.rules), pretokenize=scheme, limits=limits.sizes)


def _guess_level(merges: Any) -> str:
    """Byte level for [[1, 2, 256]] or "1 2 256" lines; character level for strings."""
    value = merges
    if isinstance(merges, str):
        stripped = merges.strip()
        if stripped.startswith("["):
            try:
                value = json.loads(stripped) if json_depth(stripped) <= MAX_JSON_DEPTH else None
            except (ValueError, RecursionError):
                return "bytes"  # the byte-level parser reports where the JSON breaks
        else:
            first = stripped.split("\n", 1)[0].split()
            return "bytes" if first and all(part.isdigit() for part in first) else "chars"
    if isinstance(value, list) and value and isinstance(value[0], list) and value[0]:
        return "chars" if isinstance(value[0][0], str) else "bytes"
    return "bytes"


def _download(tok: tokfiles.LoadedTokenizer, fmt: str, pretokenize: str | None) -> Response:
    content, filename, mimetype = tokfiles.export_tokenizer(tok, fmt, pretokenize)
    response = Response(content, mimetype=mimetype.split(";")[0])
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@bp.route("/api/export", methods=["GET", "POST"])
def api_export() -> Response:
    try:
        fields = _fields()
        fmt = fields.get("format") or "seed"
        if fmt not in tokfiles.EXPORT_FORMATS:
            raise TokenizerError(
                f"format: expected one of {', '.join(tokfiles.EXPORT_FORMATS)}, got {quote(fmt)}", field="format"
            )
        tok = tokenizer_from_fields(fields)
        pretokenize = fields.get("pretokenize") or None
        return _download(tok, fmt, check_scheme(pretokenize) if pretokenize else None)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, 404 if exc.field == "tokenizer" else 400) from None


# --------------------------------------------------------------------------
# Page controls


def _is_htmx() -> bool:
    return request.headers.get("HX-Request") == "true"


def _page_state(tool: str, tokenizer_id: str) -> dict[str, str]:
    state = {k: v for k, v in request.form.items() if not k.startswith("tokenizer_")}
    state["tokenizer"] = tokenizer_id
    return state


def _full_page(tool: str, state: Mapping[str, str]) -> str:
    from webapp import pages

    return pages.render_tool_page(tool, state)


def _status(
    tool: str, tokenizer_id: str, error: str | None, *, reset_inputs: bool, refresh: bool = False, special: str = ""
) -> str:
    return render_template(
        "partials/open_tokenizer_status.html",
        tool=tool,
        state={"tokenizer": tokenizer_id, "special": special},
        open_error=error,
        reset_inputs=reset_inputs,
        refresh=refresh,
    )


def _opening_special(entry: Loaded) -> str:
    """A tokenizer.json opens with its special tokens recognised, as the library encodes by default."""
    return "all" if entry.tok.pipeline and entry.tok.special_tokens and entry.tok.level == "bytes" else ""


@bp.post("/files/open/<tool>")
def open_page(tool: str) -> Any:
    if tool not in ("bytes", "chars"):
        return Response("no such page\n", status=404, mimetype="text/plain")
    previous = request.form.get("tokenizer", "")
    try:
        entry = import_from_request(page=True)
        if not isinstance(entry, Loaded):
            return _job_panel(tool, entry, previous)
        wanted = "bytes" if tool == "bytes" else "chars"
        if entry.tok.level != wanted:
            other = "Characters" if wanted == "bytes" else "Bytes"
            kind = "character-level" if wanted == "bytes" else "byte-level"
            raise TokenizerError(f"file: this is a {kind} tokenizer; open it on the {other} page", field="file")
    except TokenizerError as exc:
        if _is_htmx():
            return _status(tool, previous, exc.message, reset_inputs=False)
        g.open_tokenizer_error = exc.message
        return _full_page(tool, _page_state(tool, previous))
    if _is_htmx():
        # `refresh` marks the status so files.js re-encodes the page with the file
        # (an HX-Trigger would make htmx reuse the Open button's formaction).
        return _status(tool, entry.id, None, reset_inputs=True, refresh=True, special=_opening_special(entry))
    state = _page_state(tool, entry.id)
    if _opening_special(entry):
        state["special"] = _opening_special(entry)
    if tool == "bytes":
        state["pretokenize"] = entry.tok.pretokenize  # start with the file's own splitting
    return _full_page(tool, state)


def _job_panel(tool: str, job: Any, previous: str) -> Any:
    """A big file opens as a background job: its panel polls and becomes the status when done."""
    from webapp import offload

    panel = offload.panel(job, f"open-{tool}")
    if _is_htmx():
        return panel
    g.open_tokenizer_job = panel
    return _full_page(tool, _page_state(tool, previous))


@bp.post("/files/close/<tool>")
def close_page(tool: str) -> Any:
    if tool not in ("bytes", "chars"):
        return Response("no such page\n", status=404, mimetype="text/plain")
    if _is_htmx():
        return _status(tool, "", None, reset_inputs=False, refresh=True)
    return _full_page(tool, _page_state(tool, ""))


@bp.post("/files/export/<tool>")
def export_page(tool: str) -> Any:
    if tool not in PAGE_TOOLS:
        return Response("no such page\n", status=404, mimetype="text/plain")
    fmt = request.args.get("format") or request.form.get("format") or "seed"
    try:
        if fmt not in tokfiles.EXPORT_FORMATS:
            raise TokenizerError(
                f"format: expected one of {', '.join(tokfiles.EXPORT_FORMATS)}, got {short_repr(fmt)}", field="format"
            )
        fields = dict(request.form.items())
        tok = tokenizer_from_fields(fields, level=tool)
        pretokenize = fields.get("pretokenize") if tool == "bytes" else None
        return _download(tok, fmt, pretokenize or None)
    except TokenizerError as exc:
        return Response(f"Cannot export: {exc.message}\n", status=400, mimetype="text/plain")
