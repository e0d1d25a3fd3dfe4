"""Background jobs: long work leaves the web request and runs on a task queue.

What it does:

- **Queue.** Huey carries job ids from the web processes to the workers:
  `SqliteHuey` in a file in the instance folder by default (no extra server),
  `RedisHuey` when `QUEUE_URL` (`PLAYGROUND_QUEUE_URL`) is `redis://...`, so
  workers can run on other machines. `python -m webapp.worker` runs a worker
  (`make run` / `make serve-prod` start one beside the web server).
- **State** lives in the database (the `playground_jobs` table of
  webapp.storage), not in any process: state (queued, running, done, failed,
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

What it does not do: define what a job computes (webapp.jobkinds does), parse
request bodies (webapp.inputs / the routes that submit), or expire old jobs.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import logging
import multiprocessing
import os
import secrets
import time
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

from flask import Blueprint, Response, current_app, jsonify, redirect, render_template, request, stream_with_context, url_for
from markupsafe import Markup
from sqlalchemy import select

from webapp import jobkinds
from webapp.storage import BlobTooLarge, Storage, get_storage, is_valid_id, jobs as jobs_table
from webapp.tokenizer import TokenizerError

log = logging.getLogger(__name__)

bp = Blueprint("jobs", __name__)

STATES = ("queued", "running", "done", "failed", "cancelled")
FINISHED = frozenset({"done", "failed", "cancelled"})
PARAMS_KIND = "jobparams"
RESULT_KIND = "jobresult"
QUEUE_NAME = "bpe-playground"
EXTENSION_KEY = "playground_jobs"
#: A result this small is put in the job's JSON; larger ones are only at result_url.
INLINE_RESULT_BYTES = 64 * 1024
#: A running job's row is touched at least this often; older means its worker died.
HEARTBEAT_SECONDS = 2.0
#: How long a graceful kind may take to hand back its partial result after Cancel.
GRACE_SECONDS = 5.0
STALE_SECONDS = 30.0


# --------------------------------------------------------------------------
# Settings


@dataclass(frozen=True)
class Budgets:
    """What one job may use: wall-clock seconds, extra address space, CPU priority."""

    seconds: float = 300
    memory_mb: int = 2048
    nice: int = 10

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Budgets":
        return cls(
            seconds=float(config.get("JOB_TIME_SECONDS", cls.seconds)),
            memory_mb=int(config.get("JOB_MEMORY_MB", cls.memory_mb)),
            nice=int(config.get("JOB_NICE", cls.nice)),
        )


def time_budget_message(budgets: Budgets) -> str:
    return (f"job: stopped at the time budget of {budgets.seconds:,g} s per job "
            f"(setting JOB_TIME_SECONDS)")


def memory_budget_message(budgets: Budgets) -> str:
    return (f"job: needed more than the memory budget of {budgets.memory_mb:,} MiB per job "
            f"(setting JOB_MEMORY_MB)")


# --------------------------------------------------------------------------
# Job rows


@dataclass(frozen=True)
class Job:
    """One row of the jobs table."""

    id: str
    kind: str
    state: str
    params_id: str
    progress: float
    progress_text: str
    result_id: str | None
    error: str | None
    error_field: str | None
    cancel_requested: bool
    created_at: datetime
    updated_at: datetime

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _aware(moment: datetime) -> datetime:
    """SQLite hands back naive datetimes; they were stored as UTC."""
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def new_job_id() -> str:
    """A random id of the blob-id shape (16 characters of base32): not guessable."""
    alphabet = "abcdefghijklmnopqrstuvwxyz234567"
    return "".join(secrets.choice(alphabet) for _ in range(16))


def pack_json(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"), 6)


def unpack_json(data: bytes) -> Any:
    return json.loads(zlib.decompress(data))


class JobStore:
    """The jobs table and the job blobs of one database."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def create(self, kind: str, params: Mapping[str, Any]) -> tuple[Job, bool]:
        """Store the params (content-addressed) and a queued job row: (job, created).

        The same kind and params while an earlier job is queued, running or done
        give that job back (a page re-sending its state does not start it again).
        """
        params_id = self.storage.put_blob(PARAMS_KIND, pack_json(dict(params)))
        earlier = self.find(kind, params_id)
        if earlier is not None:
            return earlier, False
        now = _now()
        job_id = new_job_id()
        row = {
            "id": job_id, "kind": kind, "state": "queued", "params_id": params_id,
            "progress": 0.0, "progress_text": "waiting for a worker", "result_id": None,
            "error": None, "error_field": None, "cancel_requested": 0,
            "created_at": now, "updated_at": now,
        }
        with self.storage._write() as conn:
            conn.execute(jobs_table.insert().values(**row))
        created = self.get(job_id)
        assert created is not None
        return created, True

    def find(self, kind: str, params_id: str) -> Job | None:
        """The newest queued, running or done job of this kind with these params."""
        with self.storage.engine.connect() as conn:
            job_id = conn.execute(
                select(jobs_table.c.id)
                .where(jobs_table.c.kind == kind, jobs_table.c.params_id == params_id,
                       jobs_table.c.state.in_(("queued", "running", "done")))
                .order_by(jobs_table.c.created_at.desc())
                .limit(1)
            ).scalar_one_or_none()
        return None if job_id is None else self.get(job_id)

    def get(self, job_id: str) -> Job | None:
        if not is_valid_id(job_id):
            return None
        with self.storage.engine.connect() as conn:
            row = conn.execute(select(jobs_table).where(jobs_table.c.id == job_id)).mappings().first()
        if row is None:
            return None
        values = dict(row)
        values["cancel_requested"] = bool(values["cancel_requested"])
        values["created_at"] = _aware(values["created_at"])
        values["updated_at"] = _aware(values["updated_at"])
        return Job(**values)

    def _update(self, job_id: str, *, where_state: tuple[str, ...] | None = None, **values: Any) -> bool:
        statement = jobs_table.update().where(jobs_table.c.id == job_id)
        if where_state is not None:
            statement = statement.where(jobs_table.c.state.in_(where_state))
        with self.storage._write() as conn:
            return conn.execute(statement.values(updated_at=_now(), **values)).rowcount == 1

    def claim(self, job_id: str) -> bool:
        """queued -> running; False if it was cancelled meanwhile or another worker has it."""
        return self._update(job_id, where_state=("queued",), state="running", progress_text="starting")

    def set_progress(self, job_id: str, fraction: float, text: str) -> None:
        self._update(job_id, where_state=("running",), progress=max(0.0, min(1.0, float(fraction))),
                     progress_text=str(text)[:200])

    def finish(self, job_id: str, state: str, *, result_id: str | None = None,
               error: str | None = None, error_field: str | None = None) -> None:
        values: dict[str, Any] = {"state": state, "result_id": result_id, "error": error, "error_field": error_field}
        if state == "done":
            values.update(progress=1.0, progress_text="done")
        self._update(job_id, where_state=("running", "queued"), **values)

    def request_cancel(self, job_id: str) -> Job | None:
        """A queued job is cancelled at once; a running one is stopped by its worker."""
        self._update(job_id, where_state=("queued",), state="cancelled", progress_text="cancelled")
        self._update(job_id, where_state=("running",), cancel_requested=1, progress_text="cancelling")
        return self.get(job_id)

    def cancel_requested(self, job_id: str) -> bool:
        job = self.get(job_id)
        return job is None or job.cancel_requested or job.state == "cancelled"

    def params(self, job: Job) -> dict[str, Any]:
        data = self.storage.get_blob(PARAMS_KIND, job.params_id)
        if data is None:
            raise TokenizerError("job: its input is missing from the database", field="job")
        params = unpack_json(data)
        if not isinstance(params, dict):
            raise TokenizerError("job: its stored input is damaged", field="job")
        return params

    def result_bytes(self, job: Job) -> bytes | None:
        """The stored (compressed) result of a done job."""
        if job.result_id is None:
            return None
        return self.storage.get_blob(RESULT_KIND, job.result_id)

    def result(self, job: Job) -> Any:
        data = self.result_bytes(job)
        return None if data is None else unpack_json(data)

    def stale_running(self, older_than: float = STALE_SECONDS) -> list[str]:
        """Running jobs whose worker stopped touching them (it died)."""
        cutoff = _now() - timedelta(seconds=older_than)
        with self.storage.engine.connect() as conn:
            rows = conn.execute(
                select(jobs_table.c.id, jobs_table.c.updated_at).where(jobs_table.c.state == "running")
            ).all()
        return [job_id for job_id, updated in rows if _aware(updated) < cutoff]

    def requeue(self, job_id: str) -> bool:
        return self._update(job_id, where_state=("running",), state="queued", progress=0.0,
                            progress_text="waiting for a worker (its worker stopped)")


# --------------------------------------------------------------------------
# Running one job in a child process


@dataclass(frozen=True)
class Outcome:
    """How a job process ended."""

    state: str  # done, failed, cancelled
    result: bytes | None = None  # compressed JSON
    blobs: dict[str, bytes] | None = None
    error: str | None = None
    field: str | None = None


def _vm_size_bytes() -> int:
    """This process's current address space (VmSize), 0 when /proc is missing."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _die_with_parent() -> None:
    """Linux: have the kernel kill this job process if its worker dies (SIGKILL included)."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    except (OSError, AttributeError):
        pass


def _child_main(conn: Any, kind: str, params: dict[str, Any], budgets: Budgets, stop: Any = None) -> None:
    """Inside the job process: lower priority, cap the address space, run, send the outcome."""
    import resource

    _die_with_parent()
    try:
        os.nice(budgets.nice)
    except OSError:
        pass
    # RLIMIT_AS counts mappings the worker already had (libraries, thread
    # stacks), so the budget is what the job may add on top of them.
    limit = _vm_size_bytes() + budgets.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    last = [0.0]

    def progress(fraction: float, text: str) -> None:
        now = time.monotonic()
        if now - last[0] >= 0.1:
            last[0] = now
            conn.send(("progress", float(fraction), str(text)[:200]))

    try:
        output = jobkinds.run_kind(kind, params, progress, stop.is_set if stop is not None else (lambda: False))
        payload = pack_json(output.result)
        conn.send(("done", payload, output.blobs))
    except TokenizerError as exc:
        conn.send(("error", exc.message, exc.field))
    except MemoryError:
        conn.send(("memory",))
    except RecursionError:
        conn.send(("error", "job: the input is nested too deeply", "job"))
    except Exception as exc:  # reported as a failed job, never lost
        conn.send(("error", f"job: unexpected error ({type(exc).__name__})", "job"))
    finally:
        conn.close()


def run_in_child(kind: str, params: dict[str, Any], budgets: Budgets,
                 on_progress: Callable[[float, str], None] = lambda f, t: None,
                 should_cancel: Callable[[], bool] = lambda: False,
                 poll_seconds: float = 0.2) -> Outcome:
    """Run a job kind in a forked process with the budgets; progress and cancel are polled."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    # Kinds in jobkinds.GRACEFUL see cancel through this event and may finish
    # with a partial result within GRACE_SECONDS; others are killed at once.
    stop = context.Event()
    graceful = kind in jobkinds.GRACEFUL
    process = context.Process(target=_child_main, args=(sender, kind, params, budgets, stop), daemon=True)
    process.start()
    sender.close()
    deadline = time.monotonic() + budgets.seconds
    outcome: Outcome | None = None
    try:
        while outcome is None:
            left = deadline - time.monotonic()
            if left <= 0:
                outcome = (Outcome("cancelled", error="job: cancelled", field="job") if stop.is_set()
                           else Outcome("failed", error=time_budget_message(budgets), field="job"))
                break
            try:
                ready = receiver.poll(min(poll_seconds, left))
                message = receiver.recv() if ready else None
            except (EOFError, OSError):
                break  # the process is gone without a word: see its exit code below
            if message is not None:
                tag = message[0]
                if tag == "progress":
                    on_progress(message[1], message[2])
                elif tag == "done":
                    outcome = Outcome("done", result=message[1], blobs=message[2])
                elif tag == "error":
                    outcome = Outcome("cancelled" if stop.is_set() else "failed", error=message[1], field=message[2])
                elif tag == "memory":
                    outcome = Outcome("failed", error=memory_budget_message(budgets), field="job")
            if outcome is None and not stop.is_set() and should_cancel():
                if graceful:
                    stop.set()
                    deadline = min(deadline, time.monotonic() + GRACE_SECONDS)
                else:
                    outcome = Outcome("cancelled", error="job: cancelled", field="job")
    finally:
        if process.is_alive() and outcome is not None and outcome.state != "done":
            process.kill()
        process.join(5)
        if process.is_alive():
            process.kill()
            process.join()
        receiver.close()
    if outcome is None:
        code = process.exitcode
        # Killed by a signal: the kernel's OOM killer, or a C allocation that
        # could not report MemoryError, are the usual reasons under a budget.
        outcome = Outcome("failed", field="job", error=(
            f"{memory_budget_message(budgets)}; the job process ended with code {code}"
        ))
    return outcome


#: How an estimate of the time left ends a progress text ("40% done · about 12 s left").
ETA_SEPARATOR = " · about "
ETA_SUFFIX = " s left"
#: No estimate before this much running time or this fraction: too little to go on.
ETA_MIN_SECONDS = 1.0
ETA_MIN_FRACTION = 0.01


def eta_seconds(elapsed: float, fraction: float) -> int | None:
    """Seconds left if the rest goes as fast as the part done so far (elapsed / fraction), rounded up.

    None while there is too little to go on, or when the fraction does not
    advance (0, or already 1).
    """
    if elapsed < ETA_MIN_SECONDS or not ETA_MIN_FRACTION <= fraction < 1.0:
        return None
    left = elapsed / fraction - elapsed
    return max(1, int(left + 0.999))


def with_eta(text: str, eta: int | None) -> str:
    """The progress text with its estimate appended (the text alone without one)."""
    text = split_eta(text)[0]
    return text if eta is None else f"{text}{ETA_SEPARATOR}{eta:,}{ETA_SUFFIX}"


def split_eta(text: str) -> tuple[str, int | None]:
    """A stored progress text back into (text, seconds left or None): the inverse of `with_eta`."""
    head, separator, tail = text.rpartition(ETA_SEPARATOR)
    if separator and tail.endswith(ETA_SUFFIX):
        number = tail[: -len(ETA_SUFFIX)].replace(",", "")
        if number.isdigit():
            return head, int(number)
    return text, None


class _Throttle:
    """Calls `action` at most every `seconds` (and always when `force`)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.last = 0.0

    def due(self, force: bool = False) -> bool:
        now = time.monotonic()
        if force or now - self.last >= self.seconds:
            self.last = now
            return True
        return False


def execute(store: JobStore, job_id: str, budgets: Budgets) -> str | None:
    """Run a queued job to its end (inside a worker); returns the final state, None if skipped."""
    job = store.get(job_id)
    if job is None or job.state != "queued" or not store.claim(job_id):
        return None  # cancelled before it started, or already taken
    try:
        params = store.params(job)
    except TokenizerError as exc:
        store.finish(job_id, "failed", error=exc.message, error_field=exc.field)
        return "failed"
    progress_gate, cancel_gate, beat_gate = _Throttle(0.25), _Throttle(0.25), _Throttle(HEARTBEAT_SECONDS)
    last_progress: list[Any] = [0.0, "running"]
    started = time.monotonic()

    def shown(fraction: float, text: str) -> str:
        # The estimate is worked out here, where the start is known, and
        # carried in the text (split_eta reads it back for the JSON).
        return with_eta(text, eta_seconds(time.monotonic() - started, fraction))

    def on_progress(fraction: float, text: str) -> None:
        last_progress[:] = [fraction, text]
        if progress_gate.due():
            store.set_progress(job_id, fraction, shown(fraction, text))

    def should_cancel() -> bool:
        if beat_gate.due():  # heartbeat; a stalled fraction makes the estimate grow, as it should
            store.set_progress(job_id, float(last_progress[0]), shown(float(last_progress[0]), str(last_progress[1])))
        return cancel_gate.due() and store.cancel_requested(job_id)

    outcome = run_in_child(job.kind, params, budgets, on_progress, should_cancel)
    if outcome.state == "done":
        try:
            for blob_kind, data in (outcome.blobs or {}).items():
                store.storage.put_blob(blob_kind, data)
            result_id = store.storage.put_blob(RESULT_KIND, outcome.result or pack_json(None))
        except BlobTooLarge as exc:
            store.finish(job_id, "failed", error=f"job: the result is too large to store: {exc}",
                         error_field="job")
            return "failed"
        store.finish(job_id, "done", result_id=result_id)
        return "done"
    store.finish(job_id, outcome.state, error=outcome.error, error_field=outcome.field)
    return outcome.state


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
    import huey  # type: ignore[import-untyped]

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
    from webapp import offload  # noqa: F401  (registers the pages' done views)

    queue = JobQueue(get_storage(app), app.config, app.instance_path)
    app.extensions[EXTENSION_KEY] = queue
    app.register_blueprint(bp)
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
