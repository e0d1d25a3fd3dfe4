"""Background jobs: long work leaves the web request and runs on a task queue.

What it does:

- **Queue.** Huey carries job ids from the web processes to the workers:
  `SqliteHuey` in a file in the instance folder by default (no extra server),
  `RedisHuey` when `QUEUE_URL` (`PLAYGROUND_QUEUE_URL`) is `redis://...`, so
  workers can run on other machines. `python -m webapp.worker` runs a worker
  (`make run` / `make serve-prod` start one beside the web server).
- **State** lives in the database (the `playground_jobs` table of
  webapp.infra.storage), not in any process: state (queued, running, done, failed,
  cancelled), progress (fraction + text), the error with its field, and the
  result id. A web server restart loses nothing; a worker that dies mid-job
  leaves a stale "running" row that the next worker start puts back in the queue.
- **Inputs and results are blobs**, stored content-addressed like shares
  (kinds "jobparams" and "jobresult", zlib-compressed JSON); a kind's own
  blobs (an imported tokenizer) are stored before the job is marked done.
- **Budgets.** Every job runs in a child process forked for it, which applies
  `RLIMIT_AS` (the memory budget `JOB_MEMORY_MB` on top of what the worker
  already mapped) and is killed at the wall-clock budget `JOB_TIME_SECONDS`
  or on cancel. The process exits afterwards, so its memory goes back to the
  system. It also runs at a lower CPU priority (`JOB_NICE`) than the web server.
- **HTTP.** `GET /api/jobs/<id>`, `GET /api/jobs/<id>/result`,
  `POST /api/jobs/<id>/cancel` (or `DELETE /api/jobs/<id>`), and the page
  panel `GET /jobs/<id>/panel?view=...` / `POST /jobs/<id>/cancel` that htmx
  polls, and `GET /jobs/<id>?view=...`, the same job on a page of its own that
  reloads itself while the job runs (the path without JavaScript). Callers submit with `submit(kind, params)` and answer with
  `accepted(job)` (202); pages register how a finished job shows with
  `done_view(name)`.

The job rows, budgets and progress texts are in webapp.jobs.store, running one
job in a child process in webapp.jobs.runner; this module is the queue, the app
hooks and HTTP.

What it does not do: define what a job computes (webapp.jobs.registry does), parse
request bodies (webapp.infra.inputs / the routes that submit), or expire old jobs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import logging
import zlib
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import huey  # type: ignore[import-untyped]
from flask import Blueprint, Response, current_app, jsonify, redirect, render_template, request, stream_with_context, url_for
from markupsafe import Markup

from webapp.jobs import registry as jobkinds
from webapp.jobs.runner import execute
from webapp.jobs.store import STALE_SECONDS, Budgets, Job, JobStore, split_eta, unpack_json
from webapp.infra.storage import Storage, get_storage, is_valid_id

log = logging.getLogger(__name__)

bp = Blueprint("jobs", __name__)

QUEUE_NAME = "bpe-playground"
EXTENSION_KEY = "playground_jobs"
#: A result this small is put in the job's JSON; larger ones are only at result_url.
INLINE_RESULT_BYTES = 64 * 1024



# --------------------------------------------------------------------------
# The queue


def queue_url(config: Mapping[str, Any], instance_path: str | Path) -> str:
    """QUEUE_URL, or the embedded default: a SQLite file beside a SQLite database
    (so each database has its own queue), else in the instance folder."""
    if config.get("QUEUE_URL"):
        return str(config["QUEUE_URL"])
    database = str(config.get("DATABASE_URL") or "")
    if database.startswith("sqlite:///") and ":memory:" not in database:
        return f"sqlite:///{Path(database[len('sqlite:///'):]).parent / 'jobs-queue.sqlite3'}"
    return f"sqlite:///{Path(instance_path) / 'jobs-queue.sqlite3'}"


def make_huey(url: str, name: str = QUEUE_NAME) -> Any:
    """A Huey instance on the queue URL: redis://, rediss://, unix:// or sqlite:///path."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        return huey.RedisHuey(name, url=url, results=False)
    if url.startswith("sqlite:///"):
        path = Path(url[len("sqlite:///"):])
        path.parent.mkdir(parents=True, exist_ok=True)
        return huey.SqliteHuey(name, filename=str(path), results=False, timeout=30)
    raise ValueError(f"QUEUE_URL: expected redis://... or sqlite:///path, got {url!r}")


class JobQueue:
    """One app's job system: the store, the Huey queue and the task that runs a job."""

    def __init__(self, storage: Storage, config: Mapping[str, Any], instance_path: str | Path) -> None:
        self.store = JobStore(storage)
        self.url = queue_url(config, instance_path)
        self.huey = make_huey(self.url, str(config.get("QUEUE_NAME") or QUEUE_NAME))
        self.budgets = Budgets.from_config(config)
        self.workers = int(config.get("JOB_WORKERS", 2))
        self.stale_seconds = float(config.get("JOB_STALE_SECONDS", STALE_SECONDS))
        self.run_task = self.huey.task(name="playground.run_job")(self._run)

    def _run(self, job_id: str) -> None:
        state = execute(self.store, job_id, self.budgets)
        if state is not None:
            log.info("job %s: %s", job_id, state)

    def submit(self, kind: str, params: Mapping[str, Any]) -> Job:
        """Store a job and put it on the queue; a queue that is down fails the job clearly."""
        if kind not in jobkinds.KINDS:
            raise ValueError(f"unknown job kind {kind!r}")
        job, created = self.store.create(kind, params)
        if not created:
            return job
        try:
            self.run_task(job.id)
        except Exception as exc:  # the broker is unreachable: say so instead of a job that never runs
            log.error("cannot enqueue job %s: %s", job.id, exc)
            self.store.finish(job.id, "failed", error="job: the job queue is unavailable; try again later",
                              error_field="job")
            return self.store.get(job.id)  # type: ignore[return-value]
        return job

    def requeue_stale(self) -> list[str]:
        """Put running jobs whose worker died back on the queue (called when a worker starts)."""
        stale = self.store.stale_running(self.stale_seconds)
        again = [job_id for job_id in stale if self.store.requeue(job_id)]
        for job_id in again:
            self.run_task(job_id)
        return again

    def consumer(self, workers: int | None = None) -> Any:
        """A Huey consumer running jobs with `workers` threads (each forks a job process)."""
        return self.huey.create_consumer(
            workers=workers or self.workers, worker_type="thread", periodic=False,
            initial_delay=0.1, backoff=1.15, max_delay=0.5, check_worker_health=True,
        )


#: The app of a worker process: job kinds that render pages use it (webapp.worker sets it).
_WORKER_APP: Any = None


def set_worker_app(app: Any) -> None:
    global _WORKER_APP
    _WORKER_APP = app


def worker_app() -> Any:
    """The app this worker process was built from (for job kinds that render pages)."""
    if _WORKER_APP is None:
        raise RuntimeError("no worker app: job kinds that render pages run only in webapp.worker")
    return _WORKER_APP


def init_app(app: Any) -> JobQueue:
    queue = JobQueue(get_storage(app), app.config, app.instance_path)
    app.extensions[EXTENSION_KEY] = queue
    app.teardown_request(_trim_after_big_request)
    return queue


def get_queue(app: Any = None) -> JobQueue:
    if app is None:
        app = current_app
    queue: JobQueue = app.extensions[EXTENSION_KEY]
    return queue


def submit(kind: str, params: Mapping[str, Any]) -> Job:
    """Submit a job from a request (the current app's queue)."""
    return get_queue().submit(kind, params)


# --------------------------------------------------------------------------
# Memory: give freed heap back after a big inline request

_LIBC: Any = None
TRIM_AFTER_BYTES = 1024 * 1024


def malloc_trim() -> bool:
    """glibc's malloc_trim(0): return free heap pages to the system. False where there is none."""
    global _LIBC
    if _LIBC is None:
        name = ctypes.util.find_library("c")
        try:
            _LIBC = ctypes.CDLL(name) if name else False
        except OSError:
            _LIBC = False
    trim = getattr(_LIBC, "malloc_trim", None) if _LIBC else None
    if trim is None:
        return False  # musl, macOS: nothing to call
    trim(0)
    return True


def _trim_after_big_request(_exc: BaseException | None) -> None:
    # Big bodies build big temporary structures (a 300,000-rule list, a
    # million tokens); glibc keeps the freed arenas unless asked to return them.
    if (request.content_length or 0) >= TRIM_AFTER_BYTES:
        malloc_trim()


# --------------------------------------------------------------------------
# HTTP


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
    response = jsonify(body)
    response.status_code = 202 if job.state != "failed" else 503
    response.headers["Location"] = body["url"]
    return response


def _not_found(job_id: str) -> Response:
    shown = job_id if len(job_id) <= 40 else job_id[:40] + "..."
    response = jsonify({"error": {"message": f"job: no job with id {shown!r}", "field": "job"}})
    response.status_code = 404
    return response


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


@bp.route("/api/jobs/<job_id>/cancel", methods=["POST"])
@bp.route("/api/jobs/<job_id>", methods=["DELETE"])
def api_job_cancel(job_id: str) -> Response:
    store = get_queue().store
    job = store.request_cancel(job_id) if is_valid_id(job_id) else None
    if job is None:
        return _not_found(job_id)
    response = jsonify(describe(job, store, with_result=False))
    response.status_code = 202 if not job.finished else 200
    return response


# --- the page panel -------------------------------------------------------------

#: view name -> function(job, result, params) -> HTML that replaces the panel when the job is done.
DONE_VIEWS: dict[str, Callable[[Job, Any, dict[str, Any]], str]] = {}


def done_view(name: str) -> Callable[[Callable[[Job, Any, dict[str, Any]], str]], Callable[[Job, Any, dict[str, Any]], str]]:
    """Register how a finished job shows on a page (e.g. "open-bytes", "train")."""

    def register(function: Callable[[Job, Any, dict[str, Any]], str]) -> Callable[[Job, Any, dict[str, Any]], str]:
        DONE_VIEWS[name] = function
        return function

    return register


def render_panel(job: Job, view: str, *, page: bool = False) -> str:
    """The job panel (progress bar, cancel, or the error), or the done view once done.

    `page`: for the job's own page (no polling; the page reloads itself)."""
    store = get_queue().store
    if job.state == "done" and view in DONE_VIEWS:
        return DONE_VIEWS[view](job, store.result(job), store.params(job))
    return render_template("partials/job_panel.html", job=job, view=view, page=page,
                           budgets=get_queue().budgets)


def _panel_view() -> str:
    view = request.values.get("view", "")
    return view if view in DONE_VIEWS else ""


@bp.get("/jobs/<job_id>/panel")
def panel(job_id: str) -> Any:
    job = get_queue().store.get(job_id)
    if job is None:
        return Response("no such job\n", status=404, mimetype="text/plain")
    return render_panel(job, _panel_view())


@bp.post("/jobs/<job_id>/cancel")
def panel_cancel(job_id: str) -> Any:
    """Cancel from a page: htmx gets the panel; a plain form post (`page=1`, no
    JavaScript) is sent on to the job page (303, so a reload does not post again)."""
    job = get_queue().store.request_cancel(job_id) if is_valid_id(job_id) else None
    if job is None:
        return Response("no such job\n", status=404, mimetype="text/plain")
    if request.args.get("page") and not request.headers.get("HX-Request"):
        return redirect(url_for("jobs.job_page", job_id=job.id, view=_panel_view() or None), code=303)
    return render_panel(job, _panel_view())


#: done view -> (the page it belongs to, its label), for the job page's way back.
_VIEW_PAGES = {"page-bytes": ("bytes", "Bytes"), "open-bytes": ("bytes", "Bytes"),
               "open-chars": ("chars", "Characters"), "page-chars": ("chars", "Characters"),
               "train": ("train", "Train"), "ids-bytes": ("bytes", "Bytes"), "ids-chars": ("chars", "Characters")}


@bp.get("/jobs/<job_id>")
def job_page(job_id: str) -> Any:
    """A job on a page of its own, for browsers without JavaScript: it reloads
    itself every second while the job runs, then shows the result or the error."""
    job = get_queue().store.get(job_id)
    if job is None:
        return Response("no such job\n", status=404, mimetype="text/plain")
    view = _panel_view()
    tool, label = _VIEW_PAGES.get(view, (None, ""))
    if job.state == "done" and view not in DONE_VIEWS:
        result = url_for("jobs.api_job_result", job_id=job.id)
        body = Markup(render_template("partials/job_panel.html", job=job, view=view, page=True,
                                      budgets=get_queue().budgets)
                      + Markup('<p class="card">The result: <a href="{0}">{0}</a></p>').format(result))
    else:
        body = Markup(render_panel(job, view, page=True))
    back = url_for(f"pages.{tool}_page") if tool else None
    return render_template("job.html", job=job, body=body, back_url=back, back_label=label, tool=tool,
                           title=f"Job {job.id}")
