"""The job queue: jobs are stored, put on a task queue and picked up by workers.

What it does not do: define what a job computes (the features register their
kinds in webapp.jobs.registry), answer HTTP (webapp.jobs.views), or tidy up
(webapp.jobs.upkeep: dead workers' jobs, expiry, orphaned uploads).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any, Mapping

import huey  # type: ignore[import-untyped]
from flask import current_app, has_request_context

from webapp.jobs import registry, tokens
from webapp.jobs.runner import execute
from webapp.jobs.upkeep import Upkeep, clean_up, clean_up_job
from webapp.infra.errors import ApiError
from webapp.jobs.store import STALE_SECONDS, Budgets, Caps, Job, JobStore, QueueFull
from webapp.infra import ratelimit
from webapp.infra.storage import Storage, get_storage

log = logging.getLogger(__name__)

QUEUE_NAME = "bpe-playground"
EXTENSION_KEY = "playground_jobs"



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
        self.stale_seconds = float(config.get("JOB_STALE_SECONDS", STALE_SECONDS))
        self.store = JobStore(storage, self.stale_seconds)
        self.url = queue_url(config, instance_path)
        self.huey = make_huey(self.url, str(config.get("QUEUE_NAME") or QUEUE_NAME))
        self.budgets = Budgets.from_config(config)
        self.workers = int(config.get("JOB_WORKERS", 2))
        self.caps = Caps.from_config(config)
        self.retry_after = int(config.get("JOB_RETRY_AFTER_SECONDS", 30))
        self.run_task = self.huey.task(name="playground.run_job")(self._run)
        self.upkeep = Upkeep(self.store, config, str(instance_path), self.run_task)

    def _run(self, job_id: str) -> None:
        execute(self.store, job_id, self.budgets)  # logs the job it ran (the fairest, maybe not job_id)

    def _full(self, exc: QueueFull) -> ApiError:
        return ApiError(f"job: {exc.message} (setting {exc.setting}); try again in {self.retry_after:,} s, "
                        "when some have finished", field="job", status=429, retry_after=self.retry_after,
                        location={"retry_after": self.retry_after})

    def admit(self, upload_bytes: int = 0) -> None:
        """Before storing an upload: a 429 when a job holding it would go over a cap (the
        definitive check is `submit`'s, in the transaction that adds the job)."""
        if not has_request_context():
            return
        try:
            self.store.room(client_id(), max(0, upload_bytes), self.caps)
        except QueueFull as exc:
            raise self._full(exc) from None

    def submit(self, kind: str, params: Mapping[str, Any], *, upload_bytes: int = 0,
               found_is_write: bool = True) -> Job:
        """Store a job and put it on the queue; a queue that is down fails the job clearly.

        From a request the submission counts as a write (webapp.infra.ratelimit) and
        the job is the client's, under the caps (a 429 ApiError when over one).
        `found_is_write=False` is for reads that start a job on their first visit (the
        unreachable tokens): finding the earlier job is free, only starting one is a write."""
        if kind not in registry.KINDS:
            raise ValueError(f"unknown job kind {kind!r}")
        if not found_is_write:
            earlier = self.store.existing(kind, params)
            if earlier is not None:
                return earlier
        client = None
        if has_request_context():
            ratelimit.check_write()
            client = client_id()
        token, token_hash = tokens.new_token()
        try:
            job, created = self.store.create(kind, params, cancel_hash=token_hash, client=client,
                                             upload_bytes=upload_bytes, caps=self.caps)
        except QueueFull as exc:
            raise self._full(exc) from None
        if not created:
            return job
        tokens.remember(job.id, token)  # only the submitter gets it (webapp.jobs.tokens)
        try:
            self.run_task(job.id)
        except Exception as exc:  # the broker is unreachable: say so instead of a job that never runs
            log.error("cannot enqueue job %s: %s", job.id, exc)
            if self.store.finish(job.id, "failed", error="job: the job queue is unavailable; try again later",
                                 error_field="job"):
                clean_up(kind, params)
            return self.store.get(job.id)  # type: ignore[return-value]
        return job

    def cancel(self, job_id: str) -> Job | None:
        """Cancel a job: a queued one ends now and is cleaned up; a running one is stopped by its worker."""
        job = self.store.get(job_id)
        if job is not None and self.store.cancel_queued(job_id):
            clean_up_job(self.store, job)
        return self.store.request_cancel(job_id) if job is not None else None

    def consumer(self, workers: int | None = None) -> Any:
        """A Huey consumer running jobs with `workers` threads (each forks a job process).

        An idle worker thread polls the queue at most every 0.2 s: a job waits
        0.1 s on average to start (a corpus job of 10 MB takes about 1-2 s in
        all), for five cheap queue reads a second per idle thread.
        """
        return self.huey.create_consumer(
            workers=workers or self.workers, worker_type="thread", periodic=False,
            initial_delay=0.1, backoff=1.15, max_delay=0.2, check_worker_health=True,
        )


def client_id() -> str:
    """The current request's client as the jobs table keeps it: its address, hashed."""
    return hashlib.sha256(ratelimit.client_key().encode("utf-8", "replace")).hexdigest()[:32]


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
    return queue


def get_queue(app: Any = None) -> JobQueue:
    if app is None:
        app = current_app
    queue: JobQueue = app.extensions[EXTENSION_KEY]
    return queue


def submit(kind: str, params: Mapping[str, Any], *, upload_bytes: int = 0, found_is_write: bool = True) -> Job:
    """Submit a job from a request (the current app's queue)."""
    return get_queue().submit(kind, params, upload_bytes=upload_bytes, found_is_write=found_is_write)


def threshold(name: str) -> int:
    """A `JOB_*` threshold of the running app (webapp.jobs.thresholds measures what it is compared with)."""
    return int(current_app.config[name])
