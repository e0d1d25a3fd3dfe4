"""Shared fixtures for every test folder.

`app` is built by the real factory with TESTING on and a fresh SQLite file
per test (the share store needs one); `client` is Flask's test client.
`serving.serve_app` serves an app on loopback for browser tests, and
`browser_type_launch_args` makes pytest-playwright launch Debian's Chromium
(`playwright install` needs the internet and is never used). `sqlite_url`,
`postgres_url` and `db_url` give storage tests a fresh database: SQLite always,
PostgreSQL when PLAYGROUND_TEST_POSTGRES_URL names a server (`make test`
starts one with scripts/ensure-postgres.sh); without it those cases skip and
say why.
"""

from __future__ import annotations

import os
import uuid
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from webapp import create_app
from webapp.infra.storage import default_sqlite_url, get_storage, normalize_url

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
PG_ENV = "PLAYGROUND_TEST_POSTGRES_URL"
PG_SKIP_REASON = (
    f"{PG_ENV} is not set: no PostgreSQL server for the tests "
    "(`make test` starts one with scripts/ensure-postgres.sh when PostgreSQL is installable)"
)


#: Tests of other things run without the write rate limit (webapp.infra.ratelimit);
#: the tests of the limit set RATE_LIMIT_WRITES themselves.
NO_WRITE_LIMIT = {"RATE_LIMIT_WRITES": "", "RATE_LIMIT_WORK": ""}


def make_app(tmp_path: Any, **config: Any) -> Flask:
    """A fresh app whose database lives in `tmp_path` (no write rate limit unless given)."""
    settings = {"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path), **NO_WRITE_LIMIT}
    settings.update(config)
    return create_app(settings)


@pytest.fixture
def app(tmp_path) -> Iterator[Flask]:
    application = make_app(tmp_path)
    yield application
    get_storage(application).dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


# Job thresholds so high that everything within the limits is answered inline:
# for tests of the bounds themselves (the job path checks the same bounds).
INLINE_ONLY = {
    "JOB_IMPORT_BYTES": 1 << 40, "JOB_TRAIN_CHARS": 1 << 40, "JOB_TRAIN_MERGES": 1 << 40,
    "JOB_ENCODE_CHARS": 1 << 40, "JOB_ENCODE_RULES": 1 << 40,
    "JOB_CHARS_TEXT": 1 << 40, "JOB_CHARS_RULES": 1 << 40, "JOB_COUNTS_WORK": 1 << 40,
}


@pytest.fixture
def inline_client(tmp_path) -> Iterator[FlaskClient]:
    """A client of an app that never hands work to a background job."""
    application = make_app(tmp_path, **INLINE_ONLY)
    yield application.test_client()
    get_storage(application).dispose()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Debian's Chromium (or CHROMIUM_PATH), resolving no host but 127.0.0.1."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"No Chromium at {CHROMIUM}. Install Debian's package (apt-get install chromium) "
            "or set CHROMIUM_PATH=/path/to/chromium.",
            pytrace=False,
        )
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ],
    }


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    """A SQLite file in its own folder (gunicorn_factory's default database stays apart)."""
    return default_sqlite_url(tmp_path / "db")


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
