"""What a keystroke's answer carries (issue #20, "send only what is shown").

A live update of a short text is small: the Tokens view and the stats, not
the Trace table or a long Ids box nobody is looking at; those come when their
view is chosen (the tabs post the view). A long text sends one page of spans.
The same holds for full pages (the form's `view` field), so the pages work
without JavaScript.
"""

from __future__ import annotations

import re

from webapp.web.playground.compute import IDS_INLINE

SHORT = "The quick brown fox jumps over the lazy dog"
HX = {"HX-Request": "true"}


def _fragment(client, **form):
    data = {"text": SHORT, "tokenizer": "cl100k_base", "pretokenize": "cl100k", "view": "tokens", **form}
    return client.post("/fragments/bytes", data=data, headers=HX)


def test_a_short_keystroke_answer_is_small_and_carries_no_trace(client):
    response = _fragment(client)
    html = response.get_data(as_text=True)
    assert len(response.data) <= 15 * 1024, len(response.data)
    assert 'class="trace"' not in html and "trace-pending" in html
    assert html.count('class="tok ') == 9
    assert re.search(r"app;dur=[0-9.]+, cpu;dur=[0-9.]+", response.headers["Server-Timing"])


def test_the_trace_comes_when_its_view_is_chosen(client):
    html = _fragment(client, view="trace").get_data(as_text=True)
    assert '<table class="trace">' in html and "trace-pending" not in html
    page = client.get("/bytes?tokenizer=cl100k_base&view=trace&text=" + SHORT.replace(" ", "+")).get_data(as_text=True)
    assert '<table class="trace">' in page  # a full page (no JavaScript) too


def test_a_long_ids_list_comes_with_the_ids_view(client):
    text = "ab " * (IDS_INLINE + 10)
    html = _fragment(client, text=text).get_data(as_text=True)
    assert 'id="ids-output"' not in html and "ids-pending" in html
    html = _fragment(client, text=text, view="ids").get_data(as_text=True)
    assert 'id="ids-output"' in html


def test_chars_page_sends_its_trace_only_with_the_trace_view(client):
    form = {"text": "lower", "merges": "l o\nlo w", "vocab": "l 0\no 1\nw 2\ne 3\nr 4\nlo 5\nlow 6", "view": "tokens"}
    html = client.post("/fragments/chars", data=form, headers=HX).get_data(as_text=True)
    assert 'class="trace"' not in html and "trace-pending" in html
    html = client.post("/fragments/chars", data={**form, "view": "trace"}, headers=HX).get_data(as_text=True)
    assert '<table class="trace">' in html
