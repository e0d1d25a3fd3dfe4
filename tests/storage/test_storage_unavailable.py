"""Issue 28, row 11: a database that cannot be written.

The database is created and migrated by one app, then opened read-only
(SQLite's `mode=ro`, the same "attempt to write a readonly database" a
read-only instance folder gives, even to root). `/healthz` must say so (it
writes, then rolls back), every write is a 503 naming the storage instead of
a 500, and a page that fails to store keeps what the user typed.
"""

from __future__ import annotations

import pytest

from tests.conftest import make_app
from webapp.infra.storage import get_storage

HTMX = {"HX-Request": "true"}
TYPED = "a text the user typed, kept \u00e9"


@pytest.fixture
def read_only_app(tmp_path):
    writable = make_app(tmp_path)  # creates and migrates tmp_path/playground.sqlite3
    get_storage(writable).dispose()
    url = f"sqlite:///file:{tmp_path / 'playground.sqlite3'}?mode=ro&uri=true"
    app = make_app(tmp_path / "ro", DATABASE_URL=url, DATABASE_AUTO_MIGRATE=0)
    yield app
    get_storage(app).dispose()


def test_row11_healthz_checks_that_the_database_can_be_written(read_only_app):
    answer = read_only_app.test_client().get("/healthz")
    assert answer.status_code == 503
    assert answer.get_json() == {"status": "error", "database": "unavailable"}


def test_row11_healthz_writes_nothing_when_healthy(app):
    client = app.test_client()
    assert client.get("/healthz").status_code == 200
    assert get_storage(app).usage() == []  # the probe rolled back: no blob, no row


def test_row11_a_share_is_a_503_naming_the_storage(read_only_app):
    answer = read_only_app.test_client().post("/api/share", json={"tool": "bytes", "text": TYPED})
    assert answer.status_code == 503
    error = answer.get_json()["error"]
    assert error["field"] == "storage"
    assert "storage is unavailable" in error["message"]
    assert answer.headers["Retry-After"]


def test_row11_opening_a_tokenizer_file_is_a_503(read_only_app):
    body = {"format": "playground", "content": '{"level": "bytes", "merges": [[104, 105, 256]]}'}
    answer = read_only_app.test_client().post("/api/import", json=body)
    assert answer.status_code == 503, answer.get_json()
    assert answer.get_json()["error"]["field"] == "storage"


def test_row11_a_corpus_job_is_a_503(read_only_app):
    answer = read_only_app.test_client().post("/api/corpus", json={"text": "low lower lowest " * 20,
                                                                    "num_merges": 10})
    assert answer.status_code == 503, answer.get_json()
    assert answer.get_json()["error"]["field"] == "storage"


def test_row11_the_share_button_keeps_the_page_and_says_why(read_only_app):
    answer = read_only_app.test_client().post("/share", data={"tool": "bytes", "text": TYPED}, headers=HTMX)
    assert answer.status_code == 200  # htmx swaps the message in; the page around it is untouched
    html = answer.get_data(as_text=True)
    assert "Could not share" in html and "storage is unavailable" in html


def test_row11_the_corpus_page_keeps_what_was_typed(read_only_app):
    answer = read_only_app.test_client().post("/corpus", data={"text": TYPED, "num_merges": "10",
                                                               "pretokenize": "gpt2", "level": "bytes"})
    assert answer.status_code == 503
    html = answer.get_data(as_text=True)
    assert "storage is unavailable" in html
    assert "a text the user typed, kept \u00e9" in html


def test_row11_rate_limit_counters_that_cannot_be_written_are_a_503(tmp_path, monkeypatch):
    import sqlite3

    from webapp.infra import ratelimit

    app = make_app(tmp_path, RATE_LIMIT_WRITES="20/minute")

    def read_only(*args, **kwargs):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    monkeypatch.setattr(ratelimit.SqliteStorage, "incr", read_only)
    answer = app.test_client().post("/api/share", json={"tool": "bytes", "text": TYPED})
    assert answer.status_code == 503
    assert answer.get_json()["error"]["field"] == "storage"
    get_storage(app).dispose()
