"""A boundary's story in the Trace, in real Chromium: the popover's links open it, by click and by keyboard.

Typed merges where `w`+`e` takes `w` before `lo`+`w` can (list order), and presets (cl100k_base,
list order over tiktoken's ranks; llama3, the library's order): the popover's "Open the Trace at this
boundary" shows the server-rendered story, its rule links land on their places (the story's row of
the pair `would_join` names; the Trace pass where the taking rule fired). Screenshots of the popover
and the story at laptop size in dark mode and phone size in light mode (the existing ones are
laptop light and phone dark). Console errors fail the tests.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import SCREENSHOTS
from webapp.tokenizer import is_installed

MERGES = "108 111 256\n119 101 257\n257 115 258\n258 116 259\n256 119 260"


def _typed(base_url: str) -> str:
    return f"{base_url}/bytes?" + urlencode({"text": "lowest", "merges": MERGES})


def _story_shown(page: Page, index: int) -> None:
    expect(page.locator("#view-trace")).to_be_checked()
    expect(page.locator("#trace-story h3")).to_contain_text(f"The story of boundary {index}")
    expect(page.locator("#trace-story")).to_be_visible()


def test_click_opens_the_trace_with_the_story(page: Page, console, base_url: str):
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(_typed(base_url))
    page.locator("#tokens .gap").first.hover()
    page.locator("#gap-open-trace").click()
    _story_shown(page, 0)
    expect(page.locator("#trace-story")).to_be_focused()
    steps = page.locator("#story-steps tbody tr")
    expect(steps).to_have_count(5)
    expect(steps.nth(1)).to_have_class(re.compile(r"\bstory-candidate\b"))
    expect(page.locator("#trace-row-2")).to_have_class(re.compile(r"\bstory-step\b"))
    expect(page.locator("#trace-row-2 .story-note").first).to_contain_text("took w")
    # back to the tokens; the taker's link lands on the Trace pass where rule 2 fired
    page.locator("label[for=view-tokens]").click()
    page.locator("#tokens .gap").first.hover()
    page.locator('#gap-details [data-story-open="taker"]').click()
    _story_shown(page, 0)
    expect(page.locator("#trace-row-2")).to_be_focused()
    expect(page.locator("#trace-row-2 th")).to_have_text("pass 2")
    # and the would-join rule lands on the story's row of the pair it would have joined
    page.locator("label[for=view-tokens]").click()
    page.locator("#tokens .gap").first.hover()
    page.locator('#gap-details [data-story-open="would"]').click()
    expect(page.locator("#story-meeting-2")).to_be_focused()


def test_keyboard_opens_the_trace_with_the_story(page: Page, console, base_url: str):
    page.goto(_typed(base_url))
    gap = page.locator("#tokens .gap").first
    gap.focus()
    expect(page.locator("#gap-details .gap-cause")).to_have_text("blocked")
    page.keyboard.press("Enter")  # into the popover: its first rule link
    expect(page.locator('#gap-details [data-story-open="would"]')).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator('#gap-details [data-story-open="taker"]')).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.locator("#gap-open-trace")).to_be_focused()
    page.keyboard.press("Enter")
    _story_shown(page, 0)
    expect(page.locator("#trace-story")).to_be_focused()


def test_escape_leaves_the_popover_for_its_gap(page: Page, console, base_url: str):
    page.goto(_typed(base_url))
    gap = page.locator("#tokens .gap").first
    gap.focus()
    page.keyboard.press("Enter")
    expect(page.locator('#gap-details [data-story-open="would"]')).to_be_focused()
    page.keyboard.press("Escape")
    expect(gap).to_be_focused()
    expect(page.locator("#gap-details")).to_be_hidden()


def test_typing_forgets_the_story(page: Page, console, base_url: str):
    page.goto(f"{base_url}/bytes?" + urlencode({"text": "lowest", "merges": MERGES, "view": "trace", "story": "0"}))
    _story_shown(page, 0)
    page.locator("#f-text").press("End")
    page.locator("#f-text").press_sequentially(" low")
    expect(page.locator("#trace-story")).to_have_count(0)
    expect(page.locator("#story-field")).to_have_value("")


@pytest.mark.parametrize("name, text, boundary", [
    ("cl100k_base", "lowest distinctively", 1),
    ("llama3", " lowest distinctively", 1),
])
def test_a_preset_story_by_click_and_keyboard(page: Page, console, base_url: str, name: str, text: str, boundary: int):
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here")
    page.goto(f"{base_url}/bytes?" + urlencode({"text": text, "tokenizer": name}))
    gap = page.locator(f'#tokens .gap[data-boundary="{boundary}"]')
    gap.hover()
    expect(page.locator("#gap-details .gap-cause")).to_have_text(re.compile(r"blocked|overlap|no rule"))
    page.locator("#gap-open-trace").click()
    _story_shown(page, boundary)
    assert page.locator("#story-steps tbody tr").count() >= 1
    assert page.locator(".trace tr.story-step").count() >= 1
    # the keyboard, from the Tokens view again
    page.locator("label[for=view-tokens]").click()
    gap.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#gap-details button").first).to_be_focused()
    page.locator("#gap-open-trace").focus()
    page.keyboard.press("Enter")
    _story_shown(page, boundary)
    card = page.locator("#trace-story .story-card").first
    if card.count():
        expect(card).to_have_attribute("href", re.compile(rf"/vocab\?tokenizer={name}&token=\d+#card"))


def _shots(browser: Browser, base_url: str, name: str, **context_args):
    context = browser.new_context(**context_args)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{base_url}/bytes?" + urlencode({"text": "The lowest distinctively", "tokenizer": "cl100k_base"})
              if is_installed("cl100k_base") else _typed(base_url))
    gap = page.locator("#tokens .gap").nth(2 if is_installed("cl100k_base") else 0)
    if context_args.get("has_touch"):
        gap.tap()
    else:
        gap.hover()
    details = page.locator("#gap-details")
    expect(details.locator("#gap-open-trace")).to_be_visible()
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"explain-popover-{name}.png"), full_page=False)
    box = details.bounding_box()
    width = context_args["viewport"]["width"]
    height = context_args["viewport"]["height"]
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width  # never off-screen
    assert box["y"] >= 0 and box["y"] + box["height"] <= height
    details.locator("#gap-open-trace").click()
    expect(page.locator("#trace-story")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / f"explain-story-{name}.png"), full_page=True)
    # nothing of the story is wider than the screen
    overflow = page.evaluate("() => document.getElementById('trace-story').scrollWidth"
                             " - document.getElementById('trace-story').clientWidth")
    assert overflow <= 1
    context.close()
    assert errors == []


def test_screenshots_laptop_dark(browser: Browser, base_url: str):
    _shots(browser, base_url, "laptop-dark", viewport={"width": 1366, "height": 900}, color_scheme="dark")


def test_screenshots_phone_light(browser: Browser, base_url: str):
    _shots(browser, base_url, "phone-light", viewport={"width": 390, "height": 844}, has_touch=True,
           color_scheme="light")
