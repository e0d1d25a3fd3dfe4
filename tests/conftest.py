"""Shared fixtures for every test folder.

`app` is the worker's one app (built once per pytest-xdist worker: building
one costs about 0.3 s, mostly werkzeug compiling its routes) with a fresh
SQLite database, job queue and settings for every test (`fresh_state`);
`client` is Flask's test client. `make_app` still builds a whole new app, for
tests of settings that are read when the app is built. `serving.serve_app`
serves an app on loopback for browser tests, and `browser_type_launch_args`
makes pytest-playwright launch Debian's headless Chromium (CHROMIUM). `sqlite_url`,
`postgres_url` and `db_url` give storage tests a fresh database (PostgreSQL
only when PLAYGROUND_TEST_POSTGRES_URL names a server; else those cases skip).
Markers, groups and Hypothesis profiles: docs/testing.md.
"""

from __future__ import annotations

import gc
import os
import shutil
import uuid
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import BrowserContext, expect
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

import tests.hypothesis_profiles  # noqa: F401  (registers the profiles before `--hypothesis-profile` is read)
from webapp import create_app
from webapp.infra import storage as storage_layer
from webapp.infra.storage import Storage, default_sqlite_url, get_storage, normalize_url
from webapp.jobs import queue as queue_layer

#: The browser of the browser tests: CHROMIUM_PATH, else Debian's chromium-headless-shell (the same
#: Blink without the desktop browser around it: the browser tests took 288 s of CPU with it, 632 s with
#: Debian's chromium, docs/testing.md), else Debian's chromium.
CHROMIUM = os.environ.get("CHROMIUM_PATH") or next(
    (path for path in ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium") if os.access(path, os.X_OK)),
    "/usr/bin/chromium-headless-shell")
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


@pytest.fixture(scope="session")
def worker_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    """One app per test process, its database migrated once (the template `fresh_state` copies)."""
    application = make_app(tmp_path_factory.mktemp("worker-app"))
    get_storage(application).dispose()  # closed, so the file holds every migration (WAL checkpointed)
    yield application
    get_storage(application).dispose()


@contextmanager
def fresh_state(application: Flask, tmp_path: Path, **config: Any) -> Iterator[Flask]:
    """`application` as a brand-new app would be for one test: a copy of the migrated
    database in `tmp_path` (where make_app would put it), the job queue beside it,
    `config` applied; afterwards its settings and services are put back as they were."""
    saved_config = dict(application.config)
    saved_extensions = dict(application.extensions)
    template = get_storage(application).url[len("sqlite:///"):]
    url = default_sqlite_url(tmp_path)
    shutil.copyfile(template, url[len("sqlite:///"):])
    application.config.update({"DATABASE_URL": url, **config})
    storage = Storage(url, max_blob_bytes=application.config.get("LIMIT_BLOB_BYTES"))
    application.extensions[storage_layer.EXTENSION_KEY] = storage
    queue_layer.init_app(application)
    try:
        yield application
    finally:
        storage.dispose()
        application.config.clear()
        application.config.update(saved_config)
        application.extensions.clear()
        application.extensions.update(saved_extensions)


@pytest.fixture
def app(worker_app: Flask, tmp_path: Path) -> Iterator[Flask]:
    with fresh_state(worker_app, tmp_path) as application:
        yield application


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
def inline_client(worker_app: Flask, tmp_path: Path) -> Iterator[FlaskClient]:
    """A client of an app that never hands work to a background job."""
    with fresh_state(worker_app, tmp_path, **INLINE_ONLY) as application:
        yield application.test_client()


@pytest.fixture(scope="session", autouse=True)
def patient_expect() -> None:
    """Playwright's `expect` waits 15 s, not 5: under `make test` both cores are busy with other tests, and a
    page that swaps in 400 KB (the Languages table, chart and map) was seen taking longer than 5 s in CI."""
    expect.set_options(timeout=15_000)


#: How long a page load may take in a browser test (Playwright's default is 30 s): the first page that
#: names a preset opens it in the test's server (a production server opens and warms its presets before
#: it serves), and a busy machine stretched that past 30 s (gpt_oss, beside two busy loops).
NAVIGATION_TIMEOUT_MS = 60_000


@pytest.fixture
def context(context: BrowserContext) -> BrowserContext:
    """pytest-playwright's browser context, with page loads allowed NAVIGATION_TIMEOUT_MS."""
    context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
    return context


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    """Debian's Chromium (or CHROMIUM_PATH), resolving no host but 127.0.0.1."""
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(
            f"No Chromium at {CHROMIUM}. Install Debian's package (apt-get install chromium-headless-shell) "
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
def collector_on() -> Iterator[None]:
    """Python's cyclic collector on for the test (the tests of core/collector.py and of what pauses it read
    its state), and back as it was after, whatever the test left (one of them turns it off)."""
    was_on = gc.isenabled()
    gc.enable()
    yield
    if was_on:
        gc.enable()
    else:
        gc.disable()


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


# --------------------------------------------------------------------------
# Markers (docs/testing.md, "Tiers, markers and workers")

HERE = Path(__file__).parent
#: Folders whose every test carries a marker: the browser tests and the production servers'.
FOLDER_MARKERS = {"e2e": "e2e", "hostile": "hostile"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark by folder and by fixture, then put the long modules first."""
    for item in items:
        path = Path(str(item.fspath))
        folder = path.relative_to(HERE).parts[0] if HERE in path.parents else ""
        if folder in FOLDER_MARKERS:
            item.add_marker(FOLDER_MARKERS[folder])
        if "page" in item.fixturenames:  # pytest-playwright's page: a real browser
            item.add_marker("e2e")
        if {"postgres_url", "db_url"} & set(item.fixturenames):
            item.add_marker("server")
        if item.get_closest_marker("alone") and ALONE_MARK not in _source(path):
            raise pytest.UsageError(f"{item.nodeid} is marked alone, but not by `{ALONE_MARK}` in its file: "
                                    "scripts/run-tests.sh finds the alone tests' files by that text")
    items[:] = sorted(items, key=_module_rank(items).__getitem__)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Freeze what collecting left alive (every test module, the libraries they import, the items: 570,000
    objects, alive to the end of the run) out of the garbage collector's walks. Each full collection walked
    them all again (about 0.2 s each here); tests/unit/tokenizer/{explain,prompt,models,pretokenize} in one
    process spent 7.2 s in full collections before, 3.4 s after (docs/testing.md)."""
    gc.collect()
    gc.freeze()


#: How a test is marked `alone` (scripts/run-tests.sh collects only the files that say it, for the alone run).
ALONE_MARK = "pytest.mark.alone"


@lru_cache(maxsize=None)
def _source(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _module_rank(items: list[pytest.Item]) -> dict[pytest.Item, tuple[int, int, int]]:
    """Each test's place: modules that fork the pytest process first (a fork copies the page tables
    of a worker grown by the presets its earlier tests opened: 150 small counts took 71 s late in a
    run, 4 s early), then the longest ones (by their `slow` tests, then their browser tests), each module's tests
    kept together and in their order. pytest-xdist hands modules out in this order (--dist
    loadscope), so the long ones start at once rather than one of them ending the run alone."""
    weight: dict[Path, int] = {}
    for item in items:
        path = Path(str(item.fspath))
        cost = 10_000 if item.get_closest_marker("forks") else 100 if item.get_closest_marker("slow") else (
            1 if item.get_closest_marker("e2e") else 0)
        weight[path] = weight.get(path, 0) + cost
    first_seen = {path: number for number, path in enumerate(dict.fromkeys(Path(str(i.fspath)) for i in items))}
    return {item: (-weight[Path(str(item.fspath))], first_seen[Path(str(item.fspath))], number)
            for number, item in enumerate(items)}
