"""The Vocabulary page in real Chromium: hover, tap and keyboard on the token cards, the page
without JavaScript, the Bytes popover's link to a card, and screenshots (laptop 1366x900 and
phone 390x844, light and dark) in test-artifacts/screenshots/. Console errors fail the tests.

The server answers the unreachable tokens inline (JOB_VOCAB_TOKENS high: no job worker here).
"""

from __future__ import annotations

import re
from typing import Any, Iterator
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import VIEWPORTS, shot
from tests.serving import serve_app
from webapp import create_app
from webapp.infra.storage import default_sqlite_url
from webapp.tokenizer import get_encoding, is_installed

pytestmark = pytest.mark.skipif(not is_installed("r50k_base"), reason="the r50k_base preset is not installed")
REFRAIN = get_encoding("r50k_base").encode(" refrain") if is_installed("r50k_base") else []


@pytest.fixture(scope="module")
def vocab_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path_factory.mktemp("vocab-e2e")),
                      "RATE_LIMIT_WRITES": "", "JOB_VOCAB_TOKENS": 10**9})
    with serve_app(app, "vocab-e2e-server") as url:
        yield url


def card_url(server: str, token: int, **extra: str) -> str:
    query = "&".join(f"{k}={v}" for k, v in {"tokenizer": "r50k_base", "q": "refrain", "token": str(token), **extra}.items())
    return f"{server}/vocab?{query}"


def test_hover_and_keyboard_on_a_token_card(page: Page, console: list[str], vocab_server: str) -> None:
    page.set_viewport_size(VIEWPORTS["laptop"])
    [token] = REFRAIN
    page.goto(card_url(vocab_server, token))
    card = page.locator("#card")
    expect(card.locator('[data-fact="id"]')).to_have_text(str(token))
    expect(card.locator('[data-fact="status"] .badge')).to_have_text("reachable")
    parents = card.locator('[data-fact="parents"] .vchip')
    expect(parents).to_have_count(2)
    # hover: the preview names the token under the pointer
    first_parent = parents.first
    first_parent.hover()
    peek = page.locator("#vocab-peek")
    expect(peek).to_be_visible()
    expect(peek).to_contain_text(f"token {first_parent.get_attribute('data-id')}")
    # keyboard: focus a tree node, arrows move along the tree, Enter opens that node's card
    tree_chips = card.locator(".vtree .vchip")
    tree_chips.first.focus()
    expect(peek).to_contain_text(f"token {token}")
    page.keyboard.press("ArrowDown")
    second = tree_chips.nth(1)
    expect(second).to_be_focused()
    target = second.get_attribute("data-id")
    expect(peek).to_contain_text(f"token {target}")
    page.keyboard.press("Escape")
    expect(peek).to_be_hidden()
    page.keyboard.press("Enter")
    page.wait_for_url(re.compile(rf"token={target}\b"))
    expect(page.locator('#card [data-fact="id"]')).to_have_text(str(target))
    expect(page.locator("#card")).to_be_focused()  # a keyboard user lands on the card


def test_tap_shows_the_preview_then_opens_the_card(browser: Browser, vocab_server: str) -> None:
    context = browser.new_context(viewport=VIEWPORTS["phone"], has_touch=True, is_mobile=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    [token] = REFRAIN
    page.goto(card_url(vocab_server, token))
    chip = page.locator('#card [data-fact="parents"] .vchip').last
    target = chip.get_attribute("data-id")
    chip.tap()
    expect(page.locator("#vocab-peek")).to_contain_text(f"token {target}")
    assert parse_qs(urlparse(page.url).query)["token"] == [str(token)]  # the first tap only previews
    chip.tap()
    page.wait_for_url(re.compile(rf"token={target}\b"))
    expect(page.locator('#card [data-fact="id"]')).to_have_text(str(target))
    context.close()
    assert errors == []


def test_the_page_works_without_javascript(browser: Browser, vocab_server: str) -> None:
    context = browser.new_context(java_script_enabled=False, viewport=VIEWPORTS["laptop"])
    page = context.new_page()
    page.goto(f"{vocab_server}/vocab?tokenizer=r50k_base")
    page.fill("#f-q", "refrain")
    page.locator("#vocab-form button[type=submit]").click()
    expect(page.locator("#list-count")).to_contain_text("contain “refrain”")
    page.locator(".vocab-table .vchip").first.click()
    expect(page.locator('#card [data-fact="id"]')).to_have_text(page.locator(".vocab-table td.num").first.inner_text())
    # a bad search keeps what was typed and says why beside the field
    page.fill("#f-q", "x" * 300)
    page.locator("#vocab-form button[type=submit]").click()
    expect(page.locator("#error-q")).to_contain_text("over the limit of 256 bytes")
    expect(page.locator("#f-q")).to_have_value("x" * 300)
    context.close()


def test_the_bytes_popover_links_to_the_card_and_back(page: Page, console: list[str], screenshot: Any,
                                                      vocab_server: str) -> None:
    page.set_viewport_size(VIEWPORTS["laptop"])
    text = "I refrain from it"
    page.goto(f"{vocab_server}/bytes?tokenizer=r50k_base&text={text.replace(' ', '+')}")
    tok = page.locator("#tokens .tok").nth(1)
    tok.hover()
    link = page.locator("#token-details [data-vocab-link] a")
    expect(link).to_be_visible()
    screenshot("vocab-bytes-popover-wide-light")
    link.click()
    [token] = REFRAIN
    page.wait_for_url(re.compile(rf"/vocab\?.*token={token}\b"))
    expect(page.locator('#card [data-fact="in-text"]')).to_contain_text("use it 1 time")
    page.locator('#card [data-fact="in-text"] a').click()
    page.wait_for_url(re.compile(r"/bytes\?"))
    expect(page.locator("#f-text")).to_have_value(text)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_screenshots(browser: Browser, vocab_server: str, size: str, scheme: str) -> None:
    context = browser.new_context(viewport=VIEWPORTS[size], color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    [token] = REFRAIN
    page.goto(card_url(vocab_server, token, text="I+refrain+from+refraining"))
    expect(page.locator("#unreachable")).to_be_visible()
    page.locator('#card [data-fact="parents"] .vchip').first.hover()
    shot(page, f"vocab-{size}-{scheme}")
    shot(page, f"vocab-{size}-{scheme}-full", full=True)
    context.close()
