"""The job queue: jobs are stored, put on a task queue and picked up by workers.

- **Queue.** Huey carries job ids from the web processes to the workers:
  `SqliteHuey` in a file in the instance folder by default (no extra server),
  `RedisHuey` when `QUEUE_URL` (`PLAYGROUND_QUEUE_URL`) is `redis://...`, so
  workers can run on other machines. `python -m webapp.worker` runs a worker
  (`make run` / `make serve-prod` start one beside the web server).
- **State** lives in the database (webapp.jobs.store), not in any process: a
  web server restart loses nothing; a worker that dies mid-job leaves a stale
  "running" row that the next worker start puts back in the queue.
- **Budgets** are applied by webapp.jobs.runner, which runs each job in a
  forked child process.
- Features submit with `submit(kind, params)` and read their thresholds with
  `threshold(name)`; job kinds that need the app (to render a page fragment,
  to open a stored tokenizer) use `worker_app()`, the app the worker was
  built from.

What it does not do: define what a job computes (the features register their
kinds in webapp.jobs.registry), answer HTTP (webapp.jobs.views), or expire old jobs.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Mapping

import huey  # type: ignore[import-untyped]
from flask import current_app

from webapp.jobs import registry
from webapp.jobs.runner import execute
from webapp.jobs.store import STALE_SECONDS, Budgets, Job, JobStore
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
        if kind not in registry.KINDS:
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
        """A Huey consumer running jobs with `workers` threads (each forks a job process).

        An idle worker thread polls the queue at most every 0.2 s: a job waits
        0.1 s on average to start (a corpus job of 10 MB takes about 1-2 s in
        all), for five cheap queue reads a second per idle thread.
        """
        return self.huey.create_consumer(
            workers=workers or self.workers, worker_type="thread", periodic=False,
            initial_delay=0.1, backoff=1.15, max_delay=0.2, check_worker_health=True,
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
    return queue


def get_queue(app: Any = None) -> JobQueue:
    if app is None:
        app = current_app
    queue: JobQueue = app.extensions[EXTENSION_KEY]
    return queue


def submit(kind: str, params: Mapping[str, Any]) -> Job:
    """Submit a job from a request (the current app's queue)."""
    return get_queue().submit(kind, params)


def threshold(name: str) -> int:
    """A `JOB_*` threshold of the running app (webapp.jobs.thresholds measures what it is compared with)."""
    return int(current_app.config[name])
