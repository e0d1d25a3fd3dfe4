"""A GGUF file opened through "Open tokenizer file" in real Chromium: only its metadata is sent.

The file is a small byte-level vocabulary (trained with `tokenizers` in the test, written with the `gguf`
package) followed by 40 MB standing in for a model's weights, more than the server accepts
(MAX_CONTENT_LENGTH, 32 MiB): files.js reads the header in the browser, sends the prefix that holds
the metadata, and the page shows the library's ids. Console errors fail the test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import token_ids
from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer

gguf = pytest.importorskip("gguf")

from tests.gguf_files import gguf_from_tokenizer_json  # noqa: E402


def test_a_gguf_larger_than_the_upload_limit_opens_from_its_metadata(page: Page, console, tmp_path: Path):
    library = byte_level_tokenizer(SAMPLE_CORPUS)
    path = tmp_path / "model.gguf"
    path.write_bytes(gguf_from_tokenizer_json(library.to_str(), "gpt-2") + b"\0" * (40 * 1024 * 1024))
    text = "Hello there, the lowest newer München"

    page.goto("/bytes")
    page.fill("#f-text", text)
    page.locator(".open-tokenizer summary").click()
    page.set_input_files("#f-tokenizer-file", str(path))

    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("GGUF")
    expected = library.encode(text).ids
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
