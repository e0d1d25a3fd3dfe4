"""Shared fixtures: an app on a throwaway database and its test client.

`app` is built by the real factory with TESTING on and a fresh SQLite file
per test (the share store needs one); `client` is Flask's test client.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from webapp import create_app


def make_app(tmp_path: Any, **config: Any) -> Flask:
    """A fresh app whose database lives in `tmp_path`."""
    from webapp.storage import default_sqlite_url

    settings = {"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path)}
    settings.update(config)
    return create_app(settings)


@pytest.fixture
def app(tmp_path) -> Iterator[Flask]:
    application = make_app(tmp_path)
    yield application
    from webapp.storage import get_storage

    get_storage(application).dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()
