"""The storage's database schema: the blob and job tables, and the ordered migrations that build them.

`MIGRATIONS[n - 1]` brings a database from version n - 1 to n; webapp/infra/storage.py
runs them (under a lock) and records the version in `schema_version`.

What it does not do: connect, read or write rows (storage.py and webapp/jobs/store.py).
"""

from __future__ import annotations

from typing import Callable

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    func,
    text,
)
from sqlalchemy.engine import Connection

SCHEMA_VERSION_TABLE = "playground_schema_version"
BLOBS_TABLE = "playground_blobs"

metadata = MetaData()

schema_version = Table(
    SCHEMA_VERSION_TABLE,
    metadata,
    Column("version", Integer, nullable=False),
)

#: The current shape of the blob table (after every migration).
blobs = Table(
    BLOBS_TABLE,
    metadata,
    Column("kind", String(32), primary_key=True),
    Column("id", String(32), primary_key=True),
    Column("data", LargeBinary, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("size", Integer, nullable=True),  # added by migration 2
)

JOBS_TABLE = "playground_jobs"

#: Background jobs (webapp.jobs.queue): one row per job, updated as it runs (added by migration 3).
#: Unlike blobs these rows change; their inputs and results are blobs.
jobs = Table(
    JOBS_TABLE,
    metadata,
    Column("id", String(32), primary_key=True),
    Column("kind", String(32), nullable=False),
    Column("state", String(16), nullable=False),  # queued, running, done, failed, cancelled
    Column("params_id", String(32), nullable=False),  # blob kind "jobparams"
    Column("progress", Float, nullable=False),  # 0.0 .. 1.0
    Column("progress_text", String(200), nullable=False),
    Column("result_id", String(32), nullable=True),  # blob kind "jobresult"
    Column("error", Text, nullable=True),
    Column("error_field", String(100), nullable=True),
    Column("cancel_requested", Integer, nullable=False),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),  # the running job's heartbeat
    Column("attempts", Integer, nullable=False, server_default="0"),  # claims so far; the lease (migration 4)
    Column("cancel_hash", String(64), nullable=True),  # SHA-256 of the submitter's cancel token (migration 5)
    Column("client", String(32), nullable=True),  # who submitted it, hashed (migration 6); None: code
    Column("upload_bytes", BigInteger, nullable=True),  # bytes of uploads it holds on disk (migration 6)
    Index("ix_playground_jobs_params", "kind", "params_id"),
    Index("ix_playground_jobs_state", "state", "client"),  # migration 6
)


# --------------------------------------------------------------------------
# Migrations: each takes a connection inside the migration transaction.
# Never edit a released migration; append a new one.


def _migration_1(conn: Connection) -> None:
    """The blob table as first released (no size column)."""
    v1 = MetaData()
    Table(
        BLOBS_TABLE,
        v1,
        Column("kind", String(32), primary_key=True),
        Column("id", String(32), primary_key=True),
        Column("data", LargeBinary, nullable=False),
        Column("created_at", DateTime(timezone=True), nullable=False),
    )
    v1.create_all(conn)


def _migration_2(conn: Connection) -> None:
    """Record each blob's size, so usage can be reported without reading data."""
    conn.execute(text(f"ALTER TABLE {BLOBS_TABLE} ADD COLUMN size INTEGER"))
    conn.execute(
        blobs.update().where(blobs.c.size.is_(None)).values(size=func.length(blobs.c.data))
    )


#: Job columns added after migration 3 (by the migrations that add them).
_LATER_JOB_COLUMNS = frozenset({"attempts", "cancel_hash", "client", "upload_bytes"})


def _migration_3(conn: Connection) -> None:
    """The background jobs table (webapp.jobs.queue), as first released: without the later columns."""
    v3 = MetaData()
    Table(JOBS_TABLE, v3, *(column._copy() for column in jobs.columns if column.name not in _LATER_JOB_COLUMNS),
          Index("ix_playground_jobs_params", "kind", "params_id")).create(conn)


def _migration_4(conn: Connection) -> None:
    """Jobs count their claims: a worker holds a job only while the attempt it claimed is the row's."""
    conn.execute(text(f"ALTER TABLE {JOBS_TABLE} ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0"))


def _migration_5(conn: Connection) -> None:
    """Jobs keep the hash of their submitter's cancel token (webapp.jobs.tokens); older rows have none."""
    conn.execute(text(f"ALTER TABLE {JOBS_TABLE} ADD COLUMN cancel_hash VARCHAR(64)"))


def _migration_6(conn: Connection) -> None:
    """Jobs record their client (hashed) and the bytes of uploads they hold: the queue's caps and fair order."""
    conn.execute(text(f"ALTER TABLE {JOBS_TABLE} ADD COLUMN client VARCHAR(32)"))
    conn.execute(text(f"ALTER TABLE {JOBS_TABLE} ADD COLUMN upload_bytes BIGINT"))
    conn.execute(text(f"CREATE INDEX ix_playground_jobs_state ON {JOBS_TABLE} (state, client)"))


MIGRATIONS: tuple[Callable[[Connection], None], ...] = (
    _migration_1, _migration_2, _migration_3, _migration_4, _migration_5, _migration_6,
)
LATEST_VERSION = len(MIGRATIONS)
