"""Content-addressed, immutable storage for shared states and other blobs.

What it does not do: interpret the bytes (web/share/routes.py turns states
into canonical JSON, webapp/opened/store.py stores opened tokenizer
files, webapp/jobs/store.py job parameters and results), delete or
expire anything, or know about HTTP beyond `init_app` / `get_storage`.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import sqlite3
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import click
from flask import current_app
from flask.cli import AppGroup
from sqlalchemy import (
    Engine,
    event,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.exc import OperationalError

from webapp.infra.database import new_engine
from webapp.infra.errors import ApiError, api_error
from webapp.infra.schema import LATEST_VERSION, MIGRATIONS, SCHEMA_VERSION_TABLE, blobs, schema_version
from webapp.tokenizer import TokenizerError

#: Length in characters of every blob id (10 bytes of SHA-256 in base32 = 80 bits).
ID_LENGTH = 16
_ID_RE = re.compile(r"[a-z2-7]{%d}" % ID_LENGTH)
_KIND_RE = re.compile(r"[a-z][a-z0-9_-]{0,31}")

# Any constant works; it only has to be the same for every app process.
_PG_MIGRATION_LOCK = 0x42504550  # "BPEP"


class StorageError(RuntimeError):
    """The database cannot be used as asked (schema too new, id collision...)."""


#: Seconds a client is told to wait (Retry-After) when the storage is unavailable.
UNAVAILABLE_RETRY_SECONDS = 30


class StorageUnavailable(TokenizerError):
    """The database cannot be reached or written (a read-only file or folder, a full disk, a
    server down): raised for every driver OperationalError (the engine's handle_error hook),
    answered 503 with Retry-After (`http_status`); pages that catch TokenizerError show it
    beside the form and keep what was typed."""

    http_status = 503
    retry_after = UNAVAILABLE_RETRY_SECONDS

    def __init__(self, reason: str) -> None:
        super().__init__(f"storage: the storage is unavailable ({reason[:160]}); nothing was saved and "
                         f"what you typed is kept: try again in a minute", field="storage")


def _storage_unavailable(context: Any) -> None:
    """SQLAlchemy's handle_error hook: an OperationalError becomes StorageUnavailable."""
    if isinstance(context.sqlalchemy_exception, OperationalError):
        raise StorageUnavailable(str(context.original_exception).splitlines()[0] if str(
            context.original_exception) else type(context.original_exception).__name__)


class BlobTooLarge(ValueError):
    """A blob is over the configured size limit; the message states the limit."""

    def __init__(self, kind: str, size: int, limit: int) -> None:
        super().__init__(
            f"{kind}: {size:,} bytes is over the storage limit of {limit:,} bytes"
        )
        self.kind = kind
        self.size = size
        self.limit = limit


# --------------------------------------------------------------------------
# Pure helpers


def content_id(kind: str, data: bytes) -> str:
    """The id a blob of this kind and content gets (pure, no database)."""
    check_kind(kind)
    digest = hashlib.sha256(kind.encode("ascii") + b"\x00" + data).digest()
    return base64.b32encode(digest[:10]).decode("ascii").lower()


def is_valid_id(blob_id: object) -> bool:
    """Whether a string has the shape of a blob id (says nothing of existence)."""
    return isinstance(blob_id, str) and _ID_RE.fullmatch(blob_id) is not None


def check_kind(kind: str) -> None:
    """Kinds are short lowercase names; anything else is a programming error."""
    if not isinstance(kind, str) or not _KIND_RE.fullmatch(kind):
        raise ValueError(f"blob kind must match {_KIND_RE.pattern}, got {kind!r}")


def normalize_url(url: str) -> str:
    """Accept the usual `postgres://` / `postgresql://` spellings; use psycopg 3.

    SQLAlchemy would pick psycopg2 for a bare `postgresql://`, which is not a
    dependency of this project.
    """
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix):]
    return url


def default_sqlite_url(instance_path: str | Path) -> str:
    """The embedded default: a SQLite file in the app's instance folder."""
    return f"sqlite:///{Path(instance_path) / 'playground.sqlite3'}"




# --------------------------------------------------------------------------
# The store


@dataclass(frozen=True)
class KindUsage:
    """How many blobs of one kind are stored and their total size in bytes."""

    kind: str
    count: int
    total_bytes: int


class Storage:
    """One database of content-addressed blobs. Thread-safe; one per process."""

    def __init__(self, url: str, *, max_blob_bytes: int | None = None, pool: bool = True) -> None:
        self.url = normalize_url(url)
        self.max_blob_bytes = max_blob_bytes
        self.engine = _make_engine(self.url, pool=pool)
        self.dialect = self.engine.dialect.name
        # A forked child (gunicorn with preload_app, multiprocessing) must not
        # reuse the parent's pooled connections; drop them without closing.
        engine_ref = weakref.ref(self.engine)
        os.register_at_fork(after_in_child=lambda: _dispose_in_child(engine_ref))

    # -- schema ------------------------------------------------------------

    def schema_version(self) -> int:
        """The version recorded in the database (0 for an empty database)."""
        with self.engine.connect() as conn:
            return _read_version(conn)

    def migrate(self, target: int = LATEST_VERSION) -> int:
        """Bring the schema to `target` (default: latest); returns the version.

        Safe to call from many processes at once: the whole check-and-migrate
        runs in one transaction holding an exclusive lock (PostgreSQL advisory
        lock, SQLite `BEGIN IMMEDIATE`); DDL is transactional in both.
        """
        with self.writing() as conn:
            if self.dialect == "postgresql":
                conn.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": _PG_MIGRATION_LOCK})
            current = _read_version(conn)
            if current > LATEST_VERSION:
                raise StorageError(
                    f"the database schema is version {current}, newer than this app "
                    f"understands ({LATEST_VERSION}); upgrade the app"
                )
            if current == 0:
                schema_version.create(conn, checkfirst=True)
                conn.execute(schema_version.insert().values(version=0))
            for number in range(current + 1, target + 1):
                MIGRATIONS[number - 1](conn)
                conn.execute(schema_version.update().values(version=number))
            return max(current, target)

    # -- blobs -------------------------------------------------------------

    def save_blob(self, kind: str, data: bytes) -> tuple[str, bool]:
        """Store `data`; returns (id, created) where created is False if it existed."""
        data = bytes(data)
        if self.max_blob_bytes is not None and len(data) > self.max_blob_bytes:
            raise BlobTooLarge(kind, len(data), self.max_blob_bytes)
        blob_id = content_id(kind, data)
        insert = _insert_ignoring_duplicates(self.dialect)
        row = {
            "kind": kind,
            "id": blob_id,
            "data": data,
            "size": len(data),
            "created_at": datetime.now(timezone.utc),
        }
        with self.writing() as conn:
            # RETURNING gives a row only when the insert happened (rowcount is
            # not reliable across drivers for ON CONFLICT DO NOTHING).
            created = conn.execute(insert.values(**row).returning(blobs.c.id)).first() is not None
            if not created:
                existing = conn.execute(
                    select(blobs.c.data).where(blobs.c.kind == kind, blobs.c.id == blob_id)
                ).scalar_one()
                # 80 bits make this practically impossible, but never overwrite
                # or hand out another state's link if it does happen.
                if bytes(existing) != data:
                    raise StorageError(f"content id collision for {kind}/{blob_id}")
        return blob_id, created

    def put_blob(self, kind: str, data: bytes) -> str:
        """Store `data` (idempotent) and return its content id."""
        return self.save_blob(kind, data)[0]

    def get_blob(self, kind: str, blob_id: str) -> bytes | None:
        """The stored bytes, or None for an unknown or malformed id."""
        check_kind(kind)
        if not is_valid_id(blob_id):
            return None
        with self.engine.connect() as conn:
            data = conn.execute(
                select(blobs.c.data).where(blobs.c.kind == kind, blobs.c.id == blob_id)
            ).scalar_one_or_none()
        return None if data is None else bytes(data)

    def has_blob(self, kind: str, blob_id: str) -> bool:
        """Whether a blob exists, without reading its data."""
        check_kind(kind)
        if not is_valid_id(blob_id):
            return False
        with self.engine.connect() as conn:
            found = conn.execute(
                select(blobs.c.id).where(blobs.c.kind == kind, blobs.c.id == blob_id)
            ).first()
        return found is not None

    def list_ids(self, kind: str) -> list[str]:
        """Every id of a kind, sorted (for tests and maintenance, not for pages)."""
        check_kind(kind)
        with self.engine.connect() as conn:
            return list(
                conn.execute(
                    select(blobs.c.id).where(blobs.c.kind == kind).order_by(blobs.c.id)
                ).scalars()
            )

    def usage(self) -> list[KindUsage]:
        """Count and total size per kind."""
        with self.engine.connect() as conn:
            rows = conn.execute(
                select(blobs.c.kind, func.count(), func.coalesce(func.sum(blobs.c.size), 0))
                .group_by(blobs.c.kind)
                .order_by(blobs.c.kind)
            ).all()
        return [KindUsage(kind, int(count), int(total)) for kind, count, total in rows]

    def ping(self) -> bool:
        """True when the database can be written (for /healthz): an update that changes
        nothing (the schema version set to itself), then rolled back, so a read-only
        file, folder or server fails here and a healthy probe leaves nothing behind."""
        try:
            with self.engine.connect() as conn:
                with conn.begin() as transaction:
                    conn.execute(schema_version.update().values(version=schema_version.c.version))
                    transaction.rollback()
            return True
        except Exception:  # any driver error means "not healthy", never a 500
            return False

    def dispose(self) -> None:
        """Close pooled connections (after fork, at shutdown, in tests)."""
        self.engine.dispose()

    # -- internals ---------------------------------------------------------

    @contextmanager
    def writing(self) -> Iterator[Connection]:
        """A transaction that takes the write lock up front on SQLite.

        A deferred SQLite transaction that reads and then writes can fail with
        "database is locked" without waiting; BEGIN IMMEDIATE waits for the
        busy timeout instead, so concurrent writers queue up.
        """
        with self.engine.connect() as conn:
            conn.execution_options(playground_begin="BEGIN IMMEDIATE")
            with conn.begin():
                yield conn


def _dispose_in_child(engine_ref: "weakref.ref[Engine]") -> None:
    engine = engine_ref()
    if engine is not None:
        engine.dispose(close=False)


def _read_version(conn: Connection) -> int:
    if not inspect(conn).has_table(SCHEMA_VERSION_TABLE):
        return 0
    version = conn.execute(select(func.max(schema_version.c.version))).scalar()
    return int(version or 0)


def _insert_ignoring_duplicates(dialect: str) -> Any:
    """INSERT ... ON CONFLICT DO NOTHING for the dialects we support."""
    if dialect == "postgresql":
        return pg_insert(blobs).on_conflict_do_nothing(index_elements=["kind", "id"])
    if dialect == "sqlite":
        return sqlite_insert(blobs).on_conflict_do_nothing(index_elements=["kind", "id"])
    raise StorageError(f"unsupported database {dialect!r}: use SQLite or PostgreSQL")


def _make_engine(url: str, *, pool: bool) -> Engine:
    engine = new_engine(url, pool=pool)
    event.listen(engine, "handle_error", _storage_unavailable)
    return engine


# --------------------------------------------------------------------------
# Flask integration

EXTENSION_KEY = "playground_storage"


def init_app(app: Any) -> Storage:
    """Open the app's database (config DATABASE_URL) and migrate it.

    DATABASE_URL comes from the app config (PLAYGROUND_DATABASE_URL in the
    environment), else the conventional DATABASE_URL environment variable, else
    a SQLite file in the instance folder. DATABASE_AUTO_MIGRATE=0 skips the
    start-up migration (then run `flask --app webapp db upgrade`).
    """
    url = app.config.get("DATABASE_URL") or os.environ.get("DATABASE_URL") or default_sqlite_url(
        app.instance_path
    )
    app.config["DATABASE_URL"] = url
    storage = Storage(url, max_blob_bytes=app.config.get("LIMIT_BLOB_BYTES"))
    if app.config.get("DATABASE_AUTO_MIGRATE", True):
        storage.migrate()
    app.extensions[EXTENSION_KEY] = storage
    # sqlite3 used directly (the job queue's and the rate limit's files) fails the same way
    app.register_error_handler(sqlite3.OperationalError, _answer_unavailable)
    _register_cli(app)
    return storage


def _answer_unavailable(exc: Exception) -> Any:
    return api_error(ApiError.from_tokenizer(StorageUnavailable(str(exc) or type(exc).__name__)))


def get_storage(app: Any = None) -> Storage:
    """The Storage of `app`, or of the current Flask app."""
    if app is None:
        app = current_app
    storage: Storage = app.extensions[EXTENSION_KEY]
    return storage


def put_blob(kind: str, data: bytes) -> str:
    """Store bytes under the current app's database; returns the content id."""
    return get_storage().put_blob(kind, data)


def get_blob(kind: str, blob_id: str) -> bytes | None:
    """Bytes stored under `kind`/`blob_id` in the current app's database, or None."""
    return get_storage().get_blob(kind, blob_id)


def _register_cli(app: Any) -> None:
    """`flask --app webapp db upgrade|version|usage`."""
    if "db" in app.cli.commands:
        return
    group = AppGroup("db", help="The playground's share/blob database.")

    @group.command("upgrade")
    def upgrade() -> None:
        """Create or migrate the schema to the latest version."""
        version = get_storage(app).migrate()
        click.echo(f"schema version {version} at {make_url(get_storage(app).url).render_as_string(hide_password=True)}")

    @group.command("version")
    def version() -> None:
        """Print the schema version of the database."""
        click.echo(str(get_storage(app).schema_version()))

    @group.command("usage")
    def usage() -> None:
        """Print how many blobs of each kind are stored, and their size."""
        for row in get_storage(app).usage():
            click.echo(f"{row.kind}\t{row.count}\t{row.total_bytes}")

    app.cli.add_command(group)
