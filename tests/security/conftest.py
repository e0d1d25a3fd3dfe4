"""An app on a throwaway SQLite file for the security tests."""

from __future__ import annotations

import pytest

from tests.conftest import make_app
from tests.serving import serve_app
from webapp.infra.storage import get_storage


@pytest.fixture
def sec_app(tmp_path):
    app = make_app(tmp_path)
    yield app
    get_storage(app).dispose()


@pytest.fixture
def sec_client(sec_app):
    return sec_app.test_client()


@pytest.fixture(scope="module")
def sec_server(tmp_path_factory):
    """The app served on loopback from a thread, for browser checks."""
    app = make_app(tmp_path_factory.mktemp("csp"))
    with serve_app(app, "csp-server") as url:
        yield url
