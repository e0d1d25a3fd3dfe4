"""Browser fixtures: the app served on loopback for Playwright (the Chromium
launch settings are in tests/conftest.py). Screenshots go
to test-artifacts/screenshots/ (git-ignored) for a person to look at.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from playwright.sync_api import ConsoleMessage, Page
from tests.serving import serve_app

from webapp import PROJECT_ROOT, create_app
from webapp.infra.storage import default_sqlite_url

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app on 127.0.0.1 with a free port, for the whole session."""
    # One server for every page test of the session: no write rate limit (tests/hostile/test_clients.py tests it).
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path_factory.mktemp("e2e-db")),
                      "RATE_LIMIT_WRITES": ""})
    with serve_app(app, "e2e-server") as url:
        yield url


@pytest.fixture(scope="session")
def base_url(live_server: str) -> str:
    return live_server


@pytest.fixture
def screenshot(page: Any) -> Callable[[str], Path]:
    """Save a full-page screenshot under test-artifacts/screenshots/<name>.png."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, target: Any = None) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        (target or page).screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def console(page: Page) -> Iterator[list[str]]:
    """Console errors and CSP reports seen during the test; none are allowed."""
    seen: list[str] = []

    def record(msg: ConsoleMessage) -> None:
        if msg.type == "error" or "Content Security Policy" in msg.text:
            seen.append(msg.text)

    page.on("console", record)
    page.on("pageerror", lambda exc: seen.append(str(exc)))
    yield seen
    assert seen == [], seen
