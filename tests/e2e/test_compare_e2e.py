"""Comparing two tokenizers on the Bytes page, in real Chromium.

cl100k_base (side A, the page's preset) against o200k_base (side B, chosen in
"Compare with…") on one sentence: both sides' ids equal tiktoken's (built from
the same checked ranks), both counts show, the tokens marked as differing are
exactly those with a boundary the other side lacks (recomputed here from
tiktoken's token bytes), the sides stand side by side at 1366x900 and one
above the other at 390x844, a share link reopens the same comparison, and the
page works with JavaScript off. Console errors fail the tests.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect
from tests.e2e.conftest import SCREENSHOTS, tiktoken_oracle

pytest.importorskip("tiktoken")  # (the oracle: tests.e2e.conftest.tiktoken_oracle)

TEXT = "Unbelievably, the tokenizer grew: Привет, мир!"


def _expected() -> dict:
    """Per side: ids and, per token, whether one of its inner edges is missing on the other side."""
    sides = {}
    for key, name in (("a", "cl100k_base"), ("b", "o200k_base")):
        enc = tiktoken_oracle(name)
        ids = enc.encode_ordinary(TEXT)
        ends, offset = [], 0
        for token_id in ids:
            offset += len(enc.decode_single_token_bytes(token_id))
            ends.append(offset)
        sides[key] = (ids, ends)
    total = len(TEXT.encode("utf-8"))
    cuts = {key: {e for e in ends if 0 < e < total} for key, (_, ends) in sides.items()}
    out = {}
    for key, other in (("a", "b"), ("b", "a")):
        ids, ends = sides[key]
        starts = [0] + ends[:-1]
        marks = [not ({s, e} - {0, total} <= cuts[other]) for s, e in zip(starts, ends)]
        out[key] = (ids, marks)
    shared, union = len(cuts["a"] & cuts["b"]), len(cuts["a"] | cuts["b"])
    return {"sides": out, "percent": f"{100 * shared / union:.1f}%", "shared": shared, "union": union}


def _list(side: str) -> str:
    """Side B's tokens are in the comparison card; side A's are the page's own Tokens view."""
    return "#compare-tokens-b" if side == "b" else "#tokens"


def _ids(page: Page, side: str) -> list[int]:
    return [int(x) for x in page.locator(f"{_list(side)} .tok").evaluate_all("els => els.map(e => e.dataset.tokenId)")]


def _marks(page: Page, side: str) -> list[bool]:
    return page.locator(f"{_list(side)} .tok").evaluate_all("els => els.map(e => e.classList.contains('tok-differs'))")


def _check(page: Page, want: dict) -> None:
    for side in ("b", "a"):  # B first: the comparison card is there, so A's marks are too
        ids, marks = want["sides"][side]
        expect(page.locator(f"{_list(side)} .tok")).to_have_count(len(ids))
        expect(page.locator(f"{_list(side)} .tok.tok-differs")).to_have_count(sum(marks))
        assert _ids(page, side) == ids
        assert _marks(page, side) == marks
        section = page.locator(f'.compare-side[data-side="{side}"]')
        expect(section.locator(".compare-tokens")).to_have_text(str(len(ids)))
        expect(section.locator(".compare-differing")).to_have_text(str(sum(marks)))
    expect(page.locator("#compare-percent")).to_have_text(want["percent"])
    expect(page.locator("#compare-summary")).to_contain_text(f"{want['shared']} of {want['union']} cuts")


def test_compare_cl100k_with_o200k_wide_and_narrow(page: Page, console, screenshot):
    want = _expected()
    a_ids, b_ids = want["sides"]["a"][0], want["sides"]["b"][0]
    assert len(a_ids) != len(b_ids) and any(want["sides"]["a"][1]) and any(want["sides"]["b"][1])

    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto("/bytes")
    page.fill("#f-text", TEXT)
    page.locator('button[name="tokenizer_preset"][value="cl100k_base"]').click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("cl100k_base")
    page.locator("#compare-box > summary").click()
    page.select_option("#f-compare", "o200k_base")
    _check(page, want)

    # Wide: side by side, tops level, B to the right of A.
    box_a = page.locator('.compare-side[data-side="a"]').bounding_box()
    box_b = page.locator('.compare-side[data-side="b"]').bounding_box()
    assert box_a and box_b and box_b["x"] >= box_a["x"] + box_a["width"] and abs(box_b["y"] - box_a["y"]) < 2
    page.locator("#compare").scroll_into_view_if_needed()
    screenshot("bytes-compare-1366")

    # Narrow: one above the other, both inside the viewport's width.
    page.set_viewport_size({"width": 390, "height": 844})
    box_a = page.locator('.compare-side[data-side="a"]').bounding_box()
    box_b = page.locator('.compare-side[data-side="b"]').bounding_box()
    assert box_a and box_b and box_b["y"] >= box_a["y"] + box_a["height"]
    assert box_a["x"] + box_a["width"] <= 390 and box_b["x"] + box_b["width"] <= 390
    screenshot("bytes-compare-390")
    page.locator("#compare").screenshot(path=str(SCREENSHOTS / "bytes-compare-390-card.png"))

    # Share: the link reopens the same comparison.
    page.set_viewport_size({"width": 1366, "height": 900})
    page.locator(".share-button").click()
    link = page.locator(".share-result a").first
    expect(link).to_be_visible()
    page.goto(link.get_attribute("href") or "")
    expect(page.locator("#f-compare")).to_have_value("o200k_base")
    _check(page, want)

    # Swap: o200k_base becomes the page's tokenizer, cl100k_base side B.
    page.locator("#compare-swap").click()
    expect(page.locator("#f-compare")).to_have_value("cl100k_base")
    expect(page.locator("#tokens .tok")).to_have_count(len(b_ids))
    assert _ids(page, "a") == b_ids and _ids(page, "b") == a_ids


def test_compare_with_javascript_off(browser: Browser, base_url: str):
    want = _expected()
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    page = context.new_page()
    try:
        page.goto("/bytes?tokenizer=cl100k_base")
        page.fill("#f-text", TEXT)
        page.locator("#compare-box > summary").click()
        page.select_option("#f-compare", "o200k_base")
        page.locator("#compare-button").click()
        page.wait_for_load_state()
        _check(page, want)
    finally:
        context.close()
