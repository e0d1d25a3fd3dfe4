"""Job rows and their blobs: the jobs table of webapp.infra.storage, the budgets a job runs under.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
import secrets
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from sqlalchemy import func, select, text

from webapp.infra.schema import jobs as jobs_table
from webapp.infra.storage import Storage, content_id, is_valid_id
from webapp.tokenizer import TokenizerError

STATES = ("queued", "running", "done", "failed", "cancelled")
FINISHED = frozenset({"done", "failed", "cancelled"})
PARAMS_KIND = "jobparams"
RESULT_KIND = "jobresult"
#: A running job's row is touched at least this often; older means its worker died.
HEARTBEAT_SECONDS = 2.0
#: How long a graceful kind may take to hand back its partial result after Cancel.
GRACE_SECONDS = 5.0
STALE_SECONDS = 30.0
_ADMISSION_LOCK = 0x42504551  # PostgreSQL advisory lock around a job's admission ("BPEQ")


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
    attempts: int = 0
    cancel_hash: str | None = None
    client: str | None = None
    upload_bytes: int | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED


@dataclass(frozen=True)
class Caps:
    """How much may wait or run at once (settings JOB_*_LIMIT / JOB_*UPLOAD_BYTES; 0: no cap)."""

    per_client: int = 8
    total: int = 64
    client_upload_bytes: int = 512 * 2**20
    upload_bytes: int = 2 * 2**30

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> "Caps":
        return cls(per_client=int(config.get("JOB_CLIENT_LIMIT", cls.per_client)),
                   total=int(config.get("JOB_QUEUE_LIMIT", cls.total)),
                   client_upload_bytes=int(config.get("JOB_CLIENT_UPLOAD_BYTES", cls.client_upload_bytes)),
                   upload_bytes=int(config.get("JOB_UPLOAD_BYTES", cls.upload_bytes)))


class QueueFull(Exception):
    """A new job would go over a cap; the message names it and its setting."""

    def __init__(self, message: str, setting: str) -> None:
        super().__init__(message)
        self.message = message
        self.setting = setting


LIVE = ("queued", "running")


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

    def __init__(self, storage: Storage, stale_seconds: float = STALE_SECONDS) -> None:
        self.storage = storage
        self.stale_seconds = stale_seconds

    def room(self, client: str, upload_bytes: int, caps: Caps, conn: Any = None) -> None:
        """Raise QueueFull when one more job of `client` holding `upload_bytes` would go over a cap."""
        if conn is None:
            with self.storage.engine.connect() as own:
                return self.room(client, upload_bytes, caps, own)
        live = jobs_table.c.state.in_(LIVE)
        uploads = func.coalesce(func.sum(jobs_table.c.upload_bytes), 0)
        total, total_bytes = conn.execute(select(func.count(), uploads).where(live)).one()
        mine, my_bytes = conn.execute(select(func.count(), uploads).where(live, jobs_table.c.client == client)).one()
        checks = (
            (caps.per_client, int(mine) + 1, "JOB_CLIENT_LIMIT",
             f"you already have {int(mine):,} jobs queued or running, the most one client may have"),
            (caps.total, int(total) + 1, "JOB_QUEUE_LIMIT",
             f"{int(total):,} jobs are queued or running, the most the playground takes at once"),
            (caps.client_upload_bytes, int(my_bytes) + upload_bytes, "JOB_CLIENT_UPLOAD_BYTES",
             f"your uploads waiting for their jobs would be {int(my_bytes) + upload_bytes:,} bytes, over "
             f"{caps.client_upload_bytes:,}"),
            (caps.upload_bytes, int(total_bytes) + upload_bytes, "JOB_UPLOAD_BYTES",
             f"the uploads waiting for their jobs would be {int(total_bytes) + upload_bytes:,} bytes, over "
             f"{caps.upload_bytes:,}"),
        )
        for cap, wanted, setting, reason in checks:
            if cap > 0 and wanted > cap:
                raise QueueFull(reason, setting)
        return None

    def create(self, kind: str, params: Mapping[str, Any], cancel_hash: str | None = None, *,
               client: str | None = None, upload_bytes: int = 0, caps: Caps | None = None) -> tuple[Job, bool]:
        """Store the params (content-addressed) and a queued job row: (job, created).

        The same kind and params while an earlier job is queued, live running or
        done give that job back (a page re-sending its state does not start it
        again); `cancel_hash` (webapp.jobs.tokens) is kept only for a new job.
        With `client` and `caps`, a new job that would go over a cap raises
        QueueFull (checked in the transaction that inserts it).
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
            "created_at": now, "updated_at": now, "attempts": 0, "cancel_hash": cancel_hash,
            "client": client, "upload_bytes": upload_bytes or None,
        }
        with self.storage.writing() as conn:
            if client is not None and caps is not None:
                if self.storage.dialect == "postgresql":  # one admission at a time, like SQLite's write lock
                    conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _ADMISSION_LOCK})
                self.room(client, upload_bytes, caps, conn)
            conn.execute(jobs_table.insert().values(**row))
        created = self.get(job_id)
        assert created is not None
        return created, True

    def existing(self, kind: str, params: Mapping[str, Any]) -> Job | None:
        """The job `create` would give back for these params, looked up without storing anything."""
        return self.find(kind, content_id(PARAMS_KIND, pack_json(dict(params))))

    def find(self, kind: str, params_id: str) -> Job | None:
        """The newest queued, live running (heartbeat within the stale time) or done
        job of this kind with these params; a dead running job is never handed out."""
        cutoff = _now() - timedelta(seconds=self.stale_seconds)
        with self.storage.engine.connect() as conn:
            job_ids = conn.execute(
                select(jobs_table.c.id)
                .where(jobs_table.c.kind == kind, jobs_table.c.params_id == params_id,
                       jobs_table.c.state.in_(("queued", "running", "done")))
                .order_by(jobs_table.c.created_at.desc())
                .limit(5)
            ).scalars().all()
        for job_id in job_ids:
            job = self.get(job_id)
            if job is not None and not (job.state == "running" and (job.updated_at < cutoff or job.cancel_requested)):
                return job
        return None

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

    def _update(self, job_id: str, *, where_state: tuple[str, ...] | None = None,
                attempt: int | None = None, **values: Any) -> bool:
        statement = jobs_table.update().where(jobs_table.c.id == job_id)
        if where_state is not None:
            statement = statement.where(jobs_table.c.state.in_(where_state))
        if attempt is not None:  # the lease: only the worker that claimed this attempt
            statement = statement.where(jobs_table.c.attempts == attempt)
        with self.storage.writing() as conn:
            return conn.execute(statement.values(updated_at=_now(), **values)).rowcount == 1

    def claim(self, job_id: str) -> int | None:
        """queued -> running: the attempt number this worker now holds, None if the
        job was cancelled meanwhile or another worker has it."""
        with self.storage.writing() as conn:
            attempts = conn.execute(
                select(jobs_table.c.attempts).where(jobs_table.c.id == job_id, jobs_table.c.state == "queued")
            ).scalar_one_or_none()
            if attempts is None:
                return None
            attempt = int(attempts) + 1
            claimed = conn.execute(
                jobs_table.update()
                .where(jobs_table.c.id == job_id, jobs_table.c.state == "queued")
                .values(state="running", attempts=attempt, progress_text="starting", updated_at=_now())
            ).rowcount == 1
        return attempt if claimed else None

    def set_progress(self, job_id: str, fraction: float, text: str, attempt: int | None = None) -> bool:
        """Progress and the heartbeat; False once the lease is lost (the job was taken back)."""
        return self._update(job_id, where_state=("running",), attempt=attempt,
                            progress=max(0.0, min(1.0, float(fraction))), progress_text=str(text)[:200])

    def finish(self, job_id: str, state: str, *, result_id: str | None = None,
               error: str | None = None, error_field: str | None = None, attempt: int | None = None,
               where_state: tuple[str, ...] | None = None) -> bool:
        """The outcome; False when the job had already ended (or the lease was lost).
        By default a queued or running job; with `attempt`, only while it runs under that claim."""
        if where_state is None:
            where_state = ("running",) if attempt is not None else ("running", "queued")
        values: dict[str, Any] = {"state": state, "result_id": result_id, "error": error, "error_field": error_field}
        if state == "done":
            values.update(progress=1.0, progress_text="done")
        elif state == "cancelled":
            values.update(progress_text="cancelled")
        return self._update(job_id, where_state=where_state, attempt=attempt, **values)

    def cancel_queued(self, job_id: str) -> bool:
        """queued -> cancelled; True when this call cancelled it (then nothing runs it)."""
        return self._update(job_id, where_state=("queued",), state="cancelled", progress_text="cancelled",
                            error="job: cancelled", error_field="job")

    def request_cancel(self, job_id: str) -> Job | None:
        """A queued job is cancelled at once; a running one is stopped by its worker.
        (webapp.jobs.queue.JobQueue.cancel also cleans up after a queued one.)"""
        self.cancel_queued(job_id)
        self._update(job_id, where_state=("running",), cancel_requested=1, progress_text="cancelling")
        return self.get(job_id)

    def cancel_requested(self, job_id: str, attempt: int | None = None) -> bool:
        """True once the job should stop: cancelled, gone, or (with `attempt`) its lease lost."""
        job = self.get(job_id)
        if job is None or job.cancel_requested or job.state != "running":
            return True
        return attempt is not None and job.attempts != attempt

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

    def stale_running(self, older_than: float | None = None) -> list[Job]:
        """Running jobs whose worker stopped touching them (it died, or its machine did)."""
        cutoff = _now() - timedelta(seconds=self.stale_seconds if older_than is None else older_than)
        with self.storage.engine.connect() as conn:
            rows = conn.execute(
                select(jobs_table.c.id, jobs_table.c.updated_at).where(jobs_table.c.state == "running")
            ).all()
        jobs = [self.get(job_id) for job_id, updated in rows if _aware(updated) < cutoff]
        return [job for job in jobs if job is not None and job.state == "running"]

    def queued_before(self, older_than: float) -> list[Job]:
        """Queued jobs that have waited longer than `older_than` seconds."""
        cutoff = _now() - timedelta(seconds=older_than)
        with self.storage.engine.connect() as conn:
            ids = conn.execute(
                select(jobs_table.c.id).where(jobs_table.c.state == "queued", jobs_table.c.created_at < cutoff)
            ).scalars().all()
        jobs = [self.get(job_id) for job_id in ids]
        return [job for job in jobs if job is not None and job.state == "queued"]

    def live(self, kind: str) -> list[Job]:
        """Every queued or running job of a kind (what may still need its files)."""
        with self.storage.engine.connect() as conn:
            ids = conn.execute(
                select(jobs_table.c.id).where(jobs_table.c.kind == kind,
                                              jobs_table.c.state.in_(("queued", "running")))
            ).scalars().all()
        jobs = [self.get(job_id) for job_id in ids]
        return [job for job in jobs if job is not None]

    def fair_order(self, limit: int = 200) -> list[str]:
        """Queued job ids in the order workers should take them: round robin between clients.

        First the clients with the fewest running jobs, then the client served
        longest ago (its last started job changed least recently; never served
        comes first), then the oldest job: a client with fifty jobs queued gets
        every other start when a second client has one waiting, never all fifty first."""
        with self.storage.engine.connect() as conn:
            queued = conn.execute(
                select(jobs_table.c.id, jobs_table.c.client, jobs_table.c.created_at)
                .where(jobs_table.c.state == "queued").order_by(jobs_table.c.created_at).limit(limit)).all()
            clients = {row[1] for row in queued}
            running: dict[Any, int] = {client: int(count) for client, count in conn.execute(
                select(jobs_table.c.client, func.count()).where(jobs_table.c.state == "running")
                .group_by(jobs_table.c.client)).all()}
            served: dict[Any, datetime] = {client: _aware(moment) for client, moment in conn.execute(
                select(jobs_table.c.client, func.max(jobs_table.c.updated_at))
                .where(jobs_table.c.attempts > 0, jobs_table.c.client.in_([c for c in clients if c is not None]))
                .group_by(jobs_table.c.client)).all()}
        never = datetime.min.replace(tzinfo=timezone.utc)
        turns = sorted((running.get(client, 0), served.get(client, never), _aware(created), job_id)
                       for job_id, client, created in queued)
        return [turn[-1] for turn in turns]

    def requeue(self, job_id: str, attempt: int | None = None) -> bool:
        """running -> queued (its worker died); with `attempt`, only if no one claimed it since."""
        return self._update(job_id, where_state=("running",), attempt=attempt, state="queued", progress=0.0,
                            cancel_requested=0, progress_text="waiting for a worker (its worker stopped)")


# --------------------------------------------------------------------------
# Progress texts with an estimate of the time left


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
        if number.isascii() and number.isdigit():
            return head, int(number)
    return text, None
