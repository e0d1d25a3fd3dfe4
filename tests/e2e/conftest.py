"""Browser fixtures: the app served on loopback, Debian's Chromium driven by Playwright.

`playwright install` needs the internet and is never used: the browser is
CHROMIUM_PATH or /usr/bin/chromium (`make test` installs Debian's package
where it can). The browser resolves no host but 127.0.0.1. Screenshots go
to test-artifacts/screenshots/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from werkzeug.serving import make_server

from webapp import PROJECT_ROOT, create_app

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on 127.0.0.1 with a free port, for the whole session."""
    from webapp.storage import default_sqlite_url, get_storage

    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path_factory.mktemp("e2e-db"))})
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="e2e-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    thread.join(timeout=5)
    get_storage(app).dispose()


@pytest.fixture(scope="session")
def base_url(live_server: str) -> str:
    return live_server


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
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
def screenshot(page: Any) -> Callable[[str], Path]:
    """Save a full-page screenshot under test-artifacts/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, target: Any = None) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        (target or page).screenshot(path=str(path), full_page=True)
        return path

    return take
