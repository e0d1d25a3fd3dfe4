"""The storage's SQLAlchemy engines: a SQLite file shared by several processes, or PostgreSQL.

SQLite runs in WAL mode with FULL sync, a busy timeout, and an explicit
BEGIN emitted by SQLAlchemy (so DDL runs in the migration's transaction).

What it does not do: the schema (schema.py) or blobs (storage.py).
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.pool import NullPool


def new_engine(url: str, *, pool: bool) -> Engine:
    """A SQLAlchemy engine for `url`: a SQLite file (its folder made) tuned below, or PostgreSQL."""
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(
            url,
            connect_args={"timeout": 60},
            poolclass=None if pool else NullPool,
        )
        _configure_sqlite(engine)
        return engine
    return create_engine(url, pool_pre_ping=True, poolclass=None if pool else NullPool)


def _set_wal(cursor: Any, seconds: float = 60.0) -> None:
    """Switch a SQLite file to WAL, waiting while another process holds it.

    Changing the journal mode of a fresh file needs it to itself and does not
    always go through the busy timeout: while a first process migrates, the
    others' switch can fail at once with "database is locked". Once a file is
    in WAL mode it stays so, and the statement returns at once.
    """
    deadline = time.monotonic() + seconds
    while True:
        try:
            cursor.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _configure_sqlite(engine: Engine) -> None:
    """WAL for concurrent readers, FULL sync for durability, explicit BEGIN.

    pysqlite's own transaction handling does not emit BEGIN before DDL and
    cannot do BEGIN IMMEDIATE, so it is switched off and SQLAlchemy's begin
    event emits the statement (the documented SQLAlchemy recipe).
    """

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA busy_timeout = 60000")
        _set_wal(cursor)
        cursor.execute("PRAGMA synchronous = FULL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        conn.exec_driver_sql(conn.get_execution_options().get("playground_begin", "BEGIN"))
