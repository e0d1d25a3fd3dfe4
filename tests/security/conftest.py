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


@pytest.fixture(scope="module")
def sec_server(tmp_path_factory):
    """The app served on loopback from a thread, for browser checks."""
    import threading

    from werkzeug.serving import make_server

    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path_factory.mktemp("csp"))})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)
    get_storage(app).dispose()


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    """Debian's Chromium (or CHROMIUM_PATH), resolving no host but 127.0.0.1."""
    import os

    chromium = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not os.access(chromium, os.X_OK):
        pytest.fail(f"No Chromium at {chromium}: apt-get install chromium, or set CHROMIUM_PATH.", pytrace=False)
    return {
        **browser_type_launch_args,
        "executable_path": chromium,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"],
    }
