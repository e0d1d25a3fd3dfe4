"""The real tokenizer presets over HTTP (blueprint `presets`).

What it does not do: read rank files (webapp.tokenizer.presets.openai) or encode
(webapp.tokenizer.api).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, jsonify, request

from webapp.infra.errors import not_found
from webapp.web.common.htmx import is_htmx, page_state, status
from webapp.web.playground.pages import full_page
from webapp.opened.store import preset_entry
from webapp.tokenizer import PRESET_NAMES, TokenizerError, get_preset, is_installed
from webapp.tokenizer.presets.catalog import PRESETS, VENDORS, is_preparing
from webapp.tokenizer.presets.openai import INSTALL_HINT

bp = Blueprint("presets", __name__)


def preset_listing() -> list[dict[str, Any]]:
    """What `GET /api/tokenizers` lists (no rank file is read)."""
    out = []
    for name in PRESET_NAMES:
        info = get_preset(name).describe()
        info["installed"] = is_installed(name)
        info["preparing"] = is_preparing(name)
        out.append(info)
    return out


@bp.get("/api/tokenizers")
def api_presets() -> Response:
    return jsonify({"presets": preset_listing(), "install": INSTALL_HINT})


@bp.post("/files/preset/<tool>")
def choose_preset(tool: str) -> Any:
    if tool != "bytes":
        raise not_found(f"path: no tool page {tool[:40]!r}")
    name = request.form.get("tokenizer_preset", "")
    previous = request.form.get("tokenizer", "")
    try:
        entry = preset_entry(name)
    except TokenizerError as exc:
        if is_htmx():
            return status(tool, previous, exc.message, reset_inputs=False)
        return full_page(tool, page_state(tool, previous), open_error=exc.message)
    if is_htmx():
        return status(tool, entry.id, None, reset_inputs=True, refresh=True)
    state = page_state(tool, entry.id)
    state["pretokenize"] = entry.tok.pretokenize
    return full_page(tool, state)


@bp.app_context_processor
def _template_helpers() -> dict[str, Any]:
    return {"preset_names": PRESET_NAMES, "preset_info": PRESETS, "preset_vendors": VENDORS,
            "preset_preparing": preparing_presets()}


def preparing_presets() -> frozenset[str]:
    """The presets the set-up step is still preparing (their buttons say so); a few file checks."""
    return frozenset(name for name in PRESET_NAMES if is_preparing(name))
