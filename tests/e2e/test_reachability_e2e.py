"""A token card's verdict in real Chromium: o200k_base's b" I'" is reachable only inside other text;
its witness link opens Bytes with the witness as the text and that token outlined; a special token's
card gives its reason. The whole vocabulary's answer is a job here (JOB_VOCAB_TOKENS low, no worker):
the cards never wait for it. Console errors fail the tests."""

from __future__ import annotations

import re
from typing import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.serving import serve_app
from webapp import create_app
from webapp.infra.storage import default_sqlite_url
from webapp.tokenizer import is_installed

pytestmark = pytest.mark.skipif(not is_installed("o200k_base"), reason="the o200k_base preset is not installed")


@pytest.fixture(scope="module")
def reach_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("reach-e2e")
    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(folder),
                      "QUEUE_URL": f"sqlite:///{folder / 'queue.sqlite3'}",
                      "RATE_LIMIT_WRITES": "", "JOB_VOCAB_TOKENS": 10})
    with serve_app(app, "reach-e2e-server") as url:
        yield url


def test_the_witness_link_opens_bytes_with_the_token_outlined(page: Page, console: list[str], reach_server: str) -> None:
    page.goto(f"{reach_server}/vocab?tokenizer=o200k_base&token=3413")
    status = page.locator('#card [data-fact="status"]')
    expect(status).to_have_attribute("data-status", "reachable")
    expect(status).to_contain_text("only inside other text")
    witness = status.locator('[data-fact="witness"]').text_content() or ""
    assert " I'" in witness and witness != " I'"
    status.locator('[data-fact="witness-link"]').click()
    page.wait_for_url(re.compile(r"/bytes\?.*mark=3413"))
    expect(page.locator("#f-text")).to_have_value(witness)
    marked = page.locator("#tokens .tok-marked")
    expect(marked).to_have_count(1)
    expect(marked).to_have_attribute("data-token-id", "3413")
    assert not console, console


def test_a_special_tokens_card_gives_its_reason(page: Page, console: list[str], reach_server: str) -> None:
    page.goto(f"{reach_server}/vocab?tokenizer=o200k_base&token=199999")
    status = page.locator('#card [data-fact="status"]')
    expect(status).to_have_attribute("data-status", "unreachable")
    expect(status.locator('[data-fact="group"]')).to_have_attribute("data-group", "special")
    assert not console, console
