"""Browser fixtures and helpers shared by every browser test (defined here once).

Fixtures: `live_server` / `base_url` (the app served on loopback for
Playwright; the Chromium launch settings are in tests/conftest.py),
`corpus_server` (an app with a job worker, for the corpus page), `open_page`
(a fresh page at a named size and colour scheme), `screenshot` and `console`.
Helpers to import: `shot` (a screenshot by name), `watch_console`, `warmed`, `tokens` /
`token_ids` (the Bytes page's tokens), `in_viewport` and `tiktoken_oracle`.
Screenshots go to test-artifacts/screenshots/ (git-ignored) for a person to
look at.
"""

from __future__ import annotations

import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page
from tests.conftest import NAVIGATION_TIMEOUT_MS
from tests.jobhelpers import JobWorker
from tests.serving import serve_app

from webapp import PROJECT_ROOT, create_app
from webapp.infra.storage import default_sqlite_url

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"

#: The sizes the pages are checked at: a 1366x900 laptop and a 390x844 phone.
VIEWPORTS = {"laptop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


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


def watch_console(page: Page) -> list[str]:
    """A list that collects the page's console errors, CSP reports and uncaught exceptions."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" or "Content Security Policy" in m.text
            else None)
    page.on("pageerror", lambda exc: seen.append(str(exc)))
    return seen


@pytest.fixture
def console(page: Page) -> Iterator[list[str]]:
    """Console errors and CSP reports seen during the test; none are allowed."""
    seen = watch_console(page)
    yield seen
    assert seen == [], seen


@pytest.fixture
def open_page(browser: Browser, base_url: str) -> Iterator[Any]:
    """open_page(size, scheme, **context options) -> a fresh page in its own context, at
    VIEWPORTS[size] ("laptop" or "phone": touch and mobile) in "light" or "dark";
    console errors on any of them fail the test."""
    contexts: list[tuple[Any, list[str]]] = []

    def make(size: str = "laptop", scheme: str = "light", **extra: Any) -> Page:
        phone = size == "phone"
        context = browser.new_context(base_url=base_url, viewport=VIEWPORTS[size], color_scheme=scheme,
                                      is_mobile=phone, has_touch=phone, **extra)
        context.set_default_navigation_timeout(NAVIGATION_TIMEOUT_MS)
        page = context.new_page()
        contexts.append((context, watch_console(page)))
        return page

    yield make
    for context, seen in contexts:
        context.close()
        assert seen == [], seen


def shot(page: Page, name: str, full: bool = False) -> Path:
    """Save test-artifacts/screenshots/<name>.png: the viewport as a person sees it (full=True: the whole page)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=full)
    return path


@pytest.fixture(scope="module")
def corpus_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The app with its own database, queue and a job worker, for the tests of a module that train corpora."""
    folder = tmp_path_factory.mktemp("corpus-e2e")
    settings = {"DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}", "QUEUE_URL": f"sqlite:///{folder / 'q.sqlite3'}",
                "CORPUS_DIR": str(folder / "corpora")}
    with served_with_worker(settings, folder, "corpus-e2e") as url:
        yield url


@contextmanager
def served_with_worker(settings: dict[str, Any], folder: Path, name: str) -> Iterator[str]:
    """The app with `settings` served on loopback, and a job worker sharing its database and queue."""
    app = create_app({"TESTING": True, **settings})
    worker = JobWorker(settings, folder / "worker.log").start()
    try:
        with serve_app(app, name) as url:
            yield url
    finally:
        worker.kill()


def warmed(url: str, path: str) -> str:
    """`url`, once a GET of `path` has been answered, with no browser timeout running. The Counts page
    opens every preset in its first request, which a busy machine stretched past a page load's 30 s
    (a production server opens and warms them before it serves: gunicorn.conf.py)."""
    with urllib.request.urlopen(url + path, timeout=600) as answer:
        answer.read()
    return url


def tokens(page: Page) -> Locator:
    """The token spans of the Bytes or Characters page."""
    return page.locator("#tokens .tok")


def token_ids(page: Page) -> list[int]:
    """The ids of the page's token spans, in order."""
    return [int(x) for x in tokens(page).evaluate_all("els => els.map(e => e.dataset.tokenId)")]


def in_viewport(page: Page, selector: str) -> bool:
    """Whether the element is there and its whole box lies inside the window without scrolling."""
    return page.evaluate(
        """sel => { const e = document.querySelector(sel); if (!e) return false;
                    const r = e.getBoundingClientRect();
                    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0; }""",
        selector,
    )


def tiktoken_oracle(name: str) -> Any:
    """tiktoken itself over an OpenAI preset's published ranks: the answer the page must show."""
    import tiktoken

    from webapp.tokenizer import get_tokenizer
    from webapp.tokenizer.presets.openai import load_ranks

    ours = get_tokenizer(name)
    return tiktoken.Encoding(name=f"e2e-{name}", pat_str=ours.pattern, mergeable_ranks=load_ranks(name),
                             special_tokens=ours.special_tokens)
