"""The Parity page in real Chromium, at laptop and phone size.

cl100k_base beside o200k_base on the built-in probes: the summary's counts equal /api/parity's, every
text where the two differ shows its stage, its detail and both token rows with the tokens outside their
common runs outlined exactly as the API marks them; typed texts replace the probes; a bad tokenizer name
is said under its field; the Compare box links here with its two sides. Screenshots in
test-artifacts/screenshots/parity-*.png. Console errors fail the tests.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import shot

from webapp.tokenizer import is_installed

SIDES = ("cl100k_base", "o200k_base")


def _api(page: Page, texts: list[str] | None = None) -> dict:
    body = {"a": {"tokenizer": SIDES[0], "allowed_special": "none"}, "b": {"tokenizer": SIDES[1], "allowed_special": "none"}}
    if texts is not None:
        body["texts"] = texts
    answer = page.request.post("/api/parity", data=body)
    assert answer.ok, answer.text()
    return answer.json()


def _marks(row, side: str) -> list[bool]:
    return row.locator(f'[data-side="{side}"] .tok').evaluate_all("els => els.map(e => e.classList.contains('tok-differs'))")


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_probes_show_each_differing_text_with_its_stage_and_marked_tokens(open_page, size: str) -> None:
    page = open_page(size)
    page.goto(f"/parity?a={SIDES[0]}&b={SIDES[1]}")
    want = _api(page)
    summary = page.locator("#parity-summary")
    expect(summary).to_contain_text(f"{want['summary']['same']} of {len(want['texts'])} texts")
    for stage, count in want["summary"].items():
        if stage != "same":
            expect(summary.locator(f'[data-stage="{stage}"] strong')).to_have_text(str(count))
    differing = [e for e in want["texts"] if not e["same"]]
    rows = page.locator("article.parity-row:not(#parity-agreeing *)")
    expect(rows).to_have_count(len(differing))
    for index, entry in enumerate(differing):
        row = rows.nth(index)
        assert row.get_attribute("data-stage") == entry["stage"]
        expect(row.locator(".parity-sentence")).to_have_text(entry["detail"]["sentence"].replace("`", ""))
        assert _marks(row, "a") == [t["differs"] for t in entry["a"]["tokens"]]
        assert _marks(row, "b") == [t["differs"] for t in entry["b"]["tokens"]]
        ids = row.locator('[data-side="b"] .tok').evaluate_all("els => els.map(e => Number(e.dataset.tokenId))")
        assert ids == entry["b"]["ids"]
    sides = page.locator(".parity-row .compare-sides").first.evaluate(
        "el => [...el.children].map(c => c.getBoundingClientRect().top)")
    assert (sides[0] == sides[1]) == (size == "laptop")  # side by side on a laptop, one above the other on a phone
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    shot(page, f"parity-{size}")
    shot(page, f"parity-{size}-full", full=True)


def test_typed_texts_replace_the_probes_and_a_bad_name_is_said_under_its_field(open_page) -> None:
    page = open_page()
    page.goto(f"/parity?a={SIDES[0]}&b={SIDES[1]}")
    page.fill("#f-texts", "hello world\n  spaces   here  ")
    page.click("#parity-form button[type=submit]")
    expect(page.locator("#parity-summary")).to_contain_text("of 2 texts")
    want = _api(page, ["hello world", "  spaces   here  "])
    expect(page.locator("article.parity-row")).to_have_count(2)
    assert page.locator("#parity-summary").inner_text().count(f"{want['summary']['same']} of 2") == 1
    page.fill("#f-b", "no-such-tokenizer")
    page.click("#parity-form button[type=submit]")
    expect(page.locator("#parity-error")).to_contain_text("b.tokenizer")


def test_the_compare_box_links_here_with_both_sides(open_page) -> None:
    if not is_installed("cl100k_base"):
        pytest.skip("cl100k_base is not installed")
    page = open_page()
    page.goto(f"/bytes?tokenizer={SIDES[0]}&compare={SIDES[1]}&text=hello")
    link = page.locator("#compare-parity-link")
    assert link.get_attribute("href") == f"/parity?a={SIDES[0]}&b={SIDES[1]}"
    page.goto(link.get_attribute("href") or "")
    expect(page.locator("#f-a")).to_have_value(SIDES[0])
    expect(page.locator("#f-b")).to_have_value(SIDES[1])


def test_the_first_look_shows_every_kind_of_detail(open_page) -> None:
    """The page's default sides (llama3 beside qwen3) part at several stages; a screenshot to look at."""
    if not (is_installed("llama3") and is_installed("qwen3")):
        pytest.skip("llama3 or qwen3 is not installed")
    page = open_page()
    page.goto("/parity")
    for stage in ("normalizer", "pre_tokenizer", "merges", "vocab"):
        expect(page.locator(f'article.parity-row[data-stage="{stage}"]').first).to_be_visible()
    page.locator('article.parity-row[data-stage="merges"]').first.scroll_into_view_if_needed()
    shot(page, "parity-laptop-merges")
    page.locator('article.parity-row[data-stage="normalizer"]').first.scroll_into_view_if_needed()
    shot(page, "parity-laptop-normalizer")
