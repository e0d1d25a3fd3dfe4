"""The playground pages: Bytes, Characters and Train, full pages and htmx fragments.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Mapping

from flask import Blueprint, Response, redirect, render_template, request, url_for
from werkzeug.wrappers import Response as BaseResponse
from markupsafe import Markup, escape

from webapp.opened import active as act
from webapp.web.compare import page as compare
from webapp.infra.errors import not_found
from webapp.infra import inputs
from webapp.jobs import queue
from webapp.web.playground import kinds
from webapp import tokenizer as tk
from webapp.web.playground.examples import EXAMPLES, LANDING_PRESET, LANDING_TEXT
from webapp.web.playground.actions import apply_action
from webapp.web.playground.compute import COMPUTE
from webapp.web.playground.fields import (
    ERROR_FIELDS,
    FIELDS,
    TOOL_TITLES,
    VIEWS,
    example_state,
    normalize_state,
)
from webapp.web.common.tools import FILE_TOOLS, TOOLS, template_constants
from webapp.tokenizer import TokenizerError, is_installed
from webapp.tokenizer.textformats import format_ids

bp = Blueprint("pages", __name__)


# Live updates wait this long after the last keystroke (htmx `delay:`). With
# `hx-sync="this:queue last"` at most one request is in flight and only the
# last keystroke's waits, so Bytes and Characters need no wait at all: a key
# pressed while the server is busy is answered right after (docs/typing.md).
# Train keeps a short one: training costs more than encoding.
DEBOUNCE_MS = {"bytes": 0, "chars": 0, "train": 60}


@dataclass(frozen=True)
class PageExtras:
    """What a page shows besides its own fields, given by the view that renders it (never via flask.g)."""

    share: dict[str, Any] | None = None  # /s/<id>: the share link's info, shown in the Share control
    open_error: str | None = None  # a plain form post that could not open a tokenizer file: why
    open_elsewhere: str | None = None  # the file is for the other page: a link that opens it there
    open_job: str | None = None  # a big file opening as a job: its panel (HTML)


def _context(tool: str, state: dict[str, str], extras: PageExtras = PageExtras(), *,
             inline: bool = False) -> dict[str, Any]:
    """Everything a tool page's templates show. A state over its job threshold is
    computed by a job (its panel shows), unless `inline` (the job itself rendering)."""
    job_panel = None if inline else kinds.page_panel(tool, state)
    active = act.resolve(tool, state)  # the one resolve (and load) of this request's tokenizer
    return {
        "tool": tool,
        "title": TOOL_TITLES[tool],
        "state": state,
        "views": VIEWS[tool],
        "examples": EXAMPLES[tool],
        "error_fields": ERROR_FIELDS[tool],
        "debounce_ms": DEBOUNCE_MS[tool],
        "state_fields": FIELDS[tool],
        "extras": extras,
        "opened": active.status(),
        "render_max_ids": inputs.current_limits().render_max_ids,
        "compare_opened": compare.choice_status(state) if tool == "bytes" else None,
        **COMPUTE[tool](state, active, job_panel),
    }


def render_tool_page(tool: str, state: Mapping[str, str], extras: PageExtras = PageExtras()) -> str:
    """The full page of one tool, filled in and computed from form-field values.

    Exactly what a POST of those fields renders; used by share links and the
    file controls (`extras`: what they show besides the fields).
    """
    if tool not in TOOLS:
        raise not_found(f"path: nothing at {request.path[:80]!r}")
    full = normalize_state(tool, state)
    apply_action(tool, full, state)
    return render_template(f"{tool}.html", **_context(tool, full, extras))


def full_page(tool: str, state: Mapping[str, str], *, open_error: str | None = None, open_job: str | None = None,
              open_elsewhere: str | None = None) -> str:
    """The whole page, with why opening failed (and where it opens) or the panel of the job opening a big file.

    What the page controls answer a plain form post (webapp.web.files.routes,
    webapp.web.presets.routes); their htmx answers are in webapp.web.common.htmx.
    """
    return render_tool_page(tool, state, PageExtras(open_error=open_error, open_job=open_job,
                                                    open_elsewhere=open_elsewhere))


def render_fragment(tool: str, state: Mapping[str, str], *, inline: bool = False) -> str:
    """The htmx response: the results partial and the error slots (out of band).

    When a button changed a field (Add missing tokens), that field is sent
    back out of band too; typed fields are otherwise never replaced.
    """
    full = normalize_state(tool, state)
    changed = apply_action(tool, full, state)
    return render_template(f"partials/{tool}_fragment.html", changed=changed, **_context(tool, full, inline=inline))


bp.app_context_processor(template_constants)


@bp.app_template_filter("code_spans")
def code_spans(message: str) -> Markup:
    """An error message with its `quoted` parts as <code> (the rest escaped as text)."""
    parts = str(message).split("`")
    if len(parts) % 2 == 0:  # an odd number of backticks: leave them as typed
        return Markup(escape(message))
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


# --- routes ------------------------------------------------------------------


def landing_state() -> dict[str, str]:
    """cl100k_base and the sentence; the Bytes seed example when the preset is not installed."""
    if is_installed(LANDING_PRESET):
        return normalize_state("bytes", {"text": LANDING_TEXT, "tokenizer": LANDING_PRESET})
    return example_state("bytes", "plain") or normalize_state("bytes", {})


@bp.get("/")
def index() -> str:
    return render_template("bytes.html", **_context("bytes", landing_state()), landing=True,
                           seeds=[(t, EXAMPLES[t][0]) for t in TOOLS])


def _page(tool: str) -> str:
    if request.method == "POST":
        return render_tool_page(tool, request.form)
    if any(name in request.args for name in FIELDS[tool] if name != "view"):
        return render_tool_page(tool, request.args)
    state = example_state(tool, request.args.get("example"))
    if state is None:
        raise not_found(f"path: nothing at {request.path[:80]!r}")
    if "view" in request.args:
        state["view"] = request.args["view"]
    return render_tool_page(tool, state)


@bp.route("/bytes", methods=["GET", "POST"])
def bytes_page() -> str:
    return _page("bytes")


@bp.route("/chars", methods=["GET", "POST"])
def chars_page() -> str:
    return _page("chars")


@bp.route("/train", methods=["GET", "POST"])
def train_page() -> str:
    return _page("train")


@bp.post("/fragments/<tool>")
def fragment(tool: str) -> Response:
    """A live update. `Server-Timing` says what it cost here (wall and this thread's CPU time, ms):
    benchmarks/bench_typing.py reads it to split a keystroke's time into its steps."""
    if tool not in TOOLS:
        raise not_found(f"path: nothing at {request.path[:80]!r}")
    wall, cpu = time.perf_counter(), time.thread_time()
    response = Response(render_fragment(tool, request.form), mimetype="text/html")
    wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
    response.headers["Server-Timing"] = f"app;dur={wall * 1000:.1f}, cpu;dur={cpu * 1000:.1f}"
    return response


def ids_of_state(tool: str, state: Mapping[str, str]) -> list[int]:
    """Every id of a Bytes or Characters page state, with its active tokenizer
    (the ids download, inline or in a background job). Raises TokenizerError."""
    limits = inputs.current_limits()
    active = act.resolve(tool, state)
    text = inputs.read_text(state["text"], limits, form=True)
    if tool == "bytes":
        scheme = inputs.read_pretokenize(state.get("pretokenize"))
        act.page_merges(active)  # (a typed rule's problem, naming merges)
        return list(act.byte_ids(active, text, scheme))
    if not active.ref:
        return list(tk.bpe_encode_text(text, inputs.read_char_vocab(state["vocab"], limits),
                                       inputs.read_char_merges(state["merges"], limits)))
    return list(act.char_ids(active, text))


def ids_file(tool: str, ids: list[int]) -> Response:
    """The ids as a downloadable text file."""
    return Response(
        format_ids(ids) + "\n",
        mimetype="text/plain",
        headers={"Content-Disposition": f'attachment; filename="{tool}-ids.txt"'},
    )


@bp.post("/<tool>/ids.txt")
def ids_download(tool: str) -> BaseResponse:
    """All ids of the current encoding as a text file (the page shows a bounded number of tokens).

    A state over the job thresholds is encoded by a background job: the answer
    is then a redirect to the job's page, which offers the file when it is done.
    """
    if tool not in FILE_TOOLS:
        raise not_found(f"path: nothing at {request.path[:80]!r}")
    state = normalize_state(tool, request.form)
    try:
        job = kinds.ids_job(tool, state)
        if job is not None:
            return redirect(url_for("jobs.job_page", job_id=job.id, view=f"ids-{tool}"), code=303)
        ids = ids_of_state(tool, state)
    except TokenizerError as exc:
        return Response(exc.message + "\n", status=400, mimetype="text/plain")
    return ids_file(tool, ids)


@bp.get("/jobs/<job_id>/ids.txt")
def ids_job_file(job_id: str) -> Response:
    """The ids file an ids-download job made (404 for another kind, 409 until it is done)."""
    store = queue.get_queue().store
    job = store.get(job_id)
    if job is None or job.kind != "ids":
        raise not_found(f"job: no ids download {job_id[:40]!r}", field="job")
    result = store.result(job) if job.state == "done" else None
    if result is None:
        return Response(f"job: no ids yet, the job is {job.state}\n", status=409, mimetype="text/plain")
    tool = store.params(job).get("tool", "ids")
    return Response(result["text"], mimetype="text/plain",
                    headers={"Content-Disposition": f'attachment; filename="{tool}-ids.txt"'})


# The worker renders a long state's fragment and ids with these, computed inline.
kinds.register_page_kinds(lambda tool, state: render_fragment(tool, state, inline=True), ids_of_state)
