"""Counts (blueprint `counts`): every preset's token count of one text.

- `POST /api/counts` - `{"text"[, "tokenizers": [names or ids]]}` ->
  `{"chars", "bytes", "counts": [{"tokenizer", "tokens", "chars_per_token",
  "bytes_per_token"[, "error"]}]}`, every preset by default, in the
  registry's order.
- `GET|POST /counts` - the page: the text, a sortable table (`sort`: a column,
  "-" before it for descending) whose rows open that model on the Bytes page;
  `POST /fragments/counts` is its live update (htmx). State lives in the form
  and the URL (`?text=...&sort=-tokens`), so it works without JavaScript.

What it does not do: encode (webapp.web.counts.counting).
"""

from __future__ import annotations

from typing import Any, Mapping
from urllib.parse import urlencode

from flask import Blueprint, Response, jsonify, render_template, request

from webapp.infra import inputs, ratelimit
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError
from webapp.web.counts.counting import SORT_KEYS, count_all, default_refs, read_sort, sorted_rows
from webapp.tokenizer import TokenizerError

bp = Blueprint("counts", __name__)

#: A row links to the Bytes page with the text in the URL up to this length (longer: the model alone).
LINK_TEXT_CHARS = 2000
#: A few lines in several scripts and some code: the presets' counts of it differ (tests/app/test_counts_example.py).
EXAMPLE_TEXT = (
    "All human beings are born free and equal in dignity and rights.\n"
    "Tous les êtres humains naissent libres et égaux en dignité et en droits.\n"
    "Все люди рождаются свободными и равными в своем достоинстве и правах.\n"
    "人人生而自由，在尊严和权利上一律平等。\n"
    "सभी मनुष्यों को गौरव और अधिकारों के मामले में जन्मजात स्वतन्त्रता प्राप्त है।\n"
    "ყველა ადამიანი იბადება თავისუფალი და თანასწორი თავისი ღირსებითა და უფლებებით.\n"
    "def count(text: str) -> int:\n    return len(encode(text))  # 4 spaces, then code\n"
)


@bp.post("/api/counts")
def api_counts() -> Response:
    data = read_json_object(("text", "tokenizers"), ("text",))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    refs = inputs.read_tokenizer_refs(data["tokenizers"]) if data.get("tokenizers") is not None else default_refs()
    ratelimit.charge_work(len(text), len(refs))
    rows = count_all(text, refs)
    return jsonify({"chars": len(text), "bytes": len(text.encode("utf-8")), "counts": [r.to_dict() for r in rows]})


def _context(fields: Mapping[str, Any]) -> dict[str, Any]:
    raw = fields.get("text")
    text_field = raw if isinstance(raw, str) else EXAMPLE_TEXT
    sort = read_sort(fields.get("sort_by") or fields.get("sort"))
    limits = inputs.current_limits()
    error = None
    rows = []
    text = ""
    try:
        text = inputs.read_text(text_field, limits, form=True)
        refs = default_refs()
        ratelimit.charge_work(len(text), len(refs))
        rows = sorted_rows(count_all(text, refs), sort)
    except (TokenizerError, ApiError) as exc:  # (an ApiError: the request's time budget ran out)
        error = exc.message
    linked = len(text) <= LINK_TEXT_CHARS
    return {
        "tool": "counts", "title": "Counts", "state": {"text": text_field, "sort": sort}, "rows": rows,
        "error": error, "sort": sort, "sort_keys": SORT_KEYS, "chars": len(text), "n_bytes": len(text.encode("utf-8")),
        "open_link": lambda name: "/bytes?" + urlencode({"tokenizer": name, **({"text": text} if linked else {})}),
        "link_has_text": linked,
    }


@bp.route("/counts", methods=["GET", "POST"])
def counts_page() -> str:
    return render_template("counts.html", **_context(request.form if request.method == "POST" else request.args))


@bp.post("/fragments/counts")
def counts_fragment() -> str:
    return render_template("partials/counts_results.html", **_context(request.form))
