"""An app on a throwaway SQLite file for the security tests."""

from __future__ import annotations

import pytest

from webapp import create_app
from webapp.storage import default_sqlite_url, get_storage


@pytest.fixture
def sec_app(tmp_path):
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path)})
    yield app
    get_storage(app).dispose()


@pytest.fixture
def sec_client(sec_app):
    return sec_app.test_client()
