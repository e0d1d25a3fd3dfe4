"""Reading request bodies and bounding request heads, for every route of the app.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import io
import json
import time
from typing import Any, Mapping

from flask import Flask, current_app, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Response
from werkzeug.wsgi import LimitedStream

from webapp.infra.errors import QUOTE_CHARS, ApiError, cut, quote, too_large
from webapp.tokenizer import load_json
from webapp.tokenizer.textformats import JsonProblem


def read_body() -> bytes:
    """The body, never more than MAX_CONTENT_LENGTH bytes read.

    Werkzeug refuses a Content-Length over the limit; a chunked body has none,
    and its stream stops at the limit, so one byte more is asked for: if
    that read finds data (or werkzeug raises), the body was too large.
    """
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    try:
        if limit is None:
            return request.get_data(cache=True)
        data = _read_at_most(request.stream, limit + 1)
        if len(data) > limit:
            raise too_large()
        if request.content_length is None and len(data) == limit and request.stream.read(1):
            raise too_large()
    except RequestEntityTooLarge:
        raise too_large() from None
    return data


#: One read's size: a single read(limit) sets `limit` bytes aside before a byte arrives, whatever the body's size.
_READ_CHUNK = 256 * 1024


def _read_at_most(stream: Any, limit: int) -> bytes:
    """Up to `limit` bytes of `stream`, read a chunk at a time."""
    parts: list[bytes] = []
    size = 0
    while size < limit:
        chunk = stream.read(min(_READ_CHUNK, limit - size))
        if not chunk:
            break
        parts.append(chunk)
        size += len(chunk)
    return b"".join(parts)


def parse_json(source: str) -> Any:
    """JSON text to a value (the one reader, webapp.tokenizer.load_json), or an ApiError that says where it breaks."""
    try:
        return load_json(source)
    except JsonProblem as exc:
        raise ApiError(f"body: {exc.reason}", location=exc.location) from None


def is_json_request() -> bool:
    mimetype = request.mimetype or ""
    return mimetype == "application/json" or mimetype.endswith("+json")


def read_json() -> Any:
    """The body as a JSON value (415 unless it is sent as JSON)."""
    if not is_json_request():
        mimetype = request.mimetype
        raise ApiError(
            f"body: send JSON with Content-Type: application/json (got {quote(mimetype) if mimetype else 'no content type'})",
            status=415,
        )
    raw = read_body()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ApiError(f"body: not valid UTF-8 at byte offset {exc.start}", location={"offset": exc.start}) from None
    return parse_json(source)


def check_fields(data: Any, allowed: tuple[str, ...] | None, required: tuple[str, ...]) -> dict[str, Any]:
    """`data` as an object with only `allowed` fields (None: any) and every `required` one."""
    if not isinstance(data, dict):
        example = ", ".join(f'"{f}": ...' for f in (required or allowed or ()))
        raise ApiError("body: expected a JSON object like {" + example + "}")
    if allowed is not None:
        for key in data:
            if key not in allowed:
                raise ApiError(
                    f"{cut(str(key))}: unknown field; this endpoint takes {', '.join(allowed)}",
                    field=str(key)[:QUOTE_CHARS],
                )
    for name in required:
        if name not in data:
            raise ApiError(f"{name}: missing (required: {', '.join(required)})", field=name)
    return data


def read_json_object(allowed: tuple[str, ...] | None, required: tuple[str, ...] = ()) -> dict[str, Any]:
    """The request body as a JSON object with only known fields and every required one."""
    return check_fields(read_json(), allowed, required)




# --- the request head ---------------------------------------------------------------


def bound_chunked_body() -> None:
    """A chunked body (no Content-Length) is read here, up to MAX_CONTENT_LENGTH,
    before any view: over it is a 413; under it, the body is handed on as if it
    had come with a Content-Length, so form parsing never sees a stream that
    stops silently at the limit."""
    if request.content_length is not None or "wsgi.input_terminated" not in request.environ:
        return
    if request.method in ("GET", "HEAD", "OPTIONS"):
        return
    data = read_body()
    environ = request.environ
    environ["wsgi.input"] = io.BytesIO(data)
    environ["CONTENT_LENGTH"] = str(len(data))
    environ.pop("HTTP_TRANSFER_ENCODING", None)
    environ.pop("wsgi.input_terminated", None)
    request.__dict__.pop("stream", None)  # a cached stream would still be the chunked one


def _request_target_bytes(environ: Mapping[str, Any]) -> int:
    """Length of the request target as sent (path and query), in bytes."""
    raw = environ.get("RAW_URI") or environ.get("REQUEST_URI")  # gunicorn / werkzeug
    if isinstance(raw, str):
        return len(raw.encode("latin-1", "replace"))
    query = environ.get("QUERY_STRING") or ""
    return len(str(environ.get("PATH_INFO") or "").encode("latin-1", "replace")) + (len(query) + 1 if query else 0)


def bound_request_head() -> None:
    """The URL and the header lines, bounded by the app below gunicorn's own
    limits (gunicorn.conf.py): a request inside gunicorn's limits always gets
    the app's answer (its JSON or page, with the security headers), also when
    it is refused; the development server gets the same bounds."""
    config = current_app.config
    limit = int(config.get("LIMIT_URL_BYTES", 0) or 0)
    size = _request_target_bytes(request.environ)
    if limit and size > limit:
        raise ApiError(f"url: the URL is {size:,} bytes, over the limit of {limit:,} bytes "
                       f"(setting LIMIT_URL_BYTES); send long input in a POST body", field="url", status=414)
    fields = int(config.get("LIMIT_HEADER_FIELDS", 0) or 0)
    field_bytes = int(config.get("LIMIT_HEADER_BYTES", 0) or 0)
    headers = list(request.headers.items())
    if fields and len(headers) > fields:
        raise ApiError(f"headers: {len(headers):,} header fields, over the limit of {fields:,} "
                       f"(setting LIMIT_HEADER_FIELDS)", field="headers", status=431)
    for name, value in headers:
        line = len(name) + 2 + len(value)  # "Name: value"
        if field_bytes and line > field_bytes:
            raise ApiError(f"headers: the header {quote(name)} is {line:,} bytes, over the limit of "
                           f"{field_bytes:,} bytes (setting LIMIT_HEADER_BYTES)", field="headers", status=431)


#: How long a refused body is read out after the answer (through a local proxy, 256 MiB take well under this).
DRAIN_SECONDS = 5.0
_DRAIN_CHUNK = 1024 * 1024


def _drain(stream: Any) -> None:
    deadline = time.monotonic() + DRAIN_SECONDS
    try:
        while time.monotonic() < deadline and stream.read(_DRAIN_CHUNK):
            pass
    except Exception:  # the client went away, or the server closed the input: nothing left to do
        pass


def drain_unread_body(response: Response) -> Response:
    """Have whatever is left of a Content-Length body read once the answer is sent."""
    length = request.content_length
    if not length or request.method in ("GET", "HEAD", "OPTIONS"):
        return response
    try:
        stream: Any = request.stream  # werkzeug's LimitedStream knows what was read already
    except RequestEntityTooLarge:  # over MAX_CONTENT_LENGTH: refused before anything was read
        stream = LimitedStream(request.environ["wsgi.input"], length)
    response.call_on_close(lambda: _drain(stream))
    return response


def init_app(app: Flask) -> None:
    """Bound every request's head and chunked body before any view runs; drain refused bodies."""
    app.before_request(bound_request_head)
    app.before_request(bound_chunked_body)
    app.after_request(drain_unread_body)
