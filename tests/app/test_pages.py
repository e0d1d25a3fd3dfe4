"""The tool pages through Flask's test client: full pages, fragments, examples, errors."""

from __future__ import annotations

import html as html_lib
import re
from urllib.parse import parse_qs, urlparse

import pytest

from tests.conftest import make_app
from webapp.web.playground import examples
from webapp.web.playground import compute as page_compute
from webapp.web.playground import fields as page_fields
from webapp.web.playground import pages
from webapp.web.common import tools

SEED_BYTES = {"text": "low", "merges": "[[108,111,256],[256,119,257]]", "ids": "257",
              "vocab": '{"256":[108,111],"257":[108,111,119]}'}
SEED_CHARS = {"text": "lower", "merges": examples.SEED_CHAR_MERGES, "vocab": examples.SEED_CHAR_VOCAB}


def token_ids(html: str) -> list[int]:
    """data-token-id of every token span inside the #tokens area."""
    area = html.split('id="tokens"', 1)[1].split("</div>", 1)[0]
    return [int(x) for x in re.findall(r'class="tok [^"]*"[^>]*?data-token-id="(\d+)"', area)]


def field_error(html: str, name: str) -> str:
    match = re.search(rf'<p class="field-error" id="error-{name}"[^>]*>(.*?)</p>', html, re.S)
    assert match, f"no error slot for {name}"
    return html_lib.unescape(match.group(1))


@pytest.mark.parametrize("url", ["/", "/bytes", "/chars", "/train"])
def test_every_page_renders_with_navigation(client, url):
    r = client.get(url)
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    for link in ('href="/bytes"', 'href="/chars"', 'href="/train"'):
        assert link in html
    assert "/vendor/htmx.min.js" in html and 'name="htmx-config"' in html


def test_first_visit_shows_the_seed_example_computed(client):
    html = client.get("/bytes").get_data(as_text=True)
    assert token_ids(html) == [257]
    assert 'id="decoded-text"' in html and ">low</output>" in html
    assert 'data-ok="true"' in html  # the round-trip badge


@pytest.mark.parametrize("tool", tools.TOOLS)
def test_every_example_is_one_click_and_computes(client, tool):
    for example in examples.EXAMPLES[tool]:
        html = client.get(f"/{tool}?example={example.key}").get_data(as_text=True)
        errors = {name: field_error(html, name) for name in page_fields.ERROR_FIELDS[tool]}
        if (tool, example.key) == ("chars", "missing"):
            assert "not in the vocab" in errors["vocab"]
        else:
            assert not any(errors.values()), (example.key, errors)
        assert f'href="/{tool}?example={example.key}"' in html


@pytest.mark.parametrize(
    "tool, example, expected",
    [("bytes", "low", [257]), ("bytes", "aaa", [256, 97]), ("chars", "lower", [8])],
)
def test_seed_examples_give_the_seed_answers(client, tool, example, expected):
    assert token_ids(client.get(f"/{tool}?example={example}").get_data(as_text=True)) == expected


@pytest.mark.parametrize("example, merges", [("low", '["lo", "low"]'), ("aaa", '["aa", "aaa"]')])
def test_train_seed_examples(client, example, merges):
    html = client.get(f"/train?example={example}").get_data(as_text=True)
    assert f'data-merges="{merges.replace(chr(34), "&#34;")}"' in html


def test_unknown_example_is_a_404_page(client):
    r = client.get("/bytes?example=nope")
    assert r.status_code == 404 and "text/html" in r.content_type


def test_a_normal_post_renders_the_full_page_with_every_field_kept(client):
    state = dict(SEED_BYTES, merges="[[108, 111, 256],\n [256, x]]", text="lo<w>\n", pretokenize="none", view="trace")
    html = client.post("/bytes", data=state).get_data(as_text=True)
    assert "<html" in html
    assert field_error(html, "merges").startswith("merges: invalid JSON at line 2, column 8")
    # Every field keeps what was typed (escaped), the chosen view too.
    assert "[[108, 111, 256],\n [256, x]]</textarea>" in html
    assert "lo&lt;w&gt;\n</textarea>" in html
    assert 'name="view" value="trace" form="tool-form"' in html  # the chosen view rides along while results are hidden
    assert '<option value="none" selected>' in html


def test_a_textarea_value_starting_with_a_newline_survives(client):
    html = client.post("/bytes", data=dict(SEED_BYTES, text="\nlow")).get_data(as_text=True)
    assert 'placeholder="Type any text…">\n\nlow</textarea>' in html


def test_fragment_returns_results_and_out_of_band_error_slots(client):
    r = client.post("/fragments/bytes", data=dict(SEED_BYTES, merges="1 2"))
    html = r.get_data(as_text=True)
    assert r.status_code == 200 and "<html" not in html
    assert 'id="error-merges" role="alert" hx-swap-oob="true">merges: line 1: expected three numbers' in html
    assert 'id="error-text" role="alert" hx-swap-oob="true"></p>' in html  # cleared
    assert 'id="decode-result" class="decode-result" aria-live="polite" hx-swap-oob="true"' in html
    ok = client.post("/fragments/bytes", data=SEED_BYTES).get_data(as_text=True)
    assert token_ids(ok) == [257]


@pytest.mark.parametrize(
    "tool, state, fields",
    [
        ("chars", SEED_CHARS, ["text", "merges", "vocab"]),
        ("train", {"words": "low lower lowest", "num_merges": "2"}, ["words", "num_merges"]),
    ],
)
def test_other_fragments(client, tool, state, fields):
    html = client.post(f"/fragments/{tool}", data=state).get_data(as_text=True)
    assert "<html" not in html
    # Results, and every error slot swapped in empty (an error fragment fails here).
    for field in fields:
        assert f'id="error-{field}" role="alert" hx-swap-oob="true"></p>' in html
    if tool == "chars":
        assert token_ids(html) == [8]
    else:
        assert 'data-merges="[&#34;lo&#34;, &#34;low&#34;]"' in html


def test_unknown_fragment_is_404(client):
    assert client.post("/fragments/nope", data={}).status_code == 404


def test_token_text_is_escaped(client):
    html = client.post("/bytes", data={"text": "<script>alert(1)</script><b>x</b>", "merges": "60 98 256\n256 62 257"}).get_data(as_text=True)
    assert "<script>alert" not in html and "<b>x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;</span>" in html  # the token "<b>" as text


def test_whitespace_marks_and_real_line_breaks(client):
    html = client.post("/bytes", data={"text": "a b\tc\r\nd", "merges": ""}).get_data(as_text=True)
    area = html.split('id="tokens"', 1)[1]
    assert '<span class="mark">·</span>' in area and '<span class="mark">→</span>' in area
    # the mark inside the token's box, then a line break after the box (a token is never cut in two)
    assert '<span class="mark">↵</span></span><br class="tok-break">' in area
    assert token_ids(html) == [97, 32, 98, 9, 99, 10, 100]  # CRLF typed in a form is one newline


def test_token_details_are_on_every_span(client):
    html = client.get("/bytes").get_data(as_text=True)
    span = re.search(r'<span class="tok[^>]*>', html).group(0)
    for attr in ('data-token-id="257"', 'data-hex="6C 6F 77"', 'data-pos="token 1 · bytes 0–3"', "data-tree=", 'data-text="low"'):
        assert attr in span


def test_invalid_utf8_bytes_show_in_hex_and_are_grouped(client):
    html = client.get("/bytes?example=split-char").get_data(as_text=True)
    assert '<span class="hex">C3</span>' in html
    assert 'class="char-group" data-chars="fé "' in html


@pytest.mark.parametrize(
    "state, field, words",
    [
        ({"ids": "999", "vocab": ""}, "ids", "id 999 at position 1"),
        ({"ids": "195 40", "vocab": ""}, "ids", "byte offset 0"),
        ({"ids": "1 x", "vocab": ""}, "ids", "line 1, column 3"),
        ({"ids": "256", "vocab": '{"256": [300]}'}, "vocab", "vocab: token 256 should be a list of byte values 0..255, got [300]"),
        ({"ids": "256", "vocab": '{"256": [1,}'}, "vocab", "invalid JSON at line 1"),
    ],
)
def test_decode_errors_beside_the_field(client, state, field, words):
    html = client.post("/bytes", data=dict(SEED_BYTES, **state)).get_data(as_text=True)
    assert words in field_error(html, field)
    assert token_ids(html) == [257]  # the encode side still works


def test_round_trip_badge_fails_for_lists_that_redefine_an_id(client):
    # Rule 2 redefines 256, so the implied vocab cannot spell "ab" back.
    html = client.post("/bytes", data={"text": "ab cd", "merges": "97 98 256\n99 100 256"}).get_data(as_text=True)
    assert 'data-ok="false"' in html


def test_chars_missing_vocab_entry_names_token_and_place(client):
    html = client.get("/chars?example=missing").get_data(as_text=True)
    message = field_error(html, "vocab")
    assert '"s"' in message and "is not in the vocab" in message
    assert 'class="tok hue-none tok-missing"' in html


def test_chars_seed_and_trace(client):
    html = client.post("/chars", data=dict(SEED_CHARS, view="trace")).get_data(as_text=True)
    assert token_ids(html) == [8]
    assert "rule 4: low er → lower" in html


def test_train_page_shows_steps_chart_words_and_carry_button(client):
    html = client.post("/train", data={"words": "low lower lowest", "num_merges": "2"}).get_data(as_text=True)
    assert "<svg" in html and html.count('<rect class="bar') == 2
    assert 'id="steps-table"' in html and 'id="word-list"' in html
    # "Open in Characters" is a GET link: the URL carries the state (shareable, reloadable)
    href = html_lib.unescape(re.search(r'<a class="button primary" id="carry-to-chars" href="([^"]+)"', html).group(1))
    assert href.startswith("/chars?")
    assert parse_qs(urlparse(href).query)["merges"] == ["l o\nlo w"]
    chars = client.get(href).get_data(as_text=True)
    assert field_error(chars, "vocab") == "" and field_error(chars, "merges") == ""
    texts = re.findall(r'class="tok [^"]*"[^>]*?data-text="([^"]*)"', chars)
    assert [html_lib.unescape(t) for t in texts] == ["low", "·", "low", "e", "r", "·", "low", "e", "s", "t"]
    assert len(set(token_ids(chars))) == 6  # low, space, e, r, s, t each have an id


def test_train_tie_is_explained(client):
    html = client.post("/train", data={"words": "ab ba", "num_merges": "1"}).get_data(as_text=True)
    assert "tie at 1" in html and "runners-up" in html


@pytest.mark.parametrize(
    "state, field, words",
    [
        ({"words": "a b", "num_merges": "ten"}, "num_merges", "whole number"),
        ({"words": "a b", "num_merges": "-1"}, "num_merges", "non-negative"),
        ({"words": '["a", 1]', "num_merges": "1"}, "words", "words: word 2 should be a string, got 1"),
        ({"words": "a", "num_merges": "1000000000"}, "num_merges", "limit of 50,000"),
    ],
)
def test_train_errors(client, state, field, words):
    html = client.post("/train", data=state).get_data(as_text=True)
    assert words in field_error(html, field)


def test_large_inputs_render_a_bounded_number_of_spans(tmp_path):
    app = make_app(tmp_path, RENDER_MAX_TOKENS=50)
    client = app.test_client()
    html = client.post("/bytes", data={"text": "ab" * 100, "merges": ""}).get_data(as_text=True)
    assert "Showing tokens 1–50 of 200" in html
    assert len(token_ids(html)) == 50
    ids = html.split('id="ids-output"', 1)[1].split(">", 1)[1].split("</textarea>", 1)[0]
    assert len(ids.split()) == 200  # the full ids are still there
    # the next page, as its button posts it (without JavaScript too)
    page2 = client.post("/bytes", data={"text": "ab" * 100, "merges": "", "tokens_from": "50"}).get_data(as_text=True)
    assert "Showing tokens 51–100 of 200" in page2 and len(token_ids(page2)) == 50
    assert 'name="tokens_from" value="0"' in page2 and 'name="tokens_from" value="100"' in page2
    last = client.post("/bytes", data={"text": "ab" * 100, "merges": "", "tokens_from": "999999"}).get_data(as_text=True)
    assert "Showing tokens 151–200 of 200" in last  # past the end: the last page
    odd = client.post("/bytes", data={"text": "ab" * 100, "merges": "", "tokens_from": "x"}).get_data(as_text=True)
    assert "Showing tokens 1–50 of 200" in odd


def test_ids_download(client):
    r = client.post("/bytes/ids.txt", data={"text": "aaa", "merges": "97 97 256"})
    assert r.get_data(as_text=True) == "256 97\n" and "attachment" in r.headers["Content-Disposition"]
    r = client.post("/chars/ids.txt", data=SEED_CHARS)
    assert r.get_data(as_text=True) == "8\n"
    assert client.post("/bytes/ids.txt", data={"text": "a", "merges": "x"}).status_code == 400


def test_ids_download_follows_the_pretokenization(client):
    # "a b" with a rule joining "a" and " ": GPT-2's pattern puts them in different pieces.
    form = {"text": "a b", "merges": "97 32 256"}
    assert client.post("/bytes/ids.txt", data=form).get_data(as_text=True) == "256 98\n"
    assert client.post("/bytes/ids.txt", data={**form, "pretokenize": "gpt2"}).get_data(as_text=True) == "97 32 98\n"


def test_pretokenize_shows_pieces(client):
    html = client.post("/bytes", data={"text": "low low", "merges": "108 111 256\n32 256 257", "pretokenize": "gpt2"}).get_data(as_text=True)
    assert "2 pre-tokens<" in html and html.count('class="pretoken-sep"') == 1
    bad = client.post("/bytes", data={"text": "a", "merges": "", "pretokenize": "bert"}).get_data(as_text=True)
    assert "expected one of none, gpt2, cl100k" in field_error(bad, "pretokenize")


def test_get_with_query_fields_prefills(client):
    html = client.get("/chars?text=lo&merges=l+o&vocab=lo+5&view=ids").get_data(as_text=True)
    assert token_ids(html) == [5]
    assert 'id="view-ids" value="ids" form="tool-form" checked' in html


def test_render_tool_page_equals_a_post(app, client):
    state = dict(SEED_BYTES, view="ids")
    posted = client.post("/bytes", data=state).get_data(as_text=True)
    with app.test_request_context("/s/x"):
        rendered = pages.render_tool_page("bytes", state)
    assert token_ids(rendered) == token_ids(posted) == [257]
    assert 'id="view-ids" value="ids" form="tool-form" checked' in rendered


def test_html_error_pages(client):
    r = client.get("/nowhere")
    assert r.status_code == 404 and "Page not found" in r.get_data(as_text=True)
    r = client.delete("/bytes")
    assert r.status_code == 405 and "Method not allowed" in r.get_data(as_text=True)


def test_unexpected_errors_are_a_generic_page_without_a_trace(tmp_path):
    app = make_app(tmp_path, PROPAGATE_EXCEPTIONS=False)

    def boom():
        raise RuntimeError("secret detail")

    app.add_url_rule("/boom", "boom", boom)
    app.add_url_rule("/api/boom", "api_boom", boom)
    client = app.test_client()
    r = client.get("/boom")
    assert r.status_code == 500 and "secret detail" not in r.get_data(as_text=True)
    r = client.get("/api/boom")
    assert r.status_code == 500 and r.get_json() == {"error": {"message": "server: unexpected error (it has been logged)", "field": "server"}}


_INLINE = [
    re.compile(r"<script(?![^>]*\bsrc=)[^>]*>"),  # inline script
    re.compile(r"<style"),
    re.compile(r"\sstyle="),
    re.compile(r"\son[a-z]+="),
    re.compile(r"hx-on"),
]


@pytest.mark.parametrize(
    "url", ["/", "/bytes", "/chars", "/train?example=corpus", "/bytes?example=split-char", "/chars?example=missing", "/nowhere"]
)
def test_pages_have_nothing_inline_the_csp_would_block(client, url):
    html = client.get(url).get_data(as_text=True)
    for pattern in _INLINE:
        assert not pattern.search(html), (url, pattern.pattern)


def test_parse_errors_show_the_line_with_a_caret(client):
    html = client.post("/bytes", data=dict(SEED_BYTES, merges="108 111 256\n256 1x9 257")).get_data(as_text=True)
    message = field_error(html, "merges")
    assert message.startswith('merges: line 2, column 5: expected an integer, got "1x9"')
    assert '<code class="error-snippet">2 │ 256 1x9 257\n        ^</code>' in html


def test_error_snippet_windows_long_lines():
    line = "x" * 500
    shown, caret = page_compute.error_snippet(line, {"line": 1, "column": 300}, width=60)
    assert shown.startswith("1 │ …") and shown.endswith("…") and len(shown) < 80
    assert caret.index("^") == shown.index("x") + 30  # the window starts at column 270: the caret is under column 300
    assert page_compute.error_snippet("a", {"rule": 1}) is None


def test_training_many_merges_keeps_the_page_bounded(tmp_path):
    app = make_app(tmp_path, RENDER_MAX_TOKENS=20, TRACE_MAX_STEPS=5)
    words = " ".join(f"w{i:03d}x" for i in range(400))
    html = app.test_client().post("/train", data={"words": words, "num_merges": "60"}).get_data(as_text=True)
    assert "Showing the first 20 of 60 merges" in html
    assert html.split('id="merge-list"', 1)[1].split("</ol>", 1)[0].count("<li") == 20
    assert "Details for the first 5 of 60 steps" in html
    assert html.split('id="steps-table"', 1)[1].split("</table>", 1)[0].count("<tr") == 6  # header + 5
    href = html_lib.unescape(re.search(r'id="carry-to-chars" href="([^"]+)"', html).group(1))
    assert len(parse_qs(urlparse(href).query)["merges"][0].splitlines()) == 60  # the link carries all of them


def test_add_missing_tokens_to_the_vocab(client):
    state = dict(SEED_CHARS, text="lowest", action="add-missing")
    html = client.post("/chars", data=state).get_data(as_text=True)
    assert field_error(html, "vocab") == ""
    assert '&#34;s&#34;: 9, &#34;t&#34;: 10}</textarea>' in html  # appended after the highest id (8)
    assert token_ids(html) == [7, 3, 9, 10]  # low e s t
    fragment = client.post("/fragments/chars", data=state).get_data(as_text=True)
    assert 'id="field-vocab" hx-swap-oob="true"' in fragment
    assert fragment.count('id="error-vocab"') == 1
    # Without the button the vocab is left exactly as typed.
    plain = client.post("/fragments/chars", data=dict(SEED_CHARS, text="lowest")).get_data(as_text=True)
    assert 'id="field-vocab"' not in plain and 'id="add-missing"' in plain


def test_decode_these_ids_fills_the_decode_panel(client):
    state = {"text": "lowlow é", "merges": "108 111 256\n256 119 257", "ids": "", "vocab": "", "action": "fill-decode"}
    html = client.post("/bytes", data=state).get_data(as_text=True)
    assert "257 257 32 195 169</textarea>" in html
    assert "{&#34;257&#34;: [108, 111, 119]}</textarea>" in html  # only the ids the encoding uses
    assert '<output class="decoded-text" id="decoded-text" for="f-ids f-vocab">lowlow<span class="mark">·</span>é</output>' in html
    fragment = client.post("/fragments/bytes", data=state).get_data(as_text=True)
    assert 'id="field-ids" hx-swap-oob="true"' in fragment and 'id="field-vocab" hx-swap-oob="true"' in fragment
    assert fragment.count('id="error-ids"') == 1
    broken = client.post("/fragments/bytes", data=dict(state, merges="1 x")).get_data(as_text=True)
    assert 'id="field-ids"' not in broken  # nothing to fill while the merges are broken
