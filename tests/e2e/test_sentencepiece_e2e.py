"""The mistral_v3 preset (a SentencePiece .model) on the Bytes page, in real Chromium.

The ids on the page are sentencepiece's; the "Recognize special tokens" box
makes `[INST]` one control token; screenshots at laptop and phone size, light
and dark. Console errors fail the tests.
"""

from __future__ import annotations

import zipfile

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import token_ids

from webapp.tokenizer.presets.open_models import OPEN_MODELS

spm = pytest.importorskip("sentencepiece")

TEXT = "[INST] Hello  world, naïve 東京 ꙮ [/INST]"


def _oracle():
    preset = OPEN_MODELS["mistral_v3"]
    if not preset.file_path().exists():
        pytest.skip("mistral-common's wheel is missing (make setup)")
    with zipfile.ZipFile(preset.file_path()) as wheel:
        return spm.SentencePieceProcessor(model_proto=wheel.read(preset.path))


@pytest.mark.parametrize("size,scheme", [((1366, 900), "light"), ((390, 844), "dark"), ((1366, 900), "dark"),
                                         ((390, 844), "light")])
def test_mistral_v3_on_the_bytes_page(page: Page, console, screenshot, size, scheme):
    sp = _oracle()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.emulate_media(color_scheme=scheme)
    page.goto("/bytes")
    page.fill("#f-text", TEXT)
    page.locator('button[name="tokenizer_preset"][value="mistral_v3"]').click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("mistral_v3")
    expected = sp.encode(TEXT)
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
    page.locator('input[name="special"]').check()
    expect(page.locator('#tokens .tok[data-token-id="3"]')).to_have_count(1)  # [INST]
    screenshot(f"bytes-mistral-v3-{size[0]}-{scheme}")
