"""The first screen a newcomer meets (issue "The first screen"), one test per point.

The test names say what they check; each section's comment gives the
issue's point number.

Each test runs in real Chromium at the sizes the issue was found on (a
1366x900 laptop and a 390x844 phone, light and dark where it matters) and
saves screenshots of the states it checks under test-artifacts/screenshots/
(`first-<point>-<state>.png`) for a person to look at. Console errors and CSP
violations fail the tests (the `console` and `open_page` fixtures of conftest.py).
"""

from __future__ import annotations

import re
import time
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import Page, expect
from tests.e2e.conftest import in_viewport, shot, tokens


# --- 1. the output above the fold ---------------------------------------------------


@pytest.mark.parametrize("size", ["laptop", "phone"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_typing_shows_tokens_and_count_without_scrolling(open_page, size: str, scheme: str):
    page = open_page(size, scheme)
    page.goto("/bytes")
    page.fill("#f-text", "lower lowest")
    expect(tokens(page)).to_have_count(8)
    assert page.evaluate("scrollY") == 0
    assert in_viewport(page, "#tokens .tok"), "the first token is below the fold"
    assert in_viewport(page, '[data-stat="tokens"]'), "the token count is below the fold"
    assert in_viewport(page, "#f-text")
    if size == "laptop":
        # side by side: the tokens start to the right of the text box, level with it
        text_box = page.locator("#f-text").bounding_box()
        first = tokens(page).first.bounding_box()
        assert first["x"] > text_box["x"] + text_box["width"]
        assert first["y"] < 500
    shot(page, f"first-1-above-the-fold-{size}-{scheme}")


def test_secondary_panels_collapse_and_keep_their_state(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    merges = page.locator("#panel-merges")
    expect(merges).to_have_attribute("open", "")
    page.locator("#panel-merges > summary").click()
    expect(page.locator("#f-merges")).to_be_hidden()
    # a live update does not reopen it, and neither does a reload
    page.fill("#f-text", "low low")
    expect(tokens(page)).to_have_count(3)
    expect(page.locator("#f-merges")).to_be_hidden()
    page.reload()
    expect(page.locator("#f-text")).to_have_value("low low")
    expect(page.locator("#f-merges")).to_be_hidden()
    shot(page, "first-1-merges-collapsed")
    page.locator("#panel-merges > summary").click()
    expect(page.locator("#f-merges")).to_be_visible()


# --- 2. landing ------------------------------------------------------------------------


def _cl100k_oracle():
    """tiktoken's own cl100k_base constructor fed our checked ranks (no download)."""
    tiktoken = pytest.importorskip("tiktoken")
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    from webapp.tokenizer.presets.openai import load_ranks

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(openai_public, "load_tiktoken_bpe", lambda url, expected_hash=None: dict(load_ranks("cl100k_base")))
        definition = openai_public.ENCODING_CONSTRUCTORS["cl100k_base"]()
    return tiktoken.Encoding(name="oracle-cl100k", pat_str=definition["pat_str"],
                             mergeable_ranks=definition["mergeable_ranks"], special_tokens=definition["special_tokens"])


@pytest.mark.parametrize("size", ["laptop", "phone"])
def test_landing_opens_a_working_playground_on_a_real_tokenizer(open_page, size: str):
    oracle = _cl100k_oracle()
    page = open_page(size)
    page.goto("/")
    expect(page.locator('button.preset-button[value="cl100k_base"]')).to_have_attribute("aria-pressed", "true")
    text = page.locator("#f-text").input_value()
    assert text  # an example sentence is there
    ids = [int(x) for x in tokens(page).evaluate_all("els => els.map(e => e.dataset.tokenId)")]
    assert ids == oracle.encode_ordinary(text)
    shot(page, f"first-2-landing-{size}")
    assert in_viewport(page, "#tokens .tok")
    # typing keeps using the preset
    page.fill("#f-text", "Hello world")
    expect(tokens(page)).to_have_count(len(oracle.encode_ordinary("Hello world")))
    # the seed examples are one click away
    page.goto("/")
    page.locator('[data-seed="chars"]').click()
    expect(page).to_have_url(re.compile(r"/chars\?example=lower$"))
    expect(tokens(page)).to_have_count(1)
    expect(tokens(page).first).to_have_attribute("data-token-id", "8")


# --- 3. one active tokenizer, no stale state ------------------------------------------------


def test_an_opened_file_owns_encode_decode_and_fill_decode(open_page, tmp_path):
    from hf_samples import SAMPLE_CORPUS, byte_level_tokenizer

    tok = byte_level_tokenizer(SAMPLE_CORPUS)
    path = tmp_path / "tokenizer.json"
    path.write_text(tok.to_str(), encoding="utf-8")
    text = "Hello there! the lowest newer"
    page = open_page("laptop")
    page.goto("/bytes")  # the seed example: typed merges, a typed decode vocab
    page.fill("#f-text", text)
    page.locator("#panel-file > summary").click()
    page.set_input_files("#f-tokenizer-file", str(path))
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_be_visible()
    expected = tok.encode(text).ids
    expect(tokens(page)).to_have_count(len(expected))
    # the typed merges and vocab look and act inactive
    for name in ("merges", "vocab"):
        box = page.locator(f"#f-{name}")
        expect(box).to_have_attribute("readonly", "")
        expect(page.locator(f"#inactive-{name}")).to_be_visible()
        assert float(box.evaluate("e => getComputedStyle(e).opacity")) < 1
    # "Decode these ids" is still there and decodes with the file's own vocab
    # (ids below 256 included: this file numbers bytes its own way)
    page.locator("#fill-decode").click()
    expect(page.locator("#f-ids")).to_have_value(" ".join(map(str, expected)))
    assert any(i < 256 for i in expected)
    expect(page.locator("#decoded-text")).to_have_text(text.replace(" ", "·"))
    expect(page.locator("#error-ids")).to_be_empty()
    shot(page, "first-3-file-owns-decode", full=True)
    # closing the file makes the typed fields active again
    page.locator(".open-tokenizer-close").click()
    expect(page.locator("#f-merges")).not_to_have_attribute("readonly", "")
    expect(page.locator("#inactive-merges")).to_be_hidden()


def test_characters_download_ids_uses_the_opened_file(open_page):
    page = open_page("laptop")
    page.goto("/chars")
    exported = page.request.post("/files/export/chars?format=playground", form={
        "text": "lower", "merges": "l o\ne r\nlo w\nlow er", "vocab": "l 0\no 1\nw 2\ne 3\nr 4\nlo 5\ner 6\nlow 7\nlower 8",
    })
    assert exported.ok
    page.fill("#f-vocab", '{"x": 0}')  # a typed vocab that knows none of the file's tokens
    page.locator("#panel-file > summary").click()
    page.fill("#f-tokenizer-paste", exported.text())
    page.locator(".open-tokenizer-button").click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_be_visible()
    # the typed vocab stays as it was, read-only: the file's vocab is what counts
    expect(page.locator("#f-vocab")).to_have_attribute("readonly", "")
    page.fill("#f-text", "lowerlol")
    expect(page.locator("#tokens .tok")).to_have_count(3)  # lower, lo, l
    page.locator("label[for=view-ids]").click()
    shown = page.locator("#ids-output").input_value()
    assert shown
    with page.expect_download() as info:
        page.locator("[data-download]").click()
    downloaded = open(info.value.path(), encoding="utf-8").read().strip()
    assert downloaded == shown
    shot(page, "first-3-chars-download-ids")


# --- 4. an input error keeps the last good result, dimmed and labelled ----------------------


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_an_error_keeps_the_last_good_result_dimmed_and_labelled(open_page, scheme: str):
    page = open_page("laptop", scheme)
    page.goto("/bytes")
    page.fill("#f-text", "low lower")
    expect(tokens(page)).to_have_count(5)
    page.fill("#f-merges", "108 111 256\n256 119")  # typing the second rule: not finished yet
    expect(page.locator("#error-merges")).to_contain_text("line 2")
    stale = page.locator(".stale-slot .result.is-stale")
    expect(stale).to_have_count(1)
    expect(stale.locator(".tok")).to_have_count(5)  # the last good tokens, still there
    assert float(stale.evaluate("e => getComputedStyle(e).opacity")) < 0.6
    expect(page.locator(".stale-slot .stale-note")).to_contain_text("Fix the input marked above")
    expect(page.locator(".stale-slot .stale-extra")).to_be_visible()
    expect(page.locator("#tokens")).to_have_count(0)  # nothing answers to the live ids any more
    # a second error in a row keeps the same stale result
    page.fill("#f-merges", "108 111 256\n256 119 x")
    expect(page.locator("#error-merges")).to_contain_text("line 2")
    expect(page.locator(".stale-slot .result.is-stale .tok")).to_have_count(5)
    shot(page, f"first-4-stale-result-{scheme}")
    page.fill("#f-merges", "108 111 256\n256 119 257")
    expect(tokens(page)).to_have_count(5)
    expect(page.locator(".is-stale")).to_have_count(0)
    expect(page.locator("#error-merges")).to_be_empty()


# --- 5. reload and Back keep what was typed ------------------------------------------------


def test_reload_and_back_keep_the_typed_state(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    page.fill("#f-text", "slow lowest")
    page.fill("#f-merges", "108 111 256\n256 119 257\n101 115 258")
    expect(tokens(page)).to_have_count(6)
    page.locator("label[for=view-trace]").click()
    page.reload()
    expect(page.locator("#f-text")).to_have_value("slow lowest")
    expect(page.locator("#f-merges")).to_have_value("108 111 256\n256 119 257\n101 115 258")
    expect(page.locator(".view-trace table.trace")).to_be_visible()  # the view too
    page.locator(".nav a", has_text="Train").click()
    expect(page).to_have_url(re.compile(r"/train"))
    page.go_back()
    expect(page.locator("#f-text")).to_have_value("slow lowest")
    expect(tokens(page)).to_have_count(6)
    query = parse_qs(urlparse(page.url).query)
    assert query["text"] == ["slow lowest"]  # the URL is the state: it can be bookmarked
    shot(page, "first-5-after-back")


def test_a_large_state_is_kept_as_a_local_draft(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    big = "the lowest lower slow " * 150  # 3,300 characters: too long for a URL
    page.fill("#f-text", big)
    expect(page.locator('[data-stat="chars"] dd')).to_have_text(f"{len(big):,}")
    expect(page).to_have_url(re.compile(r"/bytes\?draft=1$"))
    page.reload()
    expect(page.locator("#f-text")).to_have_value(big)
    expect(page.locator('[data-stat="chars"] dd')).to_have_text(f"{len(big):,}")
    shot(page, "first-5-draft-restored")


# --- 6. tokens ----------------------------------------------------------------------------


def _boxes_per_token(page: Page) -> list[int]:
    return tokens(page).evaluate_all("els => els.map(e => e.getClientRects().length)")


def test_hex_byte_tokens_are_never_split_across_lines(open_page):
    page = open_page("phone")
    page.goto("/bytes")
    page.fill("#f-merges", "")
    page.fill("#f-text", "é€🙂" * 12 + " over several lines")
    expect(page.locator("#tokens .hex").first).to_be_visible()
    assert tokens(page).count() > 60
    assert set(_boxes_per_token(page)) == {1}  # every token is one box, on one line
    # and the text inside a hex box is never cut: each hex box is one line high
    heights = page.locator("#tokens .hex").evaluate_all("els => els.map(e => e.getClientRects().length)")
    assert set(heights) == {1}
    shot(page, "first-6-hex-tokens-phone")


def test_group_labels_do_not_cover_other_tokens(open_page):
    page = open_page("phone")
    page.goto("/bytes?example=split-char")
    page.fill("#f-text", "café crème " * 8)
    expect(page.locator("#tokens .char-group").first).to_be_visible()
    overlaps = page.evaluate(
        """() => {
          const boxes = [...document.querySelectorAll('#tokens .tok')].map(e => e.getBoundingClientRect());
          let bad = 0;
          for (const label of document.querySelectorAll('#tokens .char-label')) {
            const r = label.getBoundingClientRect();
            for (const b of boxes) {
              if (r.left < b.right - 1 && b.left < r.right - 1 && r.top < b.bottom - 1 && b.top < r.bottom - 1) bad++;
            }
          }
          return bad;
        }"""
    )
    assert overlaps == 0
    shot(page, "first-6-group-labels-phone")


def test_neighbouring_tokens_never_share_a_hue(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    page.fill("#f-merges", "")
    page.fill("#f-text", "that cat sat at the mat; t t t")  # "t" and " " share a hue by id
    expect(tokens(page)).to_have_count(30)
    hues = tokens(page).evaluate_all("els => els.map(e => [...e.classList].find(c => c.startsWith('hue-')))")
    assert all(a != b for a, b in zip(hues, hues[1:])), hues
    colors = tokens(page).evaluate_all("els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert all(a != b for a, b in zip(colors, colors[1:]))
    shot(page, "first-6-neighbour-hues")


def _contrast(page: Page, selector: str) -> list[float]:
    """WCAG contrast of each mark's color against its token's background (from computed styles)."""
    return page.evaluate(
        """sel => {
          const lum = s => { const [r, g, b] = s.match(/[\\d.]+/g).slice(0, 3).map(Number).map(v => {
              v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
            return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
          return [...document.querySelectorAll(sel)].map(m => {
            const a = lum(getComputedStyle(m).color), b = lum(getComputedStyle(m.closest('.tok')).backgroundColor);
            return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
          });
        }""",
        selector,
    )


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_whitespace_marks_have_enough_contrast_on_every_hue(open_page, scheme: str):
    page = open_page("laptop", scheme)
    page.goto("/bytes")
    # twelve rules " a", " b", ... make ids 256..267, which cover all twelve hues
    letters = "abcdefghijkl"
    page.fill("#f-merges", "\n".join(f"32 {ord(c)} {256 + i}" for i, c in enumerate(letters)))
    page.fill("#f-text", "".join(" " + c for c in letters) + "\t\n")
    expect(tokens(page)).to_have_count(14)
    hues = set(tokens(page).evaluate_all("els => els.map(e => [...e.classList].find(c => c.startsWith('hue-')))"))
    assert len(hues) == 12
    ratios = _contrast(page, "#tokens .tok .mark")
    assert len(ratios) == 14
    assert min(ratios) >= 4.5, ratios
    shot(page, f"first-6-whitespace-marks-{scheme}")


# --- 7. phone and keyboard ------------------------------------------------------------------


def test_tapping_a_token_shows_its_details_next_to_it(open_page):
    page = open_page("phone")
    page.goto("/bytes")
    page.fill("#f-text", "low lower lowest low lower lowest")
    expect(tokens(page)).to_have_count(21)
    target = tokens(page).nth(9)
    target.tap()
    details = page.locator("#token-details")
    expect(details).to_be_visible()
    expect(details.locator('[data-field="pos"]')).to_have_text(re.compile(r"^token 10 "))
    tok, box = target.bounding_box(), details.bounding_box()
    assert in_viewport(page, "#token-details")
    # right under (or over) the token, not below every token
    assert abs(box["y"] - (tok["y"] + tok["height"])) < 20 or abs((box["y"] + box["height"]) - tok["y"]) < 20
    shot(page, "first-7-details-popover-phone")
    page.locator(".details-close").tap()
    expect(details).to_be_hidden()


def test_keyboard_reaches_the_first_token_in_two_keys(open_page):
    page = open_page("laptop")
    page.goto("/bytes?text=low+low&merges=108+111+256")
    expect(tokens(page)).to_have_count(5)  # lo w · lo w
    page.keyboard.press("Tab")
    expect(page.locator("[data-skip-tokens]")).to_be_focused()
    expect(page.locator("[data-skip-tokens]")).to_be_visible()
    shot(page, "first-7-skip-link")
    page.keyboard.press("Enter")
    expect(tokens(page).first).to_be_focused()
    details = page.locator("#token-details")
    expect(details).to_be_visible()
    page.keyboard.press("ArrowRight")
    expect(tokens(page).nth(1)).to_be_focused()
    page.keyboard.press("Escape")
    expect(details).to_be_hidden()


# --- 8. opening a file ------------------------------------------------------------------------


def test_one_drop_zone_opens_a_file_at_once_with_progress(open_page, tmp_path):
    from hf_samples import SAMPLE_CORPUS, byte_level_tokenizer

    path = tmp_path / "tokenizer.json"
    path.write_text(byte_level_tokenizer(SAMPLE_CORPUS).to_str(), encoding="utf-8")
    page = open_page("laptop")
    page.goto("/bytes")
    page.locator("#panel-file > summary").click()
    zone = page.locator("#open-tokenizer-file-field .dropzone")
    expect(zone).to_be_visible()
    native = page.locator("#f-tokenizer-file").bounding_box()
    assert native["width"] <= 1 and native["height"] <= 1  # no unstyled native control
    shot(page, "first-8-drop-zone")

    # a slow server (a big file): the progress bar shows while it works. The request is held until
    # the checks are done (held for a fixed 1.2 s, it could be answered before a busy machine looked).
    held: list = []
    page.route("**/files/open/bytes", lambda route: held.append(route))
    page.set_input_files("#f-tokenizer-file", str(path))
    expect(page.locator(".open-progress")).to_be_visible()
    expect(page.locator(".open-progress-note")).not_to_be_empty()
    shot(page, "first-8-progress")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_be_visible()
    expect(page.locator(".open-progress")).to_be_hidden()
    page.unroute("**/files/open/bytes")
    page.locator(".open-tokenizer-close").click()
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_have_count(0)

    # dropping a file on the zone opens it too
    content = path.read_text(encoding="utf-8")
    page.evaluate(
        """content => {
          const zone = document.querySelector('#open-tokenizer-file-field .dropzone');
          const data = new DataTransfer();
          data.items.add(new File([content], 'tokenizer.json', {type: 'application/json'}));
          zone.dispatchEvent(new DragEvent('drop', {dataTransfer: data, bubbles: true, cancelable: true}));
        }""",
        content,
    )
    expect(page.locator("#open-tokenizer-status .open-tokenizer-loaded")).to_contain_text("tokenizer.json")
    shot(page, "first-8-dropped")


# --- 9. big results -------------------------------------------------------------------------


def _corpus(n: int) -> str:
    import random

    rng = random.Random(7)
    syllables = ["lo", "w", "er", "est", "ne", "wi", "de", "st", "th", "an", "re", "on", "at", "en"]
    return " ".join("".join(rng.choice(syllables) for _ in range(rng.randint(1, 4))) for _ in range(n))


def test_train_keeps_its_actions_on_top_and_long_lists_collapsed(open_page):
    page = open_page("laptop")
    page.goto("/train")
    page.fill("#f-words", _corpus(3000))
    page.fill("#f-num_merges", "200")
    expect(page.locator('[data-stat="merges"] dd')).to_have_text("200", timeout=20_000)
    for selector in ("#carry-to-chars", '.export-button[data-format="hf"]'):
        assert in_viewport(page, selector), f"{selector} needs scrolling"
    expect(page.locator("#merge-list li:visible")).to_have_count(25)
    expect(page.locator("#steps-table tbody tr:visible")).to_have_count(25)
    height = page.evaluate("document.documentElement.scrollHeight")
    assert height < 4000, height
    shot(page, "first-9-train-200-merges", full=True)
    page.locator("label[for=show-all-steps]").click()
    expect(page.locator("#steps-table tbody tr:visible")).to_have_count(200)
    # "Open in Characters" is a link: the URL holds the state, a reload asks nothing
    page.locator("#carry-to-chars").click()
    expect(page).to_have_url(re.compile(r"/chars\?text="))
    expect(tokens(page).first).to_be_visible()  # (the URL changes before the new page is drawn)
    count = tokens(page).count()
    assert count > 0
    page.reload()
    expect(tokens(page)).to_have_count(count)


def test_a_long_trace_shows_windows_around_what_each_pass_changed(open_page):
    page = open_page("laptop")
    text = "the lower slow lowest tower " * 1850  # 49,950 characters
    page.goto("/bytes")
    page.fill("#f-merges", "108 111 256\n256 119 257\n101 114 258\n32 116 259\n257 258 260")
    page.fill("#f-text", text)
    expect(page.locator('[data-stat="chars"] dd')).to_have_text(f"{len(text):,}", timeout=20_000)
    page.locator("label[for=view-trace]").click()
    rows = page.locator(".view-trace tbody tr")
    # start + 5 passes + the result: the last pass shows a window, so the table ends with the tokens
    expect(rows).to_have_count(7, timeout=20_000)
    expect(rows.last).to_contain_text("result")
    expect(page.locator(".view-trace")).not_to_contain_text("sequence too long to show")
    for k in range(1, 6):
        row = rows.nth(k)
        expect(row.locator(".window-note")).to_contain_text("around byte")
        assert row.locator(".chip-changed").count() >= 1  # what this pass made is marked
        assert row.locator(".chip").count() <= 25
    shot(page, "first-9-trace-windows")


# --- 10. small things ------------------------------------------------------------------------


def test_chart_ticks_bars_and_phone_labels(open_page):
    page = open_page("phone")
    page.goto("/train?example=low")
    ticks = page.locator(".chart text.axis").evaluate_all("els => els.map(e => e.textContent)")
    numbers = [int(t) for t in ticks if t.isdigit()]
    assert numbers == [0, 1, 2, 3]  # every count of a tiny example, no 3/1/0
    widths = page.locator(".chart rect.bar").evaluate_all("els => els.map(e => +e.getAttribute('width'))")
    assert len(widths) == 2 and max(widths) <= 36
    label_px = page.locator(".chart text.axis").first.evaluate("e => e.getBoundingClientRect().height")
    assert label_px >= 9, label_px  # readable once the chart is scaled to a phone
    shot(page, "first-10-chart-phone", full=True)


def test_error_messages_show_code_not_backticks(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    page.fill("#f-merges", "108 111")
    error = page.locator("#error-merges")
    expect(error).to_contain_text("expected three numbers")
    expect(error.locator("code").first).to_have_text("108 111 256")
    assert "`" not in error.inner_text()
    shot(page, "first-10-error-code")


# --- 11. speed: no request storms --------------------------------------------------------------


def test_fast_typing_sends_few_requests_one_at_a_time(open_page):
    page = open_page("laptop")
    page.goto("/bytes")
    page.evaluate(
        """() => { window.__flight = 0; window.__most = 0; window.__sent = 0;
          document.addEventListener('htmx:beforeRequest', () => { window.__sent++; window.__flight++;
            window.__most = Math.max(window.__most, window.__flight); });
          document.addEventListener('htmx:afterRequest', () => { window.__flight--; }); }"""
    )
    page.locator("#f-text").focus()
    page.keyboard.press("End")
    page.keyboard.type(" lower lowest slow", delay=15)
    expect(page.locator('[data-stat="chars"] dd')).to_have_text(str(len("low lower lowest slow")))
    sent, most = page.evaluate("[window.__sent, window.__most]")
    assert most == 1, most  # never two live updates at once
    # No debounce any more (issue #20): a key pressed while an update is in flight
    # waits, and only the last one waiting is sent, so never more requests than keys.
    assert sent <= 18, sent
    shot(page, "first-11-after-fast-typing")


# --- 4b. a view picked while an answer is in flight stays picked -----------------


def test_a_view_picked_while_an_update_is_in_flight_survives_the_swap(open_page):
    """Typing sends the state with the Tokens view; clicking Trace before that
    answer lands must not be undone when it is swapped in."""
    page = open_page()
    page.goto("/bytes")
    page.fill("#f-text", "hello")
    expect(tokens(page).first).to_be_visible()
    held: list[Any] = []
    holding = [True]
    page.route("**/fragments/bytes", lambda route: held.append(route) if holding[0] else route.continue_())
    page.fill("#f-text", "hello world")  # its answer is held back
    deadline = time.monotonic() + 5
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the typed update was never sent"
    typed = held.pop()
    page.locator("#results label.tab", has_text="Trace").click()
    assert page.locator('#results input.tab-radio[value="trace"]').is_checked()
    # The click asks for the trace; its answer lands first, then the typed one (rendered with the
    # Tokens view and no trace) lands over it: the page must ask for the trace again by itself.
    deadline = time.monotonic() + 5
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "choosing the Trace asked nothing"
    held.pop().continue_()
    expect(page.locator("#results .view-trace table.trace")).to_be_attached()
    holding[0] = False  # (the page's own second ask goes through)
    typed.continue_()
    expect(page.locator("#tokens")).to_contain_text("world")
    expect(page.locator('#results input.tab-radio[value="trace"]')).to_be_checked()
    expect(page.locator("#results .view-trace .trace-pending")).to_have_count(0)
    expect(page.locator("#results .view-trace table.trace")).to_be_visible()
    page.unroute("**/fragments/bytes")
    shot(page, "first-4-view-kept-after-swap")
