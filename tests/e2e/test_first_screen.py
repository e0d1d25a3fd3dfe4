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


# --- 2. landing ------------------------------------------------------------------------


def _cl100k_oracle():
    """tiktoken's own cl100k_base constructor fed our checked ranks (no download)."""
    tiktoken = pytest.importorskip("tiktoken")
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    from webapp.tokenizer import load_ranks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda url, expected_hash=None: dict(load_ranks("cl100k_base")))
        definition = openai_public.ENCODING_CONSTRUCTORS["cl100k_base"]()
    return tiktoken.Encoding(name="oracle-cl100k", pat_str=definition["pat_str"],
                             mergeable_ranks=definition["mergeable_ranks"], special_tokens=definition["special_tokens"])


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_2_landing_opens_a_working_playground_on_a_real_tokenizer(open_page, size: str):
    oracle = _cl100k_oracle()
    page = open_page(size)
    page.goto("/")
    expect(page.locator('button.preset-button[value="cl100k_base"]')).to_have_attribute("aria-pressed", "true")
    text = page.locator("#f-text").input_value()
    assert text  # an example sentence is there
    ids = [int(x) for x in tokens(page).evaluate_all("els => els.map(e => e.dataset.tokenId)")]
    assert ids == oracle.encode_ordinary(text)
    assert in_viewport(page, "#tokens .tok")
    shot(page, f"2-landing-{size}")
    # typing keeps using the preset
    page.fill("#f-text", "Hello world")
    expect(tokens(page)).to_have_count(len(oracle.encode_ordinary("Hello world")))
    # the seed examples are one click away
    page.goto("/")
    page.locator('[data-seed="chars"]').click()
    expect(page).to_have_url(re.compile(r"/chars\?example=lower$"))
    expect(tokens(page)).to_have_count(1)
    expect(tokens(page).first).to_have_attribute("data-token-id", "8")


# --- 3. one active tokenizer, no stale state ------------------------------------------------


def test_3_an_opened_file_owns_encode_decode_and_fill_decode(open_page, tmp_path):
    from hf_samples import SAMPLE_CORPUS, byte_level_tokenizer

    tok = byte_level_tokenizer(SAMPLE_CORPUS)
    path = tmp_path / "tokenizer.json"
    path.write_text(tok.to_str(), encoding="utf-8")
    text = "Hello there! the lowest newer"
    page = open_page("laptop")
    page.goto("/bytes")  # the seed example: typed merges, a typed decode vocab
    page.fill("#f-text", text)
    page.locator("#panel-file > summary").click()
    page.set_input_files("#f-tokenizer-file", str(path))
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_be_visible()
    expected = tok.encode(text).ids
    expect(tokens(page)).to_have_count(len(expected))
    # the typed merges and vocab look and act inactive
    for name in ("merges", "vocab"):
        box = page.locator(f"#f-{name}")
        expect(box).to_have_attribute("readonly", "")
        expect(page.locator(f"#inactive-{name}")).to_be_visible()
        assert float(box.evaluate("e => getComputedStyle(e).opacity")) < 1
    # "Decode these ids" is still there and decodes with the file's own vocab
    # (ids below 256 included: this file numbers bytes its own way)
    page.locator("#fill-decode").click()
    expect(page.locator("#f-ids")).to_have_value(" ".join(map(str, expected)))
    assert any(i < 256 for i in expected)
    expect(page.locator("#decoded-text")).to_have_text(text.replace(" ", "·"))
    expect(page.locator("#error-ids")).to_be_empty()
    shot(page, "3-file-owns-decode", full=True)
    # closing the file makes the typed fields active again
    page.locator(".open-tokenizer-close").click()
    expect(page.locator("#f-merges")).not_to_have_attribute("readonly", "")
    expect(page.locator("#inactive-merges")).to_be_hidden()


def test_3_characters_download_ids_uses_the_opened_file(open_page):
    page = open_page("laptop")
    page.goto("/chars")
    exported = page.request.post("/files/export/chars?format=seed", form={
        "text": "lower", "merges": "l o\ne r\nlo w\nlow er", "vocab": "l 0\no 1\nw 2\ne 3\nr 4\nlo 5\ner 6\nlow 7\nlower 8",
    })
    assert exported.ok
    page.fill("#f-vocab", '{"x": 0}')  # a typed vocab that knows none of the file's tokens
    page.locator("#panel-file > summary").click()
    page.fill("#f-tokenizer-paste", exported.text())
    page.locator(".open-tokenizer-button").click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_be_visible()
    # the typed vocab stays as it was, read-only: the file's vocab is what counts
    expect(page.locator("#f-vocab")).to_have_attribute("readonly", "")
    page.fill("#f-text", "lowerlol")
    expect(page.locator("#tokens .tok")).to_have_count(3)  # lower, lo, l
    page.locator("label[for=view-ids]").click()
    shown = page.locator("#ids-output").input_value()
    assert shown
    with page.expect_download() as info:
        page.locator("[data-download]").click()
    downloaded = open(info.value.path(), encoding="utf-8").read().strip()
    assert downloaded == shown
    shot(page, "3-chars-download-ids")
