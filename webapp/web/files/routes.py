"""Tokenizer files over HTTP: the routes to import, describe, encode, decode and export them.

What it does not do: keep opened tokenizers or give the pages their hooks
(webapp.opened.store), read an import request (webapp.web.files.reading), parse
file formats (webapp.tokenizer.formats), render tokens (the pages do), or
keep anything in the browser.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from flask import Blueprint, Response, jsonify, request, url_for

from webapp.infra import inputs
from webapp.jobs import views as jobs
from webapp import tokenizer as tk
from webapp.web.files.reading import import_from_request
from webapp.web.common.htmx import is_htmx, page_state, status
from webapp.web.playground.pages import full_page
from webapp.infra.errors import ApiError, cut, not_found, quote
from webapp.infra.body import is_json_request, read_json_object
from webapp.web.common.tools import FILE_TOOLS, TOOLS
from webapp.web.playground.fields import TOOL_TITLES
from webapp.opened.store import Loaded, load_tokenizer
from webapp.tokenizer import (
    EXPORT_FORMATS,
    LoadedTokenizer,
    PresetMissing,
    TokenizerError,
    TraceLimits,
    allowed_set,
    export_tokenizer,
    is_preset,
    load_json,
)
from webapp.tokenizer.errors import short_repr
from webapp.tokenizer.formats import (
    canonical_format,
    export_playground_json,
    from_playground,
    with_pretokenize,
)
from webapp.tokenizer.formats.sentencepiece import is_sentencepiece
from webapp.tokenizer.textformats import JsonProblem
from webapp.tokenizer.pretokenize.patterns import check_scheme

bp = Blueprint("files", __name__)

# --------------------------------------------------------------------------
# JSON API


def _missing_status(exc: TokenizerError) -> int:
    """404 for an unknown id; 503 for a preset this installation lacks (the message says how to add it)."""
    return 503 if isinstance(exc, PresetMissing) else 404


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
        playground_json = json.loads(export_playground_json(tok))
        out["merges"] = playground_json["merges"]
        out["vocab"] = playground_json["vocab"]
        if tok.unit.base_ids(tok):  # (a file that numbers its bytes: how its ids map to the playground's)
            out["id_map"] = playground_json.get("id_map", {})
    return out


@bp.post("/api/import")
def api_import() -> Response:
    entry = import_from_request()
    if not isinstance(entry, Loaded):
        return jobs.accepted(entry)
    return jsonify(_describe(entry, full=request.args.get("include") != "summary"))


@bp.get("/api/tokenizers/<tokenizer_id>")
def api_tokenizer(tokenizer_id: str) -> Response:
    entry = _load_or_status(tokenizer_id)
    # A preset's 50,000-200,000 merges only when asked for (?include=full).
    full = request.args.get("include") == "full" if is_preset(tokenizer_id) else request.args.get("include") != "summary"
    return jsonify(_describe(entry, full=full))


@bp.post("/api/tokenizers/<tokenizer_id>/encode")
def api_tokenizer_encode(tokenizer_id: str) -> Response:
    entry = _load_or_status(tokenizer_id)
    data = read_json_object(("text", "pretokenize", "allowed_special", "add_special_tokens"), ("text",))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    add = inputs.read_flag(data.get("add_special_tokens"), "add_special_tokens", False)
    response = _encode_answer(entry, data, text)
    if add:  # what the file's post-processor adds around the text (the library's add_special_tokens)
        body = response.get_json()
        body["ids"] = entry.stages().post_process(body["ids"])
        return jsonify(body)
    return response


def _encode_answer(entry: Any, data: dict[str, Any], text: str) -> Response:
    own = entry.stages()
    if own.on_chars_page:
        allowed = allowed_set(
            inputs.read_allowed_special(data.get("allowed_special", own.special_default)),
            entry.tok.special_tokens)
        char_trace = own.trace(text, allowed, TraceLimits.tokens_only(len(text) + 1), "chars")[0]
        return jsonify({"ids": char_trace.ids, "tokens": [str(t.value) for t in char_trace.tokens],
                        "model_text": char_trace.text})
    if not own.takes_page_scheme:  # (a character-level file without a pipeline: the whole text, no scheme)
        ids = tk.bpe_encode_text(text, entry.tok.vocab, list(entry.tok.merges))
        return jsonify({"ids": ids, "tokens": tk.char_tokens(text, list(entry.tok.merges))})
    scheme = inputs.read_pretokenize(data.get("pretokenize") or entry.tok.pretokenize)
    stages = entry.stages(scheme)
    raw_allowed = data.get("allowed_special")
    if raw_allowed is None:
        raw_allowed = stages.special_default  # a tokenizer.json's "all", as the library encodes
    allowed = allowed_set(inputs.read_allowed_special(raw_allowed), entry.tok.special_tokens)
    trace, special_index = stages.trace(text, allowed, TraceLimits.tokens_only(len(text.encode("utf-8")) + 1))
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
    # "pieces": the pre-tokens, under the key this API has always used
    out = {"ids": trace.ids, "tokens": tokens, "pieces": [list(p) for p in trace.pretokens], "pretokenize": scheme}
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
    limits = inputs.current_limits()
    ids = inputs.read_ids(data["ids"], limits)
    skip = inputs.read_flag(data.get("skip_special_tokens"), "skip_special_tokens", True)
    tok = entry.tok
    if tok.pipeline:
        text = entry.stages().decode(ids, skip_special=skip, max_bytes=limits.decode_bytes)
    else:
        text = tok.unit.join_ids(tok, list(ids), entry.file_vocab or {}, max_bytes=limits.decode_bytes)
    return jsonify({"text": text})


# --------------------------------------------------------------------------
# Export


def _fields() -> dict[str, Any]:
    """Export inputs from the query string, a form, or a JSON body (later wins)."""
    fields: dict[str, Any] = dict(request.args.items())
    if request.method == "POST":
        if is_json_request():
            fields.update(read_json_object(None))
        else:
            fields.update(request.form.items())
    return fields


def tokenizer_from_fields(fields: Mapping[str, Any], *, level: str | None = None) -> LoadedTokenizer:
    """What to export: a stored tokenizer, learned merges (words), or given merges [+ vocab]."""
    limits = inputs.current_limits()
    scheme = inputs.read_pretokenize(fields.get("pretokenize") or "none")
    if fields.get("tokenizer"):
        tok = load_tokenizer(fields["tokenizer"]).tok
        if fields.get("pretokenize"):
            tok = with_pretokenize(tok, scheme)
        return tok
    if level == "train" or (level is None and "words" in fields):
        words = inputs.read_words(fields.get("words", ""), limits, form=isinstance(fields.get("words"), str))
        num_merges = inputs.read_num_merges(fields.get("num_merges", ""), limits)
        trace = tk.train_trace(words, num_merges, runners_up=0, max_steps=0, max_token_chars=limits.vocab_bytes)
        vocab = tk.training_vocab(words, trace.pairs)
        return from_playground(level="chars", merges=trace.pairs, vocab=vocab)
    if "merges" not in fields:
        raise TokenizerError(
            "merges: missing; export takes a stored tokenizer (tokenizer), merges [+ vocab], or words + num_merges",
            field="merges",
        )
    if level is None:
        level = fields.get("level") or _guess_level(fields["merges"])
    read_rules = _RULES_BY_LEVEL.get(level) if isinstance(level, str) else None
    if read_rules is None:
        raise TokenizerError(f'level: expected "bytes" or "chars", got {cut(repr(level)) if isinstance(level, str) else quote(level)}', field="level")
    return read_rules(fields, limits, scheme)


def _char_rules(fields: Mapping[str, Any], limits: Any, scheme: str) -> LoadedTokenizer:
    merges = inputs.read_char_merges(fields["merges"], limits)
    vocab = inputs.read_char_vocab(fields.get("vocab", ""), limits)
    return from_playground(level="chars", merges=merges, vocab=vocab)


def _byte_rules(fields: Mapping[str, Any], limits: Any, scheme: str) -> LoadedTokenizer:
    compiled = inputs.read_byte_merges(fields["merges"], limits)
    return from_playground(level="bytes", merges=list(compiled.rules), pretokenize=scheme, limits=limits.sizes)


#: The `level` field's readers of given merges [+ vocab].
_RULES_BY_LEVEL: dict[str, Callable[[Mapping[str, Any], Any, str], LoadedTokenizer]] = {
    "bytes": _byte_rules, "chars": _char_rules}


def _guess_level(merges: Any) -> str:
    """Byte level for [[1, 2, 256]] or "1 2 256" lines; character level for strings."""
    value = merges
    if isinstance(merges, str):
        stripped = merges.strip()
        if stripped.startswith("["):
            try:
                value = load_json(stripped)
            except JsonProblem:
                return "bytes"  # the byte-level parser reports where the JSON breaks
        else:
            first = stripped.split("\n", 1)[0].split()
            return "bytes" if first and all(part.isdigit() for part in first) else "chars"
    if isinstance(value, list) and value and isinstance(value[0], list) and value[0]:
        return "chars" if isinstance(value[0][0], str) else "bytes"
    return "bytes"


def _download(tok: LoadedTokenizer, fmt: str, pretokenize: str | None) -> Response:
    content, filename, mimetype = export_tokenizer(tok, fmt, pretokenize)
    response = Response(content, mimetype=mimetype.split(";")[0])
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@bp.route("/api/export", methods=["GET", "POST"])
def api_export() -> Response:
    try:
        fields = _fields()
        fmt = canonical_format(fields.get("format") or "playground")
        if fmt not in EXPORT_FORMATS:
            raise TokenizerError(
                f"format: expected one of {', '.join(EXPORT_FORMATS)}, got {quote(fmt)}", field="format"
            )
        tok = tokenizer_from_fields(fields)
        pretokenize = fields.get("pretokenize") or None
        return _download(tok, fmt, check_scheme(pretokenize) if pretokenize else None)
    except TokenizerError as exc:
        raise ApiError.from_tokenizer(exc, 404 if exc.field == "tokenizer" else 400) from None


# --------------------------------------------------------------------------
# Page controls


OPEN_ON_TEXT_MAX = 2000  # the page's text travels in the link to the other page up to this many characters


def _open_on(tool: str, tokenizer_id: str) -> str:
    """A link that opens the stored tokenizer on `tool`'s page (with the page's text, when short)."""
    text = request.form.get("text", "")
    args: dict[str, Any] = {"tokenizer": tokenizer_id}
    if text and len(text) <= OPEN_ON_TEXT_MAX:
        args["text"] = text
    return url_for(f"pages.{tool}_page", **args)


@bp.post("/files/open/<tool>")
def open_page(tool: str) -> Any:
    if tool not in FILE_TOOLS:
        raise not_found(f"path: no tool page {tool[:40]!r}")
    previous = request.form.get("tokenizer", "")
    elsewhere = None
    try:
        entry = import_from_request(page=True)
        if not isinstance(entry, Loaded):
            return _job_panel(tool, entry, previous)
        wanted = "bytes" if tool == "bytes" else "chars"
        # (a SentencePiece model, a .model or a GGUF's, is character-level, and opens on the Bytes page too: its
        # pieces are ▁-spelt text)
        if entry.tok.level != wanted and not (wanted == "bytes" and is_sentencepiece(entry.tok)):
            other = "chars" if wanted == "bytes" else "bytes"
            kind = "character-level" if wanted == "bytes" else "byte-level"
            elsewhere = _open_on(other, entry.id)
            raise TokenizerError(f"file: this is a {kind} tokenizer; open it on the {TOOL_TITLES[other]} page",
                                 field="file")
    except TokenizerError as exc:
        if is_htmx():
            return status(tool, previous, exc.message, reset_inputs=False, elsewhere=elsewhere)
        return full_page(tool, page_state(tool, previous), open_error=exc.message, open_elsewhere=elsewhere)
    if is_htmx():
        # `refresh` marks the status so files.js re-encodes the page with the file
        # (an HX-Trigger would make htmx reuse the Open button's formaction).
        # special tokens start as plain text, as with a preset: the box says how to recognise them
        return status(tool, entry.id, None, reset_inputs=True, refresh=True)
    state = page_state(tool, entry.id)
    if tool == "bytes":
        state["pretokenize"] = entry.tok.pretokenize  # start with the file's own splitting
    return full_page(tool, state)


def _job_panel(tool: str, job: Any, previous: str) -> Any:
    """A big file opens as a background job: its panel polls and becomes the status when done."""
    panel = jobs.render_panel(job, f"open-{tool}")
    if is_htmx():
        return panel
    return full_page(tool, page_state(tool, previous), open_job=panel)


@bp.post("/files/close/<tool>")
def close_page(tool: str) -> Any:
    if tool not in FILE_TOOLS:
        raise not_found(f"path: no tool page {tool[:40]!r}")
    if is_htmx():
        return status(tool, "", None, reset_inputs=False, refresh=True)
    return full_page(tool, page_state(tool, ""))


@bp.post("/files/export/<tool>")
def export_page(tool: str) -> Any:
    if tool not in TOOLS:
        raise not_found(f"path: no tool page {tool[:40]!r}")
    fmt = canonical_format(request.args.get("format") or request.form.get("format") or "playground")
    try:
        if fmt not in EXPORT_FORMATS:
            raise TokenizerError(
                f"format: expected one of {', '.join(EXPORT_FORMATS)}, got {short_repr(fmt)}", field="format"
            )
        fields = dict(request.form.items())
        tok = tokenizer_from_fields(fields, level=tool)
        pretokenize = fields.get("pretokenize") if tool == "bytes" else None
        return _download(tok, fmt, pretokenize or None)
    except TokenizerError as exc:
        return Response(f"Cannot export: {exc.message}\n", status=400, mimetype="text/plain")
