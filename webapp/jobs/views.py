"""The jobs over HTTP: the JSON API of a job and the panel a page shows while it runs.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
import zlib
from typing import Any, Iterator

from flask import Blueprint, Response, jsonify, redirect, render_template, request, stream_with_context, url_for
from markupsafe import Markup

from webapp.infra.errors import ApiError, not_found
from webapp.infra.storage import is_valid_id
from webapp.jobs import tokens
from webapp.jobs.queue import get_queue
from webapp.jobs.registry import DONE_VIEWS, kind_label
from webapp.jobs.store import Job, JobStore, split_eta, unpack_json

bp = Blueprint("jobs", __name__)

#: A result this small is put in the job's JSON; larger ones are only at result_url.
INLINE_RESULT_BYTES = 64 * 1024



def describe(job: Job, store: JobStore, *, with_result: bool = True) -> dict[str, Any]:
    """A job as the JSON API shows it (`eta_seconds`: the running job's estimate of the time left, or null)."""
    eta = split_eta(job.progress_text)[1] if job.state == "running" else None
    out: dict[str, Any] = {
        "job": job.id,
        "kind": job.kind,
        "state": job.state,
        "progress": {"fraction": round(job.progress, 4), "text": job.progress_text, "eta_seconds": eta},
        "eta_seconds": eta,
        "url": url_for("jobs.api_job", job_id=job.id),
        "created_at": job.created_at.isoformat(),
        "updated_at": job.updated_at.isoformat(),
    }
    if job.state in ("failed", "cancelled") and job.error:
        out["error"] = {"message": job.error, "field": job.error_field or "job"}
    if job.state == "done":
        out["result_url"] = url_for("jobs.api_job_result", job_id=job.id)
        data = store.result_bytes(job) if with_result else None
        if data is not None and len(data) <= INLINE_RESULT_BYTES:
            result = unpack_json(data)
            if len(json.dumps(result)) <= INLINE_RESULT_BYTES:
                out["result"] = result
    return out


def accepted(job: Job) -> Response:
    """The 202 answer for a request that became a job."""
    body = describe(job, get_queue().store, with_result=False)
    token = tokens.issued(job.id)
    if token is not None:
        body["cancel_token"] = token
    response = jsonify(body)
    response.status_code = 202 if job.state != "failed" else 503
    response.headers["Location"] = body["url"]
    return response


def _shown(job_id: str) -> str:
    return repr(job_id if len(job_id) <= 40 else job_id[:40] + "...")


def _not_found(job_id: str) -> Response:
    raise not_found(f"job: no job with id {_shown(job_id)}", field="job")


@bp.get("/api/jobs/<job_id>")
def api_job(job_id: str) -> Response:
    store = get_queue().store
    job = store.get(job_id)
    if job is None:
        return _not_found(job_id)
    return jsonify(describe(job, store))


@bp.get("/api/jobs/<job_id>/result")
def api_job_result(job_id: str) -> Response:
    """The full result, decompressed while it streams (a big result never sits whole in memory)."""
    store = get_queue().store
    job = store.get(job_id)
    if job is None:
        return _not_found(job_id)
    data = store.result_bytes(job) if job.state == "done" else None
    if data is None:
        response = jsonify({"error": {"message": f"job: no result, the job is {job.state}", "field": "job"},
                            **describe(job, store, with_result=False)})
        response.status_code = 409
        return response

    def chunks() -> Iterator[bytes]:
        inflater = zlib.decompressobj()
        for start in range(0, len(data), 64 * 1024):
            yield inflater.decompress(data[start:start + 64 * 1024])
        yield inflater.flush()

    return Response(stream_with_context(chunks()), mimetype="application/json")


def _cancel(job_id: str) -> Job:
    """Cancel a job for the client that submitted it (404 unknown, 403 without its token)."""
    job_queue = get_queue()
    job = job_queue.store.get(job_id) if is_valid_id(job_id) else None
    if job is None:
        raise not_found(f"job: no job with id {_shown(job_id)}", field="job")
    if not tokens.may_cancel(job):
        raise ApiError("cancel_token: only the client that submitted this job can cancel it (send the "
                       f"cancel_token of its 202 answer as the {tokens.HEADER} header)", field="cancel_token",
                       status=403, page=("Not yours to cancel",
                                         "This job was started by someone else; you can follow it, not cancel it."))
    cancelled = job_queue.cancel(job_id)
    assert cancelled is not None
    return cancelled


@bp.route("/api/jobs/<job_id>/cancel", methods=["POST"])
@bp.route("/api/jobs/<job_id>", methods=["DELETE"])
def api_job_cancel(job_id: str) -> Response:
    store = get_queue().store
    job = _cancel(job_id)
    response = jsonify(describe(job, store, with_result=False))
    response.status_code = 202 if not job.finished else 200
    return response


# --- the page panel -------------------------------------------------------------


def render_panel(job: Job, view: str, *, page: bool = False) -> str:
    """The job panel (progress bar, cancel, or the error), or the done view once done.

    `page`: for the job's own page (no polling; the page reloads itself)."""
    store = get_queue().store
    done = DONE_VIEWS.get(view)
    if job.state == "done" and done is not None and done.fits(job.kind):
        return done.show(job, store.result(job), store.params(job))
    return render_template("partials/job_panel.html", job=job, view=view, page=page,
                           budgets=get_queue().budgets, label=kind_label(job.kind), can_cancel=tokens.may_cancel(job))


def _panel_view(job: Job) -> str:
    """The `view` asked for: "" when none or unknown; a view of another kind's
    jobs (`/jobs/<a train job>?view=corpus`) is a 404, never that view's
    code reading a result it does not understand."""
    view = request.values.get("view", "")
    done = DONE_VIEWS.get(view)
    if done is None:
        return ""
    if not done.fits(job.kind):
        raise not_found(f"view: {view!r} does not show {job.kind!r} jobs (it shows "
                        f"{', '.join(repr(k) for k in done.kinds)} jobs)", field="view",
                        page=("Not found", "This job cannot be shown on that page."))
    return view


@bp.get("/jobs/<job_id>/panel")
def panel(job_id: str) -> Any:
    job = get_queue().store.get(job_id)
    if job is None:
        raise not_found(f"job: no job with id {_shown(job_id)}", field="job")
    return render_panel(job, _panel_view(job))


@bp.post("/jobs/<job_id>/cancel")
def panel_cancel(job_id: str) -> Any:
    """Cancel from a page: htmx gets the panel; a plain form post (`page=1`, no
    JavaScript) is sent on to the job page (303, so a reload does not post again)."""
    job = get_queue().store.get(job_id) if is_valid_id(job_id) else None
    if job is None:
        raise not_found(f"job: no job with id {_shown(job_id)}", field="job")
    view = _panel_view(job)
    job = _cancel(job_id)
    if request.args.get("page") and not request.headers.get("HX-Request"):
        return redirect(url_for("jobs.job_page", job_id=job.id, view=view or None), code=303)
    return render_panel(job, view)


@bp.get("/jobs/<job_id>")
def job_page(job_id: str) -> Any:
    """A job on a page of its own, for browsers without JavaScript: it reloads
    itself every second while the job runs, then shows the result or the error."""
    job = get_queue().store.get(job_id)
    if job is None:
        raise not_found(f"job: no job with id {_shown(job_id)}", field="job")
    view = _panel_view(job)
    done = DONE_VIEWS.get(view)
    endpoint, label = done.back if done is not None and done.back else (None, "")
    if done is None and job.state == "done":
        result = url_for("jobs.api_job_result", job_id=job.id)
        body = Markup(render_template("partials/job_panel.html", job=job, view=view, page=True,
                                      budgets=get_queue().budgets, label=kind_label(job.kind),
                                      can_cancel=tokens.may_cancel(job))
                      + Markup('<p class="card">The result: <a href="{0}">{0}</a></p>').format(result))
    else:
        body = Markup(render_panel(job, view, page=True))
    back = url_for(endpoint) if endpoint else None
    tool = endpoint.split(".", 1)[1].removesuffix("_page") if endpoint else None
    return render_template("job.html", job=job, body=body, back_url=back, back_label=label, tool=tool,
                           title=f"Job {job.id}")
