"""Answering errors, for every route of the app: one error type, one path for every error.

What it does not do: read bodies (webapp.infra.body), validate field values
(webapp.infra.inputs) or know any route.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
from typing import Any, Mapping


from flask import Flask, current_app, jsonify, render_template, request
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException, SecurityError
from webapp.tokenizer import TokenizerError


#: An error message longer than this is cut (it should never be: values are quoted short).
MAX_MESSAGE_CHARS = 2000
QUOTE_CHARS = 80


class ApiError(Exception):
    """A request the app refuses: message, field at fault, HTTP status, location."""

    def __init__(
        self, message: str, *, field: str = "body", status: int = 400, location: Mapping[str, Any] | None = None,
        page: tuple[str, str] | None = None, retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.field = field
        self.status = status
        self.location = dict(location or {})
        self.page = page  # (heading, explanation) for the HTML error page; the status's own by default
        self.retry_after = retry_after  # seconds, sent as Retry-After (a 429 or 503)

    @classmethod
    def from_tokenizer(cls, exc: TokenizerError, status: int = 400) -> "ApiError":
        """The error as an answer; an error that carries its own `http_status` (the storage's
        503, webapp.infra.storage.StorageUnavailable) keeps it, and its `retry_after`."""
        own = getattr(exc, "http_status", None)
        return cls(exc.message, field=exc.field, status=own or status, location=exc.location,
                   retry_after=getattr(exc, "retry_after", None) if own else None)

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


def too_large() -> ApiError:
    limit = current_app.config.get("MAX_CONTENT_LENGTH")
    return ApiError(
        f"body: the request is over the limit of {limit:,} bytes (setting MAX_CONTENT_LENGTH)"
        if limit
        else "body: the request is too large",
        status=413,
        location={"limit": limit} if limit else None,
    )


# --- the app-wide handlers ----------------------------------------------------------

_FRIENDLY = {
    400: ("Bad request", "The request could not be understood."),
    403: ("Forbidden", "This request is not allowed."),
    429: ("Too many requests", "Too many requests from your address; wait a little and try again."),
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
        return too_large().message
    if code == 405:
        allowed = ", ".join(sorted(m for m in (getattr(exc, "valid_methods", None) or []) if m not in ("HEAD", "OPTIONS")))
        return f"method: {request.method} is not allowed here" + (f" (use {allowed})" if allowed else "")
    if code == 404:
        return f"path: nothing at {quote(request.path)}"
    return f"{exc.name}: {exc.description}" if exc.description else str(exc.name)


def _render_error(code: int, message: str, page: tuple[str, str] | None = None) -> tuple[str, int]:
    title, text = page or _FRIENDLY.get(code, (f"Error {code}", message))
    return render_template("error.html", code=code, heading=title, text=text, message=_cap(message), tool=None), code


def api_error(exc: ApiError) -> ResponseReturnValue:
    if wants_json():
        return json_error(exc)
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
    body, status = _render_error(exc.status, exc.message, exc.page)
    return body, status, headers


def json_error(exc: ApiError | TokenizerError) -> ResponseReturnValue:
    """The error as JSON on any path: for a blueprint whose routes outside /api answer a page's
    script with JSON (`bp.register_error_handler`), so the script can show the message and field."""
    if isinstance(exc, TokenizerError):
        exc = ApiError.from_tokenizer(exc)
    headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
    return jsonify({"error": exc.to_dict()}), exc.status, headers


def tokenizer_error(exc: TokenizerError) -> ResponseReturnValue:
    return api_error(ApiError.from_tokenizer(exc))


def untrusted_host() -> ResponseReturnValue:
    """A Host header outside TRUSTED_HOSTS (Flask refuses it before routing, so
    no page can be built for it: plain text, or JSON under /api)."""
    host = str(request.environ.get("HTTP_HOST", ""))[:100]
    message = f"host: {host!r} is not one of the host names this playground answers (setting TRUSTED_HOSTS)"
    if wants_json():
        return jsonify({"error": {"message": message, "field": "host"}}), 400
    return message + "\n", 400, {"Content-Type": "text/plain; charset=utf-8"}


def http_error(exc: HTTPException) -> ResponseReturnValue:
    code = exc.code or 500
    if isinstance(exc, SecurityError):
        return untrusted_host()
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


def not_found(message: str, *, field: str = "path", page: tuple[str, str] | None = None) -> ApiError:
    """The app's one 404 (raise it): JSON under /api, error.html elsewhere, with
    `page` = (heading, explanation) when the default "Page not found" says too little."""
    return ApiError(message, field=field, status=404, page=page)


def init_app(app: Flask) -> None:
    """Register the handlers for the whole app."""
    app.register_error_handler(ApiError, api_error)
    app.register_error_handler(TokenizerError, tokenizer_error)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(Exception, unexpected_error)
