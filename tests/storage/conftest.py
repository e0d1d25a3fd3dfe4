"""Database fixtures: every storage test runs against SQLite and PostgreSQL.

SQLite is a fresh file per test. PostgreSQL is the server named by
PLAYGROUND_TEST_POSTGRES_URL (`make test` starts one on loopback with
scripts/ensure-postgres.sh); each test gets its own freshly created database,
dropped afterwards. Without the variable the PostgreSQL cases skip and say why.
"""

from __future__ import annotations

import os
import uuid
from typing import Iterator

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from webapp.storage import default_sqlite_url, normalize_url

PG_ENV = "PLAYGROUND_TEST_POSTGRES_URL"
PG_SKIP_REASON = (
    f"{PG_ENV} is not set: no PostgreSQL server for the tests "
    "(`make test` starts one with scripts/ensure-postgres.sh when PostgreSQL is installable)"
)


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return default_sqlite_url(tmp_path)


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A brand-new PostgreSQL database on the test server, dropped afterwards."""
    server = os.environ.get(PG_ENV)
    if not server:
        pytest.skip(PG_SKIP_REASON)
    server = normalize_url(server)
    name = f"playground_t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(server).set(database=name).render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request) -> str:
    """The same test against an embedded SQLite file and a real PostgreSQL."""
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "postgres_url")
