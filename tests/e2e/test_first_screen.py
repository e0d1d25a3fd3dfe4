"""The first screen a newcomer meets (issue "The first screen"), one test per point.

Each test runs in real Chromium at the sizes the issue was found on (a
1366x900 laptop and a 390x844 phone, light and dark where it matters) and
saves screenshots of the states it checks under test-artifacts/screenshots/
(`first-<point>-<state>.png`) for a person to look at. Console errors and CSP
violations fail the tests (the `console` fixture or `_watch`).
"""

from __future__ import annotations

import re
import statistics
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect

from webapp import PROJECT_ROOT

SCREENSHOTS = PROJECT_ROOT / "test-artifacts" / "screenshots"

LAPTOP = {"width": 1366, "height": 900}
PHONE = {"width": 390, "height": 844}
VIEWPORTS = {"laptop": LAPTOP, "phone": PHONE}


def _watch(page: Page) -> list[str]:
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" or "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda exc: seen.append(str(exc)))
    return seen


@pytest.fixture
def open_page(browser: Browser, base_url: str) -> Iterator[Any]:
    """open_page(size, scheme) -> a fresh page in its own context (console errors fail the test)."""
    contexts: list[tuple[Any, list[str]]] = []

    def make(size: str = "laptop", scheme: str = "light", **extra: Any) -> Page:
        phone = size == "phone"
        context = browser.new_context(base_url=base_url, viewport=VIEWPORTS[size], color_scheme=scheme,
                                      is_mobile=phone, has_touch=phone, **extra)
        page = context.new_page()
        contexts.append((context, _watch(page)))
        return page

    yield make
    for context, seen in contexts:
        context.close()
        assert seen == [], seen


def shot(page: Page, name: str, full: bool = False) -> None:
    """The viewport as a person sees it (full=True: the whole page)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"first-{name}.png"), full_page=full)


def tokens(page: Page):
    return page.locator("#tokens .tok")


def in_viewport(page: Page, selector: str) -> bool:
    """Whether the element's whole box lies inside the window without scrolling."""
    return page.evaluate(
        """sel => { const r = document.querySelector(sel).getBoundingClientRect();
                    return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth && r.height > 0; }""",
        selector,
    )


# --- 1. the output above the fold ---------------------------------------------------


@pytest.mark.parametrize("size", ["laptop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_1_typing_shows_tokens_and_count_without_scrolling(open_page, size: str, scheme: str):
    page = open_page(size, scheme)
    page.goto("/bytes")
    page.fill("#f-text", "lower lowest")
    expect(tokens(page)).to_have_count(8)
    assert page.evaluate("scrollY") == 0
    assert in_viewport(page, "#tokens .tok"), "the first token is below the fold"
    assert in_viewport(page, '[data-stat="tokens"]'), "the token count is below the fold"
    assert in_viewport(page, "#f-text")
    if size == "laptop":
        # side by side: the tokens start to the right of the text box, level with it
        text_box = page.locator("#f-text").bounding_box()
        first = tokens(page).first.bounding_box()
        assert first["x"] > text_box["x"] + text_box["width"]
        assert first["y"] < 500
    shot(page, f"1-above-the-fold-{size}-{scheme}")


def test_1_secondary_panels_collapse_and_keep_their_state(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    merges = page.locator("#panel-merges")
    expect(merges).to_have_attribute("open", "")
    page.locator("#panel-merges > summary").click()
    expect(page.locator("#f-merges")).to_be_hidden()
    # a live update does not reopen it, and neither does a reload
    page.fill("#f-text", "low low")
    expect(tokens(page)).to_have_count(3)
    expect(page.locator("#f-merges")).to_be_hidden()
    page.reload()
    expect(page.locator("#f-text")).to_have_value("low low")
    expect(page.locator("#f-merges")).to_be_hidden()
    shot(page, "1-merges-collapsed")
    page.locator("#panel-merges > summary").click()
    expect(page.locator("#f-merges")).to_be_visible()
