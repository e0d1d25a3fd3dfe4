"""Opening real tokenizer files and downloading exports, in real Chromium.

A small byte-level tokenizer is trained with Hugging Face `tokenizers` in the
test, saved as tokenizer.json, uploaded through the Bytes page's "Open
tokenizer file" control; the spans on the page must carry the library's ids.
A download from the Characters page must load in `tokenizers` with the same
ids. Console errors (a CSP violation included) fail the tests.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.conftest import token_ids
from tests.hf_samples import SAMPLE_CORPUS, byte_level_tokenizer
from playwright.sync_api import Page, expect
from tokenizers import Tokenizer

@pytest.fixture(scope="module")
def byte_tok() -> Tokenizer:
    return byte_level_tokenizer(SAMPLE_CORPUS)


def test_upload_a_tokenizer_json_and_see_its_tokens(page: Page, console, screenshot, byte_tok, tmp_path: Path):
    path = tmp_path / "tokenizer.json"
    path.write_text(byte_tok.to_str(), encoding="utf-8")
    text = "Hello there, the lowest newer München"

    page.goto("/bytes")
    page.fill("#f-text", text)
    page.locator(".open-tokenizer summary").click()
    # the file opens as soon as it is chosen (no Open button to press)
    page.set_input_files("#f-tokenizer-file", str(path))

    status = page.locator("#open-tokenizer-status .open-tokenizer-loaded")
    expect(status).to_contain_text("Using a Hugging Face tokenizer.json")
    # the page switched to the file's own splitting and re-encoded with the file
    expect(page.locator("#f-pretokenize")).to_have_value("gpt2")
    expected = byte_tok.encode(text).ids
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected
    screenshot("bytes-opened-tokenizer")

    # typing keeps using the file (only its id travels with the form)
    page.fill("#f-text", "the widest widths")
    expected = byte_tok.encode("the widest widths").ids
    expect(page.locator("#tokens .tok")).to_have_count(len(expected))
    assert token_ids(page) == expected

    # closing the file goes back to the Merges field
    page.locator(".open-tokenizer-close").click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_have_count(0)
    expect(page.locator("#tokens .tok")).to_have_count(len("the widest widths".encode()))


def test_paste_a_file_that_is_not_bpe_and_read_the_message(page: Page, console):
    page.goto("/bytes")
    page.locator(".open-tokenizer summary").click()
    page.fill("#f-tokenizer-paste", '{"model": {"type": "WordPiece", "vocab": {"a": 0}}}')
    page.locator(".open-tokenizer-button").click()
    expect(page.locator(".open-tokenizer-error")).to_contain_text("holds a WordPiece model")
    # the pasted text stays for the person to fix
    expect(page.locator("#f-tokenizer-paste")).to_have_value('{"model": {"type": "WordPiece", "vocab": {"a": 0}}}')


def test_download_tokenizer_json_from_characters_page(page: Page, console, screenshot):
    page.goto("/chars")
    page.fill("#f-text", "lower")
    expect(page.locator("#tokens .tok")).to_have_count(1)
    with page.expect_download() as info:
        page.locator('.export-button[data-format="hf"]').click()
    download = info.value
    assert download.suggested_filename == "tokenizer.json"
    library = Tokenizer.from_file(str(download.path()))
    shown = token_ids(page)
    assert library.encode("lower").ids == shown
    # the page was not replaced by the download
    expect(page.locator("#f-text")).to_have_value("lower")
    screenshot("chars-export")


def test_download_learned_merges_from_train_page(page: Page, console, screenshot):
    page.goto("/train")
    page.fill("#f-words", "low lower lowest newer newest wider widest")
    page.fill("#f-num_merges", "8")
    expect(page.locator(".export-button[data-format='hf']")).to_be_visible()
    with page.expect_download() as info:
        page.locator('.export-button[data-format="hf"]').click()
    library = Tokenizer.from_file(str(info.value.path()))
    # the same rules the Characters page would get: "lowest" is learned down to few tokens
    ids = library.encode("lowest").ids
    assert 1 <= len(ids) < len("lowest")
    with page.expect_download() as info:
        page.locator('.export-button[data-format="minbpe"]').click()
    assert info.value.suggested_filename == "tokenizer.model"
    assert Path(info.value.path()).read_text("utf-8").startswith("minbpe v1\n")
    expect(page.locator("#f-words")).to_have_value("low lower lowest newer newest wider widest")
    # the live update that was under way when the button was clicked still lands
    expect(page.locator("#results")).to_contain_text("newest")
    screenshot("train-export")


def test_export_refusal_is_shown_beside_the_buttons(page: Page):
    seen: list[str] = []
    page.on("console", lambda msg: seen.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: seen.append(str(exc)))
    page.goto("/chars")
    # the live update's answer in first: on a busy machine its swap moved the page under the click
    with page.expect_response("**/fragments/chars"):
        page.fill("#f-vocab", '{"l": 0, "o": 1}')  # "lo" is missing: the library needs it
    page.locator('.export-button[data-format="hf"]').click()
    expect(page.locator(".export-error")).to_contain_text('Cannot export: vocab: rule 1 makes "lo", which is not in the vocab')
    # the refused download is the only thing the console reports (Chromium logs every 4xx)
    assert all("status of 400" in text for text in seen), seen


MINBPE = "minbpe v1\n\n0\n97 97\n256 97\n"


def _small_limit_server(tmp_path: Path, **config):
    from serving import serve_app

    from webapp import create_app
    from webapp.infra.storage import default_sqlite_url

    app = create_app({"TESTING": True, "DATABASE_URL": default_sqlite_url(tmp_path / "db"), **config})
    return serve_app(app, "small-limit")


def test_open_a_file_while_the_page_holds_a_lot_of_text(page: Page, console, tmp_path: Path):
    """Only the file fields travel with Open (hx-params), not the page's text: with
    Flask's old 500 kB per multipart field, 700 kB of text would make it a 413."""
    path = tmp_path / "tiny.model"
    path.write_text(MINBPE, encoding="utf-8")
    with _small_limit_server(tmp_path, MAX_FORM_MEMORY_SIZE=500_000) as url:
        page.goto(url + "/bytes")
        page.locator("#f-text").evaluate("(el, value) => { el.value = value; }", "a" * 700_000)
        page.locator(".open-tokenizer summary").click()
        page.set_input_files("#f-tokenizer-file", str(path))
        page.locator(".open-tokenizer-button").click()
        expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("minbpe")
    # The page keeps one request in flight and replaces a superseded one; on a busy machine the
    # result refresh after Open can supersede another, and htmx logs that abort as two console
    # errors (htmx:sendAbort, then htmx:afterRequest). Those two are expected; anything else fails.
    if any(m.startswith("htmx:sendAbort") for m in console):
        console[:] = [m for m in console if not m.startswith(("htmx:sendAbort", "htmx:afterRequest"))]


def test_a_file_over_the_size_limit_says_so_in_the_page(page: Page, tmp_path: Path):
    """A 413 is not swapped by htmx: files.js writes the message into the status."""
    path = tmp_path / "big.model"
    path.write_text(MINBPE + "\n" * 200_000, encoding="utf-8")
    with _small_limit_server(tmp_path, MAX_CONTENT_LENGTH=100_000, MAX_FORM_MEMORY_SIZE=100_000) as url:
        page.goto(url + "/bytes")
        page.locator(".open-tokenizer summary").click()
        page.set_input_files("#f-tokenizer-file", str(path))
        page.locator(".open-tokenizer-button").click()
        expect(page.locator(".open-tokenizer-error")).to_contain_text(
            "larger than this playground accepts (100,000 bytes, setting MAX_CONTENT_LENGTH)"
        )
