"""Share links: save a tool page's whole state, open it again at /s/<id>.

What it does not do: parse or validate the fields' contents (a share of a page
showing an error reopens showing the same error), or delete shares.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
import re
from typing import Any, Mapping

from flask import (
    Blueprint,
    current_app,
    jsonify,
    make_response,
    redirect,
    render_template,
    request,
    url_for,
)

from flask.typing import ResponseReturnValue

from webapp.infra import ratelimit
from webapp.infra.errors import ApiError, not_found
from webapp.infra.body import read_json_object
from webapp.web.playground.fields import chat_rows_json
from webapp.web.playground.pages import PageExtras, render_tool_page
from webapp.web.common.htmx import is_htmx
from webapp.web.common.tools import TOOLS
from webapp.infra.storage import BlobTooLarge, get_storage, is_valid_id
from webapp.tokenizer import TokenizerError, load_json

bp = Blueprint("share", __name__)

STATE_KIND = "state"
#: The form fields a share keeps. "tokenizer" is the id of a tokenizer file kept
#: server-side by the import feature, or a preset's name; "pretokenize" its
#: splitting option; "special" ("all" or empty) whether special tokens are recognised.
STATE_FIELDS = (
    "text",
    "merges",
    "vocab",
    "ids",
    "words",
    "num_merges",
    "view",
    "pretokenize",
    "tokenizer",
    "special",
    # side B of the Bytes page's comparison (webapp.web.compare.page)
    "compare",
    "compare_merges",
    "compare_pretokenize",
    "compare_special",
    # the Bytes page's Chat view (webapp.web.chat.chatting): the messages as JSON, the generation prompt,
    # the tools as JSON
    "chat",
    "chat_prompt",
    "chat_tools",
)
#: Fields whose JSON value (list/dict) an API client may send as-is; it is
#: stored as the compact JSON text the page's parser accepts.
_JSON_FIELDS = frozenset({"merges", "vocab", "ids", "words", "chat", "chat_tools"})


# --------------------------------------------------------------------------
# Pure state handling


def normalize_state(raw: Mapping[str, Any], *, strict: bool) -> dict[str, str]:
    """The tool and the known fields as strings.

    `strict` (the JSON API) refuses unknown keys and wrong types; the form
    path ignores extra fields a page may carry (buttons, csrf tokens...).
    """
    tool = raw.get("tool")
    if not isinstance(tool, str) or tool not in TOOLS:
        raise ApiError(
            f"tool should be one of {', '.join(TOOLS)}, got {_short_repr(tool)}", field="tool"
        )
    if strict:
        unknown = sorted(str(k) for k in raw if k != "tool" and k not in STATE_FIELDS)
        if unknown:
            raise ApiError(
                f"unknown state field {_short_repr(unknown[0])}; "
                f"a state has tool and any of: {', '.join(STATE_FIELDS)}",
                field=unknown[0][:64],
            )
    state: dict[str, str] = {"tool": tool}
    for name in STATE_FIELDS:
        if name not in raw or raw[name] is None:
            continue
        state[name] = _check_unicode(name, _field_text(name, raw[name], strict=strict))
    return state


_SURROGATE = re.compile("[\\ud800-\\udfff]")


def _check_unicode(name: str, value: str) -> str:
    """Refuse a lone surrogate (JSON can carry "\\ud800"): no page could show it."""
    found = _SURROGATE.search(value)
    if found:
        raise ApiError(
            f"{name}: character {found.start() + 1} is a lone surrogate (U+{ord(found.group()):04X}), "
            "which is not text; a shared state must be valid Unicode",
            field=name,
            location={"position": found.start() + 1},
        )
    return value


def displayable(state: Mapping[str, str]) -> dict[str, str]:
    """A stored state with any lone surrogate shown as U+FFFD (states saved before
    they were refused at write time must still open)."""
    return {k: _SURROGATE.sub("\ufffd", v) if isinstance(v, str) else v for k, v in state.items()}


def _field_text(name: str, value: Any, *, strict: bool) -> str:
    if isinstance(value, str):
        return value
    if not strict:
        return str(value)
    if isinstance(value, bool):
        raise ApiError(f"{name} should be a string, got a boolean", field=name)
    if isinstance(value, int) and name == "num_merges":
        return str(value)
    if isinstance(value, (list, dict)) and name in _JSON_FIELDS:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    kind = "a list or object" if isinstance(value, (list, dict)) else type(value).__name__
    raise ApiError(f"{name} should be a string, got {kind}", field=name)


def encode_state(state: Mapping[str, str]) -> bytes:
    """Canonical bytes of a state: the same state always gives the same bytes.

    `ensure_ascii` keeps lone surrogates (possible in JSON input) encodable.
    """
    return json.dumps(dict(state), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode(
        "ascii"
    )


def decode_state(data: bytes) -> dict[str, str]:
    """The inverse of `encode_state`."""
    state: dict[str, str] = load_json(data)  # (the one reader: its depth checked like any JSON a user sent)
    return state


def _short_repr(value: Any, limit: int = 40) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str) if value is not None else "nothing"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _human_bytes(n: int) -> str:
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MiB"
    if n >= 1024:
        return f"{n / 1024:.1f} KiB"
    return f"{n} bytes"


# --------------------------------------------------------------------------
# Saving and loading through the app's storage


def save_state(raw: Mapping[str, Any], *, strict: bool) -> tuple[str, bool, dict[str, str]]:
    """Validate, size-check and store a state; returns (id, created, state)."""
    ratelimit.check_write()  # a 429 before anything is stored
    state = normalize_state(raw, strict=strict)
    data = encode_state(state)
    limit = int(current_app.config["LIMIT_SHARE_BYTES"])
    if len(data) > limit:
        raise ApiError(
            f"this state is {_human_bytes(len(data))}; a shared state can be at most "
            f"{_human_bytes(limit)} (LIMIT_SHARE_BYTES = {limit:,} bytes)",
            field="state",
            status=413,
        )
    try:
        share_id, created = get_storage().save_blob(STATE_KIND, data)
    except BlobTooLarge as exc:  # storage limit set lower than the share limit
        raise ApiError(str(exc), field="state", status=413) from exc
    return share_id, created, state


def load_state(share_id: str) -> dict[str, str] | None:
    """The saved state, or None for an unknown or malformed id."""
    if not is_valid_id(share_id):
        return None
    data = get_storage().get_blob(STATE_KIND, share_id)
    return None if data is None else decode_state(data)


def share_url(share_id: str) -> str:
    """The absolute link on PUBLIC_URL (or its older name SHARE_BASE_URL); without
    either, on the request's host (which TRUSTED_HOSTS bounds)."""
    base: str | None = current_app.config.get("PUBLIC_URL") or current_app.config.get("SHARE_BASE_URL")
    if base:
        return base.rstrip("/") + url_for("share.show", share_id=share_id)
    return url_for("share.show", share_id=share_id, _external=True)


def _share_info(share_id: str, tool: str) -> dict[str, str]:
    return {
        "id": share_id,
        "url": share_url(share_id),
        "path": url_for("share.show", share_id=share_id),
        "tool": tool,
    }


# --------------------------------------------------------------------------
# Routes


@bp.post("/share")
def create_from_form() -> ResponseReturnValue:
    """The Share button: the whole form is the state."""
    try:
        form: Mapping[str, Any] = request.form
        if "chat_rows" in request.form:  # the Chat editor's rows are the `chat` field
            form = {**request.form.to_dict(), "chat": chat_rows_json(request.form)}
        share_id, _created, state = save_state(form, strict=False)
    except (ApiError, TokenizerError) as caught:  # a TokenizerError here: the storage is unavailable (503)
        exc = caught if isinstance(caught, ApiError) else ApiError.from_tokenizer(caught)
        if is_htmx():
            # htmx swaps only 2xx answers by default; the message is the content.
            return render_template("partials/share_result.html", error=exc.message)
        headers = {"Retry-After": str(exc.retry_after)} if exc.retry_after is not None else {}
        return render_template("share_error.html", error=exc.message), exc.status, headers
    if is_htmx():
        return render_template("partials/share_result.html", share=_share_info(share_id, state["tool"]))
    return redirect(url_for("share.show", share_id=share_id), code=303)


@bp.get("/s/<share_id>")
def show(share_id: str) -> ResponseReturnValue:
    """The saved page, computed afresh from the saved fields."""
    state = load_state(share_id)
    if state is None:
        raise not_found(f"share: no saved page has the id {share_id[:64]}", field="id", page=(
            "This share link does not exist",
            "Share links look like /s/abcdefgh23456789 (16 lowercase letters and digits); "
            "check that the whole link was copied."))
    state = displayable(state)
    tool = state.pop("tool")
    # The share control inside the page shows this link.
    response = make_response(render_tool_page(tool, state, PageExtras(share=_share_info(share_id, tool))))
    # Share links are unlisted: whoever has the link may look, search engines should not.
    response.headers["X-Robots-Tag"] = "noindex"
    return response


@bp.post("/api/share")
def api_create() -> ResponseReturnValue:
    """JSON state in; id and link out (errors: webapp.infra.errors's handlers)."""
    payload = read_json_object(None)  # normalize_state names unknown fields itself
    share_id, created, state = save_state(payload, strict=True)
    return jsonify(_share_info(share_id, state["tool"])), 201 if created else 200


@bp.get("/api/share/<share_id>")
def api_get(share_id: str) -> ResponseReturnValue:
    """A saved state by id."""
    state = load_state(share_id)
    if state is None:
        reason = "is not a share id" if not is_valid_id(share_id) else "was not found"
        raise ApiError(f"share {_short_repr(share_id)} {reason}", field="id", status=404)
    return jsonify({**_share_info(share_id, state["tool"]), "state": state})
