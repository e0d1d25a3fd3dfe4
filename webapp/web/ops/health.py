"""`GET /healthz` for load balancers and process supervisors.

Answers 200 `{"status": "ok", "database": "ok"}` when the app can reach its
database, 503 with `"database": "unavailable"` when it cannot. It does no
other work (no counting, no tokenizing), so probing it often is cheap.
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from webapp.infra.storage import get_storage

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz() -> Response:
    """Liveness plus a trivial database round trip; never cached."""
    database_ok = get_storage().ping()
    body = {"status": "ok" if database_ok else "error", "database": "ok" if database_ok else "unavailable"}
    response = jsonify(body)
    response.status_code = 200 if database_ok else 503
    response.headers["Cache-Control"] = "no-store"
    return response
