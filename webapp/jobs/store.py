"""Job rows and their blobs: the jobs table of webapp.infra.storage, the budgets a job runs under.

`JobStore` creates a job (content-addressed params: the same kind and input
gives back the queued, running or done job), moves it through its states,
records progress and the outcome, and finds the stale rows of dead workers.
What it does not do: run jobs (webapp.jobs.runner), queue them or answer HTTP
(webapp.jobs.queue).
"""

from __future__ import annotations

import json
import secrets
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Mapping

from sqlalchemy import select

from webapp.infra.storage import Storage, is_valid_id, jobs as jobs_table
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
        if number.isdigit():
            return head, int(number)
    return text, None
