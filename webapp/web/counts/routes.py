"""Counts (blueprint `counts`): every preset's token count of one text.

What it does not do: encode (webapp.web.counts.counting).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
from typing import Any, Mapping
from urllib.parse import parse_qs, urlencode, urlsplit

from flask import Blueprint, Response, jsonify, render_template, request
from markupsafe import Markup

from webapp.infra import inputs, ratelimit
from webapp.infra.body import read_json_object
from webapp.infra.errors import ApiError
from webapp.jobs import views as job_views
from webapp.jobs.registry import done_view
from webapp.jobs.store import Job
from webapp.web.chat.chatting import EXAMPLE_TOOLS
from webapp.web.counts.counting import (
    SORT_KEYS, TOOLS_KEY, CountRow, Tools, count_all, counts_json, default_refs, read_sort, rows_of, sorted_rows,
)
from webapp.web.counts.kinds import KIND, counts_job
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


#: The page's button that fills the Tools box (as the Chat view's "Example tools").
EXAMPLE_ACTION = "counts-tools-example"


@bp.post("/api/counts")
def api_counts() -> Response:
    data = read_json_object(("text", "tokenizers", "tools"), ("text",))
    limits = inputs.current_limits()
    text = inputs.read_text(data["text"], limits)
    refs = inputs.read_tokenizer_refs(data["tokenizers"]) if data.get("tokenizers") is not None else default_refs()
    tools = inputs.read_tools(data.get("tools"), limits)
    job = counts_job(text, refs, tools)  # charged; over JOB_COUNTS_WORK: 202 and a job
    if job is not None:
        return job_views.accepted(job)
    return jsonify(counts_json(text, count_all(text, refs, tools=tools)))


def _table(text: str, rows: list[CountRow], sort: str, tools: Tools | None) -> dict[str, Any]:
    """What the results table shows of counted rows (inline or from a job)."""
    linked = len(text) <= LINK_TEXT_CHARS
    return {
        "rows": sorted_rows(rows, sort), "sort": sort,
        "sort_keys": SORT_KEYS if tools is None else (*SORT_KEYS, TOOLS_KEY), "tools_given": tools,
        "chars": len(text), "n_bytes": len(text.encode("utf-8")),
        "open_link": lambda name: "/bytes?" + urlencode({"tokenizer": name, **({"text": text} if linked else {})}),
        "link_has_text": linked,
    }


def _tools_field(fields: Mapping[str, Any]) -> str:
    """The Tools box as typed ("Example tools" fills it in; empty: no tools)."""
    if fields.get("action") == EXAMPLE_ACTION:
        return json.dumps(EXAMPLE_TOOLS, ensure_ascii=False, indent=2)
    raw = fields.get("tools")
    return raw if isinstance(raw, str) else ""


def _context(fields: Mapping[str, Any]) -> dict[str, Any]:
    raw = fields.get("text")
    text_field = raw if isinstance(raw, str) else EXAMPLE_TEXT
    tools_field = _tools_field(fields)
    sort = read_sort(fields.get("sort_by") or fields.get("sort"))
    limits = inputs.current_limits()
    read, found = inputs.collect({  # (both boxes' problems at once)
        "text": lambda: inputs.read_text(text_field, limits, form=True),
        "tools": lambda: inputs.read_tools(tools_field, limits, form=True, field="tools"),
    })
    errors: dict[str, TokenizerError | ApiError] = dict(found)
    text, tools = read.get("text", ""), read.get("tools")
    rows: list[CountRow] = []
    panel = None
    if not errors:
        try:
            job = counts_job(text, default_refs(), tools)  # charged; a long text: the job's panel in the results
            if job is not None:
                panel = Markup(job_views.render_panel(job, KIND))
            else:
                rows = count_all(text, default_refs(), tools=tools)
        except (TokenizerError, ApiError) as exc:  # (the time budget ran out, or a 429: said under the text)
            errors["text"] = exc
    error = errors.get("text")
    return {"tool": "counts", "title": "Counts", "state": {"text": text_field, "tools": tools_field, "sort": sort},
            "error": error.message if error else None, "errors": errors,
            "tools_changed": fields.get("action") == EXAMPLE_ACTION, "tools_sent": "tools" in fields,
            "job_panel": panel, **_table(text, rows, sort, None if errors else tools)}


@bp.route("/counts", methods=["GET", "POST"])
def counts_page() -> str:
    return render_template("counts.html", **_context(request.form if request.method == "POST" else request.args))


@bp.post("/fragments/counts")
def counts_fragment() -> str:
    context = _context(request.form)
    return render_template("partials/counts_fragment.html", fragment_error=context["error"], **context)


def _shown_sort() -> str:
    """The sort of the page a finished job shows on: the form's (a sort click that found the
    job done), else the page URL's (htmx sends it while the panel polls), else by name."""
    if request.values.get("sort_by") or request.values.get("sort"):
        return read_sort(request.values.get("sort_by") or request.values.get("sort"))
    query = parse_qs(urlsplit(request.headers.get("HX-Current-URL", "")).query)
    return read_sort((query.get("sort") or [""])[0])


@done_view(KIND, kinds=(KIND,), back=("counts.counts_page", "Counts"))
def _counted(job: Job, result: Any, params: dict[str, Any]) -> str:
    """A finished counts job: the table the inline path renders for the same text."""
    return render_template("partials/counts_results.html",
                           job_panel=None, **_table(str(params["text"]), rows_of(result), _shown_sort(),
                                                    params.get("tools")))
