"""Compare two tokenizers on one text over HTTP (blueprint `compare`): `POST /api/compare`.

What it does not do: encode or compare (webapp.web.compare.comparing), or
the Bytes page's comparison card (webapp.web.compare.page, which the
playground renders).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from webapp.infra import body, errors as http
from webapp.infra import inputs, ratelimit
from webapp.jobs import views as jobs
from webapp.web.compare.comparing import compare_json
from webapp.web.compare.kinds import compare_job
from webapp.tokenizer import PresetMissing

bp = Blueprint("compare", __name__)


@bp.post("/api/compare")
def api_compare() -> Response:
    """Both encodings and their boundaries; a long text or merge list is a job (202), as /api/encode."""
    data = body.read_json_object(("text", "a", "b"), ("text", "a", "b"))
    limits = inputs.current_limits()
    try:
        job = compare_job(data, limits)  # over the thresholds: checked cheaply, then a job
        if job is not None:
            return jobs.accepted(job)
        ratelimit.charge_work(len(inputs.read_text(data["text"], limits)), 2)
        return jsonify(compare_json(data, limits))
    except PresetMissing as exc:  # a preset this installation lacks: 503, the message says how to install it
        raise http.ApiError.from_tokenizer(exc, 503) from None
