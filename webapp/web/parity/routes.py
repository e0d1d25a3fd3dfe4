"""The parity lab over HTTP (blueprint `parity`): `POST /api/parity`, the Parity page and its fragment.

`{"a": spec, "b": spec[, "texts": [...]]}`, each spec as `/api/compare` takes it -> per text both
sides' ids and tokens (the differing ones marked), the first stage where they part and its detail,
and a count per stage (docs/parity.md). Without `texts`, the built-in probes.

What it does not do: read or bound the input (checking.py), attribute (webapp.tokenizer.parity).
"""

from __future__ import annotations

from flask import Blueprint, Response, jsonify, render_template, request

from webapp.infra import body, errors as http, inputs
from webapp.tokenizer import PresetMissing
from webapp.web.parity.checking import parity_json
from webapp.web.parity.page import context

bp = Blueprint("parity", __name__)


@bp.post("/api/parity")
def api_parity() -> Response:
    """Where two tokenizers part on each text, and at which stage."""
    data = body.read_json_object(("a", "b", "texts"), ("a", "b"))
    try:
        return jsonify(parity_json(data, inputs.current_limits()))
    except PresetMissing as exc:  # a preset this installation lacks: 503, the message says how to install it
        raise http.ApiError.from_tokenizer(exc, 503) from None


@bp.route("/parity", methods=["GET", "POST"])
def parity_page() -> str:
    return render_template("parity.html", **context(request.form if request.method == "POST" else request.args))


@bp.post("/fragments/parity")
def parity_fragment() -> str:
    return render_template("partials/parity_results.html", **context(request.form))
