"""The playground in real Chromium: typing, hovering, errors, decoding, training, phones, dark mode.

Every test saves a screenshot under test-artifacts/screenshots/ for a person
to look at. Console messages are collected so a Content-Security-Policy
violation (an inline script or style slipping in) fails the test.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from tests.e2e.conftest import tokens

SEED_CHAR_MERGES = '[["l", "o"], ["e", "r"], ["lo", "w"], ["low", "er"]]'


def test_type_text_and_see_spans_appear(page: Page, console, screenshot):
    page.goto("/bytes")
    expect(tokens(page)).to_have_count(1)
    page.fill("#f-text", "low lower")
    # 108 111 256 / 256 119 257 -> "low", " ", "low", "e", "r"
    expect(tokens(page)).to_have_count(5)
    expect(tokens(page).nth(2)).to_have_attribute("data-token-id", "257")
    expect(page.locator('[data-stat="tokens"] dd')).to_have_text("5")
    expect(page.locator('[data-stat="chars"] dd')).to_have_text("9")
    expect(page.locator("#roundtrip")).to_have_attribute("data-ok", "true")
    # The text box is untouched by the live update (it is not swapped).
    expect(page.locator("#f-text")).to_have_value("low lower")
    screenshot("bytes-typed")


@pytest.mark.parametrize("script", ["vendor/htmx.min.js", "static/prompt.js"])
def test_text_typed_before_the_scripts_ran_is_encoded(page: Page, console, screenshot, script: str):
    # A deferred script held back: the page is parsed and shown, the text typed, and only
    # then does DOMContentLoaded come. Held at htmx, no script has run yet; held at
    # prompt.js, app.js has run (the document is "interactive") but htmx has not set the
    # form up. Either way the typed text's input event reached no htmx listener.
    held: list = []
    page.route(f"**/{script}", lambda route: held.append(route))
    page.goto("/bytes", wait_until="commit")
    page.wait_for_selector("#f-text")
    if script == "static/prompt.js":
        # (a function, not an expression: the page's CSP forbids the eval that polling an expression uses)
        page.wait_for_function("() => typeof window.bpeStateLink === 'function'")  # app.js has run
    page.fill("#f-text", "low lower")
    page.wait_for_timeout(300)
    assert len(held) == 1
    expect(tokens(page)).to_have_count(1)  # the server's answer for its own text
    held[0].continue_()
    expect(tokens(page)).to_have_count(5)
    expect(page.locator("#f-text")).to_have_value("low lower")


def test_the_trace_tab_picked_before_the_scripts_ran_is_drawn(page: Page, console):
    # The Trace is drawn by the server when its tab is picked. Picked while htmx was held back,
    # the change reached no listener: the tab showed "computed when this view is chosen" for
    # good (a browser test on a busy machine clicked it that early).
    held: list = []
    page.route("**/vendor/htmx.min.js", lambda route: held.append(route))
    page.goto("/bytes?text=low+lower", wait_until="commit")
    page.wait_for_selector("label[for=view-trace]")
    page.locator("label[for=view-trace]").click()
    page.wait_for_timeout(300)
    assert len(held) == 1
    expect(page.locator(".view-trace .trace-pending")).to_be_visible()
    held[0].continue_()
    expect(page.locator(".view-trace table.trace")).to_be_visible()
    expect(page.locator(".view-trace .trace-pending")).to_have_count(0)


def test_hover_and_focus_a_token_to_read_its_details(page: Page, console, screenshot):
    page.goto("/bytes")
    page.fill("#f-text", "low low")
    expect(tokens(page)).to_have_count(3)
    first = tokens(page).first
    first.hover()
    details = page.locator("#token-details")
    expect(details.locator('[data-field="id"]')).to_have_text("257")
    expect(details.locator('[data-field="text"]')).to_have_text("low")
    expect(details.locator('[data-field="hex"]')).to_have_text("6C 6F 77")
    expect(details.locator('[data-field="pos"]')).to_have_text("token 1 · bytes 0–3")
    expect(details.locator('[data-field="tree"]')).to_contain_text('├ 256  "lo"  rule 1')
    screenshot("bytes-hover")
    # Keyboard: focus the first token, arrow right to the next one.
    first.focus()
    page.keyboard.press("ArrowRight")
    expect(details.locator('[data-field="pos"]')).to_have_text("token 2 · bytes 3–4")
    expect(details.locator('[data-field="text"]')).to_have_text("·")


def test_break_the_merges_json_and_see_the_inline_error_with_the_text_kept(page: Page, console, screenshot):
    page.goto("/bytes")
    broken = "[[108, 111, 256],\n [256, 119 257]]"
    page.fill("#f-merges", broken)
    error = page.locator("#error-merges")
    expect(error).to_contain_text("merges: invalid JSON at line 2, column 12")
    expect(page.locator("#f-merges")).to_have_value(broken)
    expect(page.locator("#f-merges")).to_be_focused()
    expect(page.locator("#results")).to_contain_text("Fix the input marked above")
    screenshot("bytes-error")
    # Fixing it clears the message.
    page.fill("#f-merges", "108 111 256\n256 119 257")
    expect(error).to_be_empty()
    expect(tokens(page)).to_have_count(1)


def test_decode_ids(page: Page, console, screenshot):
    page.goto("/bytes?example=decode")
    expect(page.locator("#decoded-text")).to_have_text("low")
    page.fill("#f-ids", "256 119 32 257")
    expect(page.locator("#decoded-text")).to_have_text("low·low")  # the space is shown as a mark
    page.fill("#f-ids", "257 999")
    expect(page.locator("#error-ids")).to_contain_text("id 999 at position 2")
    page.fill("#f-ids", "104 195")
    expect(page.locator("#error-ids")).to_contain_text("byte offset 1")
    screenshot("bytes-decode-error")


def test_train_and_carry_the_merges_into_the_characters_page(page: Page, console, screenshot):
    page.goto("/train")
    page.fill("#f-words", "low lower lowest newer wider")
    page.fill("#f-num_merges", "4")
    expect(page.locator("#merge-list li")).to_have_count(4)
    expect(page.locator(".chart svg rect.bar")).to_have_count(4)
    screenshot("train")
    with page.expect_navigation():
        page.click("#carry-to-chars")
    expect(page).to_have_url(re.compile(r"/chars\?text="))  # a GET link: the URL holds the state
    merges = page.locator("#f-merges").input_value()
    assert merges.splitlines()[0] == "e r"  # (e, r) is the most frequent pair
    assert '"er"' in page.locator("#f-vocab").input_value()
    expect(page.locator("#error-vocab")).to_be_empty()
    expect(tokens(page).first).to_have_attribute("data-token-id", re.compile(r"^\d+$"))
    assert tokens(page).count() > 0
    screenshot("chars-carried")


def test_markup_in_a_token_renders_as_text(page: Page, console, screenshot):
    page.goto("/bytes?example=markup")
    expect(tokens(page).first).to_have_text("<b>")
    assert page.locator("#tokens b").count() == 0
    page.fill("#f-text", "<img src=x><script>window.pwned=1</script>")
    expect(page.locator("#tokens")).to_contain_text("<script>")
    assert page.locator("#tokens img, #tokens script").count() == 0
    assert page.evaluate("window.pwned") is None
    screenshot("bytes-markup")


def test_view_tabs_show_ids_and_the_trace(page: Page, console, screenshot):
    page.goto("/bytes")
    page.click("label[for=view-trace]")
    expect(page.locator(".view-trace table.trace")).to_be_visible()
    expect(page.locator(".view-trace tbody tr")).to_have_count(3)  # start, pass 1, pass 2
    expect(page.locator(".view-trace")).to_contain_text("rule 2: 256 119 → 257")
    expect(page.locator("#tokens")).to_be_hidden()
    # The chosen view survives a live update (it is a form field).
    page.fill("#f-text", "lowlow")
    expect(page.locator(".view-trace tbody tr")).to_have_count(3)
    expect(page.locator(".view-trace")).to_be_visible()
    screenshot("bytes-trace")
    page.click("label[for=view-ids]")
    expect(page.locator("#ids-output")).to_have_value("257 257")


def test_characters_page_reports_a_missing_vocab_entry(page: Page, console, screenshot):
    page.goto("/chars?example=missing")
    expect(page.locator("#error-vocab")).to_contain_text('"s"')
    expect(page.locator("#tokens .tok-missing")).to_have_count(2)
    screenshot("chars-missing")
    page.goto("/chars")
    expect(tokens(page)).to_have_count(1)
    expect(tokens(page).first).to_have_attribute("data-token-id", "8")
    screenshot("chars")


def test_split_characters_are_grouped_with_hex(page: Page, console, screenshot):
    page.goto("/bytes?example=split-char")
    expect(page.locator("#tokens .char-group")).to_have_count(2)
    expect(page.locator("#tokens .hex").first).to_have_text("C3")
    expect(page.locator("#decoded-text")).to_have_text("café·crème")
    screenshot("bytes-split-char")


def test_home_page(page: Page, console, screenshot):
    # the landing page is a working playground (tests/e2e/test_first_screen.py checks its ids)
    page.goto("/")
    expect(tokens(page).first).to_be_visible()
    screenshot("home")
    page.locator(".nav a", has_text="Characters").click()
    expect(page).to_have_url(re.compile(r"/chars$"))


@pytest.mark.parametrize("path", ["/", "/bytes", "/chars", "/train?example=corpus", "/bytes?example=split-char"])
def test_pages_work_at_phone_width(browser: Browser, base_url: str, path: str, screenshot):
    context = browser.new_context(base_url=base_url, viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        page.goto(path)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, f"{path} scrolls sideways by {overflow}px at phone width"
        if path == "/bytes":
            page.fill("#f-text", "lowest")
            expect(page.locator("#tokens .tok")).to_have_count(4)
            page.locator("#tokens .tok").first.tap()
            expect(page.locator('#token-details [data-field="id"]')).to_have_text("257")
        name = "phone-" + (path.strip("/").split("?")[0] or "home") + ("-split" if "split" in path else "")
        screenshot(name, page)
    finally:
        context.close()


@pytest.mark.parametrize("path", ["/bytes?example=split-char", "/train?example=corpus", "/chars"])
def test_dark_mode(browser: Browser, base_url: str, path: str, screenshot):
    context = browser.new_context(base_url=base_url, color_scheme="dark", viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        page.goto(path)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(18, 20, 27)"
        name = "dark-" + path.strip("/").split("?")[0]
        screenshot(name, page)
    finally:
        context.close()


def test_forms_work_with_javascript_off(browser: Browser, base_url: str, screenshot):
    context = browser.new_context(base_url=base_url, java_script_enabled=False)
    page = context.new_page()
    try:
        page.goto("/bytes")
        page.fill("#f-text", "aaa")
        page.fill("#f-merges", "97 97 256")
        with page.expect_navigation():  # a real form post: the whole page comes back
            page.click("button[value=encode]")
        expect(page).to_have_url(re.compile(r"/bytes$"))
        ids = page.locator("#tokens .tok").evaluate_all("els => els.map(e => e.dataset.tokenId)")
        assert ids == ["256", "97"]
        expect(page.locator("#f-text")).to_have_value("aaa")
        page.fill("#f-merges", "97 x")
        with page.expect_navigation():
            page.click("button[value=encode]")
        expect(page.locator("#error-merges")).to_contain_text("line 1")
        expect(page.locator("#f-merges")).to_have_value("97 x")
        screenshot("nojs-bytes-error", page)
    finally:
        context.close()


def test_pretokenize_select_shows_piece_boundaries(page: Page, console, screenshot):
    page.goto("/bytes")
    page.fill("#f-text", "low lower, lowest!")
    expect(tokens(page)).to_have_count(12)  # low·low e r , · low e s t !
    page.select_option("#f-pretokenize", "gpt2")
    # GPT-2's pattern: "low" " lower" "," " lowest" "!"; the space joins its word's piece
    expect(page.locator(".pretokens-note")).to_contain_text("5 pre-tokens;")
    expect(page.locator("#tokens .pretoken-sep")).to_have_count(4)
    screenshot("bytes-pretokenized")


def test_copy_and_download_all_ids(page: Page, console, screenshot):
    page.goto("/bytes?example=aaa&view=ids")
    expect(page.locator("#ids-output")).to_have_value("256 97")
    page.click("[data-copy-from=ids-output]")
    expect(page.locator(".ids-actions .copied")).to_be_visible()
    with page.expect_download() as info:
        page.click("[data-download]")
    download = info.value
    assert download.suggested_filename == "bytes-ids.txt"
    assert open(download.path(), encoding="utf-8").read() == "256 97\n"
    expect(page.locator("#f-text")).to_have_value("aaa")  # the page stays as it was
    screenshot("bytes-ids")


def test_add_the_missing_tokens_to_the_vocab(page: Page, console, screenshot):
    page.goto("/chars")
    page.fill("#f-text", "lowest")
    expect(page.locator("#error-vocab")).to_contain_text('"s"')
    page.click("#add-missing")
    expect(page.locator("#error-vocab")).to_be_empty()
    expect(page.locator("#f-vocab")).to_have_value(re.compile(r'"s": 9, "t": 10\}$'))
    ids = tokens(page).evaluate_all("els => els.map(e => e.dataset.tokenId)")
    assert ids == ["7", "3", "9", "10"]
    # Typing goes on with the new vocab.
    page.fill("#f-text", "lowest tower")
    expect(page.locator("#error-vocab")).to_contain_text('" "')
    screenshot("chars-add-missing")


def test_decode_these_ids_round_trips_in_the_panel(page: Page, console, screenshot):
    page.goto("/bytes")
    page.fill("#f-text", "low, lower")
    expect(tokens(page)).to_have_count(6)  # low , · low e r
    page.click("#fill-decode")
    expect(page.locator("#f-ids")).to_have_value("257 44 32 257 101 114")
    expect(page.locator("#f-vocab")).to_have_value('{"257": [108, 111, 119]}')
    expect(page.locator("#decoded-text")).to_have_text("low,·lower")
    expect(page.locator("#f-text")).to_have_value("low, lower")
    screenshot("bytes-fill-decode")
