"""Reading request bodies and answering errors, for every route of the app.

- `ApiError` - the one error type of the web layer: a message a person can act
  on, the `field` at fault, an HTTP `status` and a `location` ({"rule": 3},
  {"line": 2, "column": 5}...). Views raise it (or let a `TokenizerError`
  from the engine through, which answers 400) and never build error
  responses themselves.
- `read_body()` - the raw body, at most MAX_CONTENT_LENGTH bytes; a longer
  body, with a Content-Length or chunked, is a 413.
- `read_json_object(allowed, required)` - the body as a JSON object: 415 when
  it is not JSON, 400 naming the line and column of a syntax error, a
  nesting depth over MAX_JSON_DEPTH (64: checked before parsing, by the same
  scan the typed fields use), an unknown or a missing field.
- every JSON error is `{"error": {"message", "field"[, "location"]}}`
  (`ApiError.to_dict`); messages are capped (MAX_MESSAGE_CHARS).
- `bound_request_head()` - a URL over LIMIT_URL_BYTES is a 414, more header
  fields than LIMIT_HEADER_FIELDS or a longer header line than
  LIMIT_HEADER_BYTES a 431: all below gunicorn's own limits, so the app
  answers (with its headers) wherever gunicorn lets a request through.
- `quote(value)` - a value shown inside a message, cut to 80 characters.
- `init_app(app)` - the app-wide handlers: JSON under /api, a friendly HTML
  page elsewhere, for ApiError, TokenizerError, every HTTP error and any
  unexpected exception (logged, never shown).

What it does not do: validate field values (webapp.inputs does) or know any
route.
"""

from __future__ import annotations

import io
import json
from typing import Any, Mapping


from flask import Flask, current_app, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from webapp.tokenizer import MAX_JSON_DEPTH, TokenizerError, json_depth

#: An error message longer than this is cut (it should never be: values are quoted short).
MAX_MESSAGE_CHARS = 2000
QUOTE_CHARS = 80


class ApiError(Exception):
    """A request the app refuses: message, field at fault, HTTP status, location."""

    def __init__(
        self, message: str, *, field: str = "body", status: int = 400, location: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status
        self.location = dict(location or {})

    @classmethod
    def from_tokenizer(cls, exc: TokenizerError, status: int = 400) -> "ApiError":
        return cls(exc.message, field=exc.field, status=status, location=exc.location)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"message": _cap(self.message), "field": self.field}
        if self.location:
            out["location"] = self.location
        return out


def quote(value: Any, limit: int = QUOTE_CHARS) -> str:
    """A value shown inside a message: JSON-ish, ASCII, at most `limit` characters plus "…"."""
    if isinstance(value, (bytes, bytearray)):
        text = repr(bytes(value[: limit + 1]))
    elif isinstance(value, (str, int, float, bool)) or value is None:
        text = json.dumps(value if not isinstance(value, str) else value[: limit + 1], ensure_ascii=True)
    else:
        text = "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__
    return text if len(text) <= limit else text[:limit] + "…"


def cut(text: str, limit: int = QUOTE_CHARS) -> str:
    """`text` shortened to `limit` characters plus "…" (for quoting a string as is)."""
    return text if len(text) <= limit else text[:limit] + "…"


def _cap(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE_CHARS else message[:MAX_MESSAGE_CHARS] + "…"


# --- bodies -------------------------------------------------------------------------


def _too_large() -> ApiError:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    return ApiError(
        f"body: the request is over the limit of {limit:,} bytes (setting MAX_CONTENT_LENGTH)"
        if limit
        else "body: the request is too large",
        status=413,
        location={"limit": limit} if limit else None,
    )


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
        data = request.stream.read(limit + 1)
        if len(data) > limit:
            raise _too_large()
        if request.content_length is None and len(data) == limit and request.stream.read(1):
            raise _too_large()
    except RequestEntityTooLarge:
        raise _too_large() from None
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def parse_json(source: str) -> Any:
    """JSON text to a value, or an ApiError that says where it breaks."""
    if json_depth(source) > MAX_JSON_DEPTH:
        raise ApiError(
            f"body: JSON nested too deeply (more than {MAX_JSON_DEPTH} levels)", location={"limit": MAX_JSON_DEPTH}
        )
    try:
        return json.loads(source, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise ApiError(
            f"body: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            location={"line": exc.lineno, "column": exc.colno},
        ) from None
    except RecursionError:
        raise ApiError("body: JSON nested too deeply") from None
    except ValueError as exc:  # NaN / Infinity, or an integer of over 4,300 digits
        raise ApiError(f"body: invalid JSON: {_cap(str(exc))[:200]}") from None


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


# --- the app-wide handlers ----------------------------------------------------------

_FRIENDLY = {
    400: ("Bad request", "The request could not be understood."),
    404: ("Page not found", "There is nothing at this address."),
    405: ("Method not allowed", "This address does not accept that kind of request."),
    413: ("Too large", "The request is larger than this playground accepts."),
    414: ("Address too long", "The address is longer than this playground accepts; long input goes in a form."),
    431: ("Headers too large", "The request's headers are larger than this playground accepts."),
    415: ("Unsupported content type", "This address does not accept that kind of content."),
    500: ("Something went wrong", "The playground hit an unexpected problem. It has been logged."),
}
_HTTP_FIELDS = {404: "path", 405: "method", 413: "body", 415: "body", 500: "server"}


def wants_json() -> bool:
    return request.path == "/api" or request.path.startswith("/api/")


def _http_error_message(exc: HTTPException) -> str:
    code = exc.code or 500
    if code == 413:
        return _too_large().message
    if code == 405:
        allowed = ", ".join(sorted(m for m in (getattr(exc, "valid_methods", None) or []) if m not in ("HEAD", "OPTIONS")))
        return f"method: {request.method} is not allowed here" + (f" (use {allowed})" if allowed else "")
    if code == 404:
        return f"path: nothing at {quote(request.path)}"
    return f"{exc.name}: {exc.description}" if exc.description else str(exc.name)


def _render_error(code: int, message: str) -> tuple[str, int]:
    title, text = _FRIENDLY.get(code, (f"Error {code}", message))
    return render_template("error.html", code=code, heading=title, text=text, message=_cap(message), tool=None), code


def api_error(exc: ApiError) -> ResponseReturnValue:
    if wants_json():
        return jsonify({"error": exc.to_dict()}), exc.status
    return _render_error(exc.status, exc.message)


def tokenizer_error(exc: TokenizerError) -> ResponseReturnValue:
    return api_error(ApiError.from_tokenizer(exc))


def http_error(exc: HTTPException) -> ResponseReturnValue:
    code = exc.code or 500
    if code >= 500:
        return unexpected_error(exc)
    message = _http_error_message(exc)
    if wants_json():
        response = jsonify({"error": ApiError(message, field=_HTTP_FIELDS.get(code, "request")).to_dict()})
        response.status_code = code
        if code == 405 and getattr(exc, "valid_methods", None):
            response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
        return response
    return _render_error(code, message)


def unexpected_error(exc: Exception) -> ResponseReturnValue:
    """Never a trace: log the exception, answer a generic 500."""
    original = getattr(exc, "original_exception", None) or exc
    if not (isinstance(exc, HTTPException) and original is exc):
        current_app.logger.error("Unhandled error on %s %s", request.method, request.path, exc_info=original)
    message = "server: unexpected error (it has been logged)"
    if wants_json():
        return jsonify({"error": {"message": message, "field": "server"}}), 500
    return _render_error(500, message)


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


def init_app(app: Flask) -> None:
    """Register the handlers for the whole app."""
    app.before_request(bound_request_head)
    app.before_request(bound_chunked_body)
    app.register_error_handler(ApiError, api_error)
    app.register_error_handler(TokenizerError, tokenizer_error)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(Exception, unexpected_error)
