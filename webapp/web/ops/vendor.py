"""Serves third-party front-end assets (htmx) from the app's own origin.

The files come from `node_modules/`, installed by npm at setup time from the
pinned package.json; nothing is copied into the repository and nothing is
loaded from a CDN.
"""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

from webapp.infra.errors import not_found

from webapp.config import PROJECT_ROOT

bp = Blueprint("vendor", __name__, url_prefix="/vendor")

# Public name -> (folder under node_modules, file name). Only these are served.
VENDORED_FILES = {
    "htmx.min.js": ("htmx.org/dist", "htmx.min.js"),
}


@bp.get("/<name>")
def asset(name: str) -> Response:
    """One vendored asset, cached by the browser (the version is pinned)."""
    if name not in VENDORED_FILES:
        raise not_found(f"path: no asset {name[:80]!r}")
    folder, filename = VENDORED_FILES[name]
    return send_from_directory(PROJECT_ROOT / "node_modules" / folder, filename, max_age=86400)
