"""The Languages page in real Chromium: the table and its sorting, the chart, the map's labels,
the scatter of two tokenizers, and a click through to the Bytes page.

The presets' counts are read from instance/languages (the set-up step stores
them; `make test` runs it first). Screenshots at 1366x900 and 390x844, light
and dark, go to test-artifacts/screenshots/. Console errors fail the tests.
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import VIEWPORTS
from webapp.tokenizer import get_encoding, is_installed


pytestmark = pytest.mark.skipif(not (is_installed("cl100k_base") and is_installed("o200k_base")),
                                reason="the OpenAI presets are not installed (make setup)")


def premiums(page: Page) -> list[float]:
    cells = page.locator("#languages-table tbody td[data-col=premium]").all_inner_texts()
    return [float(c.strip().rstrip("x")) for c in cells if c.strip() not in ("–", "")]


def test_table_sorts_filters_and_the_chart_marks_english(page: Page, base_url: str, console: list[str]) -> None:
    page.goto(f"{base_url}/languages?tokenizer=cl100k_base")
    table = page.locator("#languages-table")
    expect(table).to_be_visible()
    assert page.locator("#languages-table tbody tr").count() == 532
    values = premiums(page)
    assert values == sorted(values, reverse=True)  # the default: costliest first
    page.locator("#languages-table th button[data-sort=premium]").click()  # again: the other way
    expect(page.locator("#languages-table th[aria-sort=ascending] button[data-sort=premium]")).to_be_visible()
    values = premiums(page)
    assert values == sorted(values) and len(values) == 532
    assert "sort=premium" in page.url  # the state is in the URL
    # English's bar is marked, and every bar says its language and premium
    expect(page.locator("#chart-english")).to_have_text("▼ English")
    assert page.locator("#languages-chart rect.bar-english").count() == 1
    english_title = page.locator("#languages-chart rect.bar-english title").text_content()
    assert english_title == "English: 1.00x English"
    assert page.locator("#languages-chart rect.bar").count() == 532
    # filter by script: only Cyrillic rows, the chart follows the table
    page.select_option("#f-script", "Cyrillic")
    expect(page.locator("#languages-table tbody tr")).not_to_have_count(532)
    scripts = set(page.locator("#languages-table tbody td[data-col=script]").all_inner_texts())
    assert scripts == {"Cyrillic"}
    rows = page.locator("#languages-table tbody tr").count()
    assert page.locator("#languages-chart rect.bar").count() == rows
    # by name
    page.fill("#f-q", "russian")
    expect(page.locator("#languages-table tbody tr")).to_have_count(1)
    assert page.locator("#languages-table tbody a.language-open").inner_text() == "Russian"


def test_map_dots_have_labels_and_a_legend(page: Page, base_url: str, console: list[str]) -> None:
    page.goto(f"{base_url}/languages?tokenizer=o200k_base&q=Swahili")
    dots = page.locator("#languages-map circle.dot")
    assert dots.count() == page.locator("#languages-table tbody tr").count() > 1
    for k in range(dots.count()):  # each dot's label says what its row in the table says
        dot = dots.nth(k)
        row = page.locator(f"#languages-table tbody tr[data-code='{dot.get_attribute('data-code')}']")
        cell = row.locator("td[data-col=premium]").inner_text().strip()
        name = row.locator("a.language-open").inner_text()
        assert dot.locator("title").text_content() == f"{name}: {cell} English"
    assert page.locator("#languages-map .legend li").count() == 6


def test_two_tokenizers_show_a_scatter(page: Page, base_url: str, console: list[str]) -> None:
    page.goto(f"{base_url}/languages?tokenizer=cl100k_base&compare=o200k_base")
    scatter = page.locator("#languages-scatter")
    expect(scatter).to_be_visible()
    assert page.locator("#languages-scatter circle.dot").count() == 532
    caption = scatter.locator("figcaption").inner_text()
    above = page.locator("#languages-scatter circle.worse-b").count()
    below = page.locator("#languages-scatter circle.worse-a").count()
    assert f"{above} languages cost 10 % or more extra under o200k_base" in caption
    assert f"{below} under cl100k_base" in caption
    assert below > above  # o200k's larger vocabulary is cheaper for most languages
    assert page.locator("#languages-table th button[data-sort=premium_b]").count() == 1


def test_clicking_a_language_opens_its_text_on_the_bytes_page(page: Page, base_url: str, console: list[str]) -> None:
    page.goto(f"{base_url}/languages?tokenizer=o200k_base&q=French")
    row = page.locator("#languages-table tbody tr[data-code=fra]")
    tokens = int(row.locator("td[data-col=tokens]").inner_text().replace(",", ""))
    row.locator("a.language-open").click()
    page.wait_for_url("**/languages/fra/bytes?tokenizer=o200k_base")
    text = page.input_value("#f-text")
    assert text.startswith("Tous les êtres humains naissent libres") and "\n\n" in text  # articles apart
    assert len(get_encoding("o200k_base").encode_ordinary(text)) == tokens
    expect(page.locator("#results")).to_contain_text(f"{tokens:,}")


def test_keyboard_sorts_and_opens(page: Page, base_url: str, console: list[str]) -> None:
    page.goto(f"{base_url}/languages?tokenizer=cl100k_base&q=German")
    page.locator("#languages-table th button[data-sort=name]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#languages-table th[aria-sort] button[data-sort=name]")).to_be_visible()
    page.locator("#languages-table a.language-open").first.focus()
    page.keyboard.press("Enter")
    page.wait_for_url("**/bytes?tokenizer=cl100k_base")


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("size", list(VIEWPORTS))
def test_screenshots(browser: Browser, base_url: str, screenshot: Callable[..., Any], size: str,
                     scheme: str) -> None:
    context = browser.new_context(viewport=VIEWPORTS[size], color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto(f"{base_url}/languages?tokenizer=cl100k_base&compare=o200k_base&complete=1")
    expect(page.locator("#languages-scatter")).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= VIEWPORTS[size]["width"], f"the page scrolls sideways at {size}: {width}px"
    full = screenshot(f"languages-{size}-{scheme}", page)  # the whole page, every row of the table
    page.screenshot(path=str(full.with_name(f"languages-{size}-{scheme}-top.png")))  # the first screen
    for part in ("chart", "map", "scatter"):
        page.locator(f"#languages-{part}").screenshot(path=str(full.with_name(f"languages-{part}-{size}-{scheme}.png")))
    context.close()
