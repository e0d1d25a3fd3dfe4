"""Where the prompt ends, on the Bytes page in real Chromium (static/prompt.js).

"The quick brown fox jumps over the la" typed key by key with cl100k_base: the last token ` la` is
marked as one that text typed after it could change, the others are not; its popover names the
witness the API gives and links to the page with text + witness (the preset kept), and that page
shows other tokens; the note's healing count is the API's `healing.candidates`. Typed merges and
an opened tokenizer.json work the same way; special tokens recognized give other tokens than the
prompt end reads, which the note says quietly. Screenshots at 1280x800 (light) and 390x844 (dark);
console errors fail the tests.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import shot, token_ids, tokens

from webapp.tokenizer import is_installed

FOX = "The quick brown fox jumps over the la"
MERGES = "108 111 256\n119 101 257\n256 119 260"
#: The marks the token spans use for whitespace (webapp/web/common/viewmodels.py), as the popover shows a witness.
MARKS = {" ": "·", "\t": "→", "\n": "↵", "\r": "␍", "\u00a0": "⍽"}


def _needs(name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here")


def _shown(text: str) -> str:
    return "".join(MARKS.get(ch, ch) for ch in text)


def _api(page: Page, name: str, text: str) -> dict[str, Any]:
    r = page.request.post(f"/api/tokenizers/{name}/prompt", data={"text": text})
    assert r.ok, r.text()
    body: dict[str, Any] = r.json()
    return body


def _marks(page: Page) -> list[str]:
    """Per token span: "C" changeable, "U" undecided, "-" final."""
    return tokens(page).evaluate_all(
        "els => els.map(e => e.classList.contains('tok-changeable') ? 'C' : e.classList.contains('tok-undecided') ? 'U' : '-')")


def _watch_questions(page: Page) -> dict[str, int]:
    """How many prompt-end questions were asked, and the most in flight at once."""
    seen = {"sent": 0, "flight": 0, "most": 0}

    def sent(request: Any) -> None:
        if request.url.endswith("/fragments/prompt"):
            seen["sent"] += 1
            seen["flight"] += 1
            seen["most"] = max(seen["most"], seen["flight"])

    def done(request: Any) -> None:
        if request.url.endswith("/fragments/prompt"):
            seen["flight"] -= 1

    page.on("request", sent)
    page.on("requestfinished", done)
    page.on("requestfailed", done)  # (a question typing made stale is aborted)
    return seen


def test_typed_prompt_marks_its_changeable_tail_with_the_api_s_witness_and_count(page: Page, console):
    _needs("cl100k_base")
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto("/bytes?tokenizer=cl100k_base")
    questions = _watch_questions(page)
    text = page.locator("#f-text")
    text.fill("")
    text.press_sequentially(FOX, delay=25)
    note = page.locator("#prompt-end")
    expect(note).to_have_attribute("data-end", "changeable")
    expect(note).not_to_have_class("prompt-end is-pending")
    api = _api(page, "cl100k_base", FOX)
    assert token_ids(page) == api["ids"]
    n = len(api["ids"])
    assert api["stable"] == n - 1 and [u["index"] for u in api["unstable"]] == [n - 1]
    # the last token alone is marked; the others keep their normal look
    assert _marks(page) == ["-"] * (n - 1) + ["C"]
    assert questions["most"] == 1, questions  # typing never left two questions in flight
    assert questions["sent"] <= len(FOX), questions

    # the note: where the prompt ends, and the healing count the API gives
    expect(note.locator(".prompt-end-head")).to_have_text("Prompt ends mid-token: the last token ·la may still change.")
    candidates = api["healing"]["candidates"]
    expect(note.locator("[data-candidates]")).to_have_attribute("data-candidates", str(candidates))
    expect(note.locator("[data-candidates]")).to_have_text(f"{candidates:,}")
    expect(note.locator(".prompt-end-examples .chip")).to_have_text([_shown(ex["text"]) for ex in api["healing"]["examples"]])
    expect(note.locator(".prompt-end-legend")).to_contain_text("Dashed")

    # the popover of ` la`: its witness, and a link to the page with it typed
    witness = api["unstable"][0]["witness"]
    tokens(page).last.hover()
    details = page.locator("#token-details .details-prompt")
    expect(details.locator("code.witness")).to_have_text(_shown(witness))
    expect(details).to_contain_text("after the text and this token changes.")
    shot(page, "prompt-end-laptop-light")
    link = details.locator("a")
    query = parse_qs(urlsplit(link.get_attribute("href") or "").query, keep_blank_values=True)
    assert query["text"] == [FOX + witness]
    assert query["tokenizer"] == ["cl100k_base"] and query["pretokenize"] == ["cl100k"]

    # following it: text + witness under the same preset, and the token is another one now
    link.click()
    expect(page.locator("#f-text")).to_have_value(FOX + witness)
    expect(page.locator('button[name="tokenizer_preset"][value="cl100k_base"]')).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#prompt-end")).to_have_attribute("data-end", "changeable")
    assert token_ids(page)[: n] != api["ids"]


def test_phone_in_dark_mode(open_page):
    _needs("cl100k_base")
    page = open_page("phone", "dark")
    page.goto("/bytes?" + urlencode({"text": FOX, "tokenizer": "cl100k_base"}))
    note = page.locator("#prompt-end")
    expect(note).to_have_attribute("data-end", "changeable")
    note.scroll_into_view_if_needed()
    shot(page, "prompt-end-phone-dark")
    # nothing wider than the screen
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    tokens(page).last.tap()
    details = page.locator("#token-details")
    expect(details.locator(".details-prompt code.witness")).to_have_text(_shown(_api(page, "cl100k_base", FOX)["unstable"][0]["witness"]))
    box = details.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390
    shot(page, "prompt-end-phone-dark-popover")


def test_typed_merges_and_a_quiet_note_when_the_tokens_differ(page: Page, console):
    page.goto("/bytes?" + urlencode({"text": "lowest lo", "merges": MERGES, "pretokenize": "gpt2"}))
    note = page.locator("#prompt-end")
    expect(note).to_have_attribute("data-end", "changeable")
    assert _marks(page) == ["-"] * 5 + ["C"]  # `lo` may yet become `low`
    expect(note.locator("[data-candidates]")).to_have_attribute("data-candidates", "2")
    tokens(page).last.hover()
    href = page.locator("#token-details .details-prompt a").get_attribute("href") or ""
    query = parse_qs(urlsplit(href).query, keep_blank_values=True)
    assert query["text"] == ["lowest low"] and query["merges"] == [MERGES] and query["pretokenize"] == ["gpt2"]

    # special tokens recognized: the prompt end reads them as text, so it says so instead of marking
    if not is_installed("cl100k_base"):
        return
    page.goto("/bytes?" + urlencode({"text": "hi <|endoftext|> there", "tokenizer": "cl100k_base", "special": "all"}))
    expect(note.locator(".prompt-end-error")).to_contain_text("special tokens as plain text")
    assert "C" not in _marks(page)
    page.locator("#f-text").focus()
    page.keyboard.press("Control+End")
    page.keyboard.type(" th", delay=25)  # typing goes on, nothing typed is lost
    expect(page.locator("#f-text")).to_have_value("hi <|endoftext|> there th")
    expect(note.locator(".prompt-end-error")).to_be_visible()


def test_an_opened_file(page: Page, console, tmp_path):
    """A tokenizer.json opened on the page: the marks and the count are its API's answer (the file's id
    travels with the form; the chosen file itself is never sent with the question)."""
    from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer

    path = tmp_path / "tokenizer.json"
    path.write_text(byte_level_tokenizer(SAMPLE_CORPUS).to_str(), encoding="utf-8")
    page.goto("/bytes")
    page.fill("#f-text", "the lowest new")
    page.locator(".open-tokenizer summary").click()
    bodies: list[str] = []
    page.on("request", lambda r: bodies.append(r.post_data or "") if r.url.endswith("/fragments/prompt") else None)
    page.set_input_files("#f-tokenizer-file", str(path))
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("tokenizer.json")
    file_id = page.locator('#tool-form input[name="tokenizer"]').input_value()
    api = _api(page, file_id, "the lowest new")
    assert api["end"] == "changeable"  # `new` may yet be `newer`
    note = page.locator("#prompt-end")
    expect(note).to_have_attribute("data-end", api["end"])
    expect(note.locator("[data-candidates]")).to_have_attribute("data-candidates", str(api["healing"]["candidates"]))
    assert token_ids(page) == api["ids"]
    marks = ["-"] * api["stable"] + ["U" if i in api["undecided"] else "C" for i in range(api["stable"], len(api["ids"]))]
    assert _marks(page) == marks
    assert bodies and all("tokenizer_file" not in body for body in bodies)
