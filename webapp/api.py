"""The JSON API and the app-wide error pages.

Routes (all POST, JSON body in, JSON out):

- `/api/encode`      {"text", "merges"[, "pretokenize"]} -> {"ids", "tokens"}
- `/api/decode`      {"ids", "vocab"}                     -> {"text"}
- `/api/encode-text` {"text", "vocab", "merges"}          -> {"ids", "tokens"}
- `/api/train`       {"words", "num_merges"}              -> {"merges", "pairs"}

Fields take the seed JSON shapes, or a string in the plain typed form the
pages accept ("108 111 256" lines, "l o" lines, "257 97"). Every problem is a
4xx with `{"error": {"message", "field"[, "location"]}}`, never a 500:
malformed JSON, a body that is not a JSON object, unknown or missing fields,
wrong types, limits, engine errors. The error handlers registered here answer
JSON under /api and a friendly HTML page elsewhere, for every HTTP error and
for unexpected exceptions (logged, never shown).

Parsing and validation live in `webapp.inputs`; this module only maps
requests to it and results to JSON.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Mapping

from flask import Blueprint, Response, current_app, jsonify, render_template, request
from werkzeug.exceptions import HTTPException

from webapp import inputs, jobs, offload
from webapp import tokenizer as tk
from webapp.tokenizer import TokenizerError
from webapp.tokenizer.pretokenize import pretokenized_encode

bp = Blueprint("api", __name__, url_prefix="/api")


class RequestError(Exception):
    """A problem with the request itself (not with one field's value)."""

    def __init__(self, message: str, status: int = 400, field: str = "body", location: dict | None = None) -> None:
        super().__init__(message)
        self.message, self.status, self.field, self.location = message, status, field, location or {}


def error_response(message: str, field: str, status: int, location: Mapping[str, Any] | None = None) -> Response:
    body: dict[str, Any] = {"message": message, "field": field}
    if location:
        body["location"] = dict(location)
    response = jsonify({"error": body})
    response.status_code = status
    return response


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def read_json_object(allowed: tuple[str, ...], required: tuple[str, ...]) -> dict[str, Any]:
    """The request body as a JSON object with only known fields and every required one."""
    mimetype = request.mimetype or ""
    if mimetype != "application/json" and not mimetype.endswith("+json"):
        raise RequestError(
            f"body: send JSON with Content-Type: application/json (got {mimetype or 'no content type'})",
            status=415,
        )
    raw = request.get_data(cache=False)  # MAX_CONTENT_LENGTH is enforced here (413)
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RequestError(f"body: not valid UTF-8 at byte offset {exc.start}", location={"offset": exc.start}) from None
    try:
        data = json.loads(source, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise RequestError(
            f"body: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            location={"line": exc.lineno, "column": exc.colno},
        ) from None
    except RecursionError:
        raise RequestError("body: JSON nested too deeply") from None
    except ValueError as exc:
        raise RequestError(f"body: invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise RequestError("body: expected a JSON object like {" + ", ".join(f'"{f}": ...' for f in required) + "}")
    unknown = [key for key in data if key not in allowed]
    if unknown:
        raise RequestError(
            f"{unknown[0]}: unknown field; this endpoint takes {', '.join(allowed)}",
            field=str(unknown[0])[:100],
        )
    for name in required:
        if name not in data:
            raise RequestError(f"{name}: missing (required: {', '.join(required)})", field=name)
    return data


def _handle(
    allowed: tuple[str, ...], required: tuple[str, ...], work: Callable[[dict[str, Any], inputs.Limits], Any]
) -> Response:
    try:
        data = read_json_object(allowed, required)
        answer = work(data, inputs.current_limits())
        return answer if isinstance(answer, Response) else jsonify(answer)
    except RequestError as exc:
        return error_response(exc.message, exc.field, exc.status, exc.location)
    except TokenizerError as exc:
        return error_response(exc.message, exc.field, 400, exc.location)


def byte_tokens(text: str, ids: list[int], merges: Any) -> list[dict[str, Any]]:
    """Each token's id, bytes, text (null when not UTF-8 on its own) and byte span.

    Bytes come from the vocab the merges imply; for odd lists where that does
    not spell the text back (an id defined twice), the engine's trace is used.
    """
    vocab = tk.implied_byte_vocab(merges)
    data = text.encode("utf-8")
    pieces = [vocab.get(i) for i in ids]
    if any(p is None for p in pieces) or b"".join(pieces) != data:  # type: ignore[arg-type]
        trace = tk.encode_trace(text, merges, max_steps=0, max_tokens=len(ids), max_sequence=0)
        pieces = [t.value for t in trace.tokens]  # type: ignore[misc]
    shown_of: dict[bytes, tuple[str | None, list[int]]] = {}  # tokens repeat: decode each once
    out = []
    offset = 0
    for token_id, piece in zip(ids, pieces):
        assert piece is not None
        known = shown_of.get(piece)
        if known is None:
            try:
                known = (piece.decode("utf-8"), list(piece))
            except UnicodeDecodeError:
                known = (None, list(piece))
            shown_of[piece] = known
        end = offset + len(piece)
        out.append({"id": token_id, "text": known[0], "bytes": known[1], "start": offset, "end": end})
        offset = end
    return out


@bp.post("/encode")
def encode() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> Any:
        job = offload.encode_job(data)  # a long text or merge list: 202 and a job
        if job is not None:
            return jobs.accepted(job)
        values, errors = inputs.collect(
            {
                "text": lambda: inputs.read_text(data["text"], limits),
                "merges": lambda: inputs.read_byte_merges(data["merges"], limits),
                "pretokenize": lambda: inputs.read_pretokenize(data.get("pretokenize", "none")),
            }
        )
        if errors:
            raise next(iter(errors.values()))
        text, merges, scheme = values["text"], values["merges"], values["pretokenize"]
        ids = pretokenized_encode(text, merges, scheme)  # scheme "none" is the specified encode
        return {"ids": ids, "tokens": byte_tokens(text, ids, merges)}

    return _handle(("text", "merges", "pretokenize"), ("text", "merges"), work)


@bp.post("/decode")
def decode() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> dict[str, Any]:
        ids = inputs.read_ids(data["ids"], limits)
        vocab = inputs.read_byte_vocab(data.get("vocab", {}), limits)
        return {"text": tk.decode(ids, vocab)}

    return _handle(("ids", "vocab"), ("ids",), work)


@bp.post("/encode-text")
def encode_text() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> dict[str, Any]:
        text = inputs.read_text(data["text"], limits)
        vocab = inputs.read_char_vocab(data["vocab"], limits)
        merges = inputs.read_char_merges(data["merges"], limits)
        ids = tk.bpe_encode_text(text, vocab, merges)
        return {"ids": ids, "tokens": tk.char_tokens(text, merges)}

    return _handle(("text", "vocab", "merges"), ("text", "vocab", "merges"), work)


@bp.post("/train")
def train() -> Response:
    def work(data: dict[str, Any], limits: inputs.Limits) -> Any:
        job = offload.train_job(data["words"], data["num_merges"])  # large: 202 and a job
        if job is not None:
            return jobs.accepted(job)
        words = inputs.read_words(data["words"], limits)
        num_merges = inputs.read_num_merges(data["num_merges"], limits)
        trace = tk.train_trace(words, num_merges, runners_up=0, max_steps=0)
        return {"merges": trace.merges, "pairs": [list(p) for p in trace.pairs]}

    return _handle(("words", "num_merges"), ("words", "num_merges"), work)


# --- error handlers (app-wide) ----------------------------------------------------

_FRIENDLY = {
    400: ("Bad request", "The request could not be understood."),
    404: ("Page not found", "There is nothing at this address."),
    405: ("Method not allowed", "This address does not accept that kind of request."),
    413: ("Too large", "The request is larger than this playground accepts."),
    415: ("Unsupported content type", "This address does not accept that kind of content."),
    500: ("Something went wrong", "The playground hit an unexpected problem. It has been logged."),
}
_HTTP_FIELDS = {404: "path", 405: "method", 413: "body", 415: "body", 500: "server"}


def _wants_json() -> bool:
    return request.path == "/api" or request.path.startswith("/api/")


def _http_error_message(exc: HTTPException) -> str:
    code = exc.code or 500
    if code == 413:
        limit = current_app.config.get("MAX_CONTENT_LENGTH")
        if limit:
            return f"body: the request is over the limit of {limit:,} bytes (setting MAX_CONTENT_LENGTH)"
        return "body: the request is too large"
    if code == 405:
        allowed = ", ".join(sorted(m for m in (exc.valid_methods or []) if m not in ("HEAD", "OPTIONS")))  # type: ignore[attr-defined]
        return f"method: {request.method} is not allowed here" + (f" (use {allowed})" if allowed else "")
    if code == 404:
        return f"path: nothing at {request.path}"
    return f"{exc.name}: {exc.description}" if exc.description else str(exc.name)


def _render_error(code: int, message: str) -> tuple[str, int]:
    title, text = _FRIENDLY.get(code, (f"Error {code}", message))
    return render_template("error.html", code=code, heading=title, text=text, message=message, tool=None), code


@bp.app_errorhandler(HTTPException)
def http_error(exc: HTTPException) -> Response | tuple[str, int]:
    code = exc.code or 500
    if code >= 500:
        return unexpected_error(exc)
    message = _http_error_message(exc)
    if _wants_json():
        response = error_response(message, _HTTP_FIELDS.get(code, "request"), code)
        if code == 405 and getattr(exc, "valid_methods", None):
            response.headers["Allow"] = ", ".join(exc.valid_methods)  # type: ignore[attr-defined]
        return response
    return _render_error(code, message)


@bp.app_errorhandler(Exception)
def unexpected_error(exc: Exception) -> Response | tuple[str, int]:
    """Never a trace: log the exception, answer a generic 500."""
    original = getattr(exc, "original_exception", None) or exc
    if not (isinstance(exc, HTTPException) and original is exc):
        current_app.logger.error("Unhandled error on %s %s", request.method, request.path, exc_info=original)
    message = "server: unexpected error (it has been logged)"
    if _wants_json():
        return error_response(message, "server", 500)
    return _render_error(500, message)
