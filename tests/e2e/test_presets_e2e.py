"""Real tokenizer presets on the Bytes page, in real Chromium.

Choosing a preset re-encodes the typed text with it (its own pattern
selected), the special-tokens checkbox switches `<|endoftext|>` between plain
text and one special token (styled apart), and the ids on the page equal
tiktoken's, built from the same checked ranks. Console errors fail the tests.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import tiktoken_oracle, token_ids

pytest.importorskip("tiktoken")  # (the oracle: tests.e2e.conftest.tiktoken_oracle)

TEXT = "Hello<|endoftext|> world, naïve 東京"


def test_choose_a_preset_and_toggle_special_tokens(page: Page, console, screenshot):
    enc = tiktoken_oracle("cl100k_base")
    page.goto("/bytes")
    page.fill("#f-text", TEXT)
    page.locator('button[name="tokenizer_preset"][value="cl100k_base"]').click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("cl100k_base")
    expect(page.locator("#f-pretokenize")).to_have_value("cl100k")
    expect(page.locator('button[name="tokenizer_preset"][value="cl100k_base"]')).to_have_attribute("aria-pressed", "true")
    expected = enc.encode_ordinary(TEXT)
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
    expect(page.locator("#tokens .tok-special")).to_have_count(0)

    page.locator('input[name="special"]').check()
    expected = enc.encode(TEXT, allowed_special="all")
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
    special = page.locator("#tokens .tok-special")
    expect(special).to_have_count(1)
    expect(special).to_have_attribute("data-token-id", "100257")
    screenshot("bytes-preset-special-tokens")

    # another preset: its own pattern and ids
    enc = tiktoken_oracle("o200k_base")
    page.locator('button[name="tokenizer_preset"][value="o200k_base"]').click()
    expect(page.locator("#f-pretokenize")).to_have_value("o200k")
    expect(page.locator('button[name="tokenizer_preset"][value="cl100k_base"]')).to_have_attribute("aria-pressed", "false")
    expected = enc.encode_ordinary(TEXT)
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected


def test_preset_from_the_url(page: Page, console):
    enc = tiktoken_oracle("r50k_base")
    page.goto("/bytes?tokenizer=gpt2&special=all&text=" + "a%3C%7Cendoftext%7C%3Eb")
    expected = enc.encode("a<|endoftext|>b", allowed_special="all")
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
    expect(page.locator('input[name="special"]')).to_be_checked()
