"""Boundary explanations on the Bytes page, in real Chromium: hover, tap and the keyboard on a gap.

Typed merges where `w`+`e` takes `w` before `lo`+`w` can: the gap between `lo`
and `west`'s first token says so in the sentence the API gives. The outline
toggle marks every gap by its cause. Screenshots at 1366x900 and 390x844, light
and dark. Console errors fail the tests.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

from playwright.sync_api import Browser, Page, expect

MERGES = "108 111 256\n119 101 257\n257 115 258\n258 116 259\n256 119 260"
SENTENCE = "`lo`+`w` → `low` (rule 5) would have joined them, but `w`+`e` → `we` (rule 2) took `w` first."
SHOWN = SENTENCE.replace("`", "")  # the popover shows the quoted tokens as code


def _url(base_url: str) -> str:
    return f"{base_url}/bytes?" + urlencode({"text": "lowest", "merges": MERGES})


def test_hover_tap_and_keyboard_on_a_boundary(page: Page, console, screenshot, base_url: str):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(_url(base_url))
    gaps = page.locator("#tokens .gap")
    expect(gaps).to_have_count(1)
    gaps.first.hover()
    details = page.locator("#gap-details")
    expect(details.locator(".gap-sentence")).to_have_text(SHOWN)
    expect(details.locator(".gap-cause")).to_have_text("blocked")
    expect(details.locator(".gap-sentence code")).to_have_text(["lo", "w", "low", "w", "e", "we", "w"])
    page.locator("#explain-toggle").check()
    expect(gaps.first).to_have_class(re.compile(r"\bcause-blocked\b"))
    screenshot("explain-laptop-light")
    page.keyboard.press("Escape")
    expect(gaps.first).to_have_attribute("tabindex", "0")  # the keyboard: the first gap is a tab stop
    gaps.first.focus()
    expect(details.locator(".gap-sentence")).to_have_text(SHOWN)


def test_tap_on_a_phone_in_dark_mode(browser: Browser, base_url: str):
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, color_scheme="dark")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(_url(base_url))
    page.locator("#tokens .gap").first.tap()
    expect(page.locator("#gap-details .gap-sentence")).to_have_text(SHOWN)
    page.locator("#explain-toggle").check()
    expect(page.locator("#tokens .gap.cause-blocked")).to_have_count(1)
    from tests.e2e.conftest import SCREENSHOTS

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "explain-phone-dark.png"), full_page=True)
    context.close()
    assert errors == []


def test_arrow_keys_move_between_gaps(page: Page, console, base_url: str):
    page.goto(f"{base_url}/bytes?" + urlencode({"text": "aaa bb", "merges": "97 97 256"}))
    gaps = page.locator("#tokens .gap")
    expect(gaps).to_have_count(4)
    gaps.first.focus()
    expect(page.locator("#gap-details .gap-cause")).to_have_text("overlap")
    page.keyboard.press("ArrowRight")
    expect(gaps.nth(1)).to_be_focused()
    expect(page.locator("#gap-details .gap-cause")).to_have_text("no rule")
