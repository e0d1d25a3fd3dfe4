"""Reading a tokenizer-file import from a request: upload, pasted field, JSON body or raw body.

`import_from_request()` reads the file (and format hint), hands a big one
to a background job (webapp.jobs.thresholds) and otherwise parses it, checks the
limits and stores it (webapp.opened.store). What it does not do: routes
(webapp.web.files.routes) or parse formats (webapp.tokenizer.formats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import request

from webapp.infra import compound_inputs, inputs, ratelimit
from webapp.web.files.kinds import import_job
from webapp.infra.errors import quote
from webapp.infra.body import is_json_request, read_body, read_json_object
from webapp.opened.store import store_tokenizer
from webapp.tokenizer import TokenizerError, import_tokenizer


@dataclass
class ImportRequest:
    content: bytes | str
    fmt: str
    merges_txt: bytes | str | None
    filename: str | None
    config: bytes | str | None = None  # a tokenizer_config.json opened beside it: its chat template


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
        data = read_json_object(("content", "format", "merges_txt", "filename", "config"), ("content",))
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
        config = data.get("config")
        if config is not None and not isinstance(config, str):
            raise TokenizerError("config: should be the text of tokenizer_config.json", field="config")
        return ImportRequest(content, fmt, merges_txt, filename, config)
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
        config_upload = _read_upload(prefix + "config_file")
        config = config_upload[0] if config_upload is not None else (request.form.get("config") or None)
        return ImportRequest(content, fmt, merges_txt, filename, config)
    raw = read_body()
    if not raw.strip():
        raise TokenizerError("file: the request body is empty; send the tokenizer file", field="file")
    return ImportRequest(raw, request.args.get("format") or "auto", None, request.args.get("filename"))


def import_from_request(*, page: bool = False) -> Any:
    """The opened tokenizer, or a background job (webapp.jobs.thresholds) for a big file."""
    ratelimit.check_write()  # a 429 before the file is read or stored
    req = read_import_request(page=page)
    job = import_job(req.content, req.fmt, req.merges_txt, req.filename, req.config)
    if job is not None:
        return job
    tok = import_tokenizer(
        req.content, fmt=req.fmt, merges_txt=req.merges_txt, filename=req.filename,
        limits=inputs.current_limits().sizes, config=req.config, chat_limits=inputs.current_limits().chat,
    )
    compound_inputs.check_loaded_limits(len(tok.merges), len(tok.vocab), inputs.current_limits())
    return store_tokenizer(tok)
