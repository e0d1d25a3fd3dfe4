"""Which tokens some text gives, over HTTP: the answer's new fields, a card's witness and its link to
Bytes (the token outlined), the page's heading, and typed rules answered inline."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from tests.conftest import make_app
from webapp.infra.storage import get_storage
from webapp.tokenizer import is_installed, reference


@pytest.fixture
def inline(tmp_path):
    app = make_app(tmp_path, JOB_VOCAB_TOKENS=10**9)
    yield app.test_client()
    get_storage(app).dispose()


def test_typed_rules_are_decided_inline(inline) -> None:
    # "bc" fires first, so "abc" (ab + c) never forms; "\n//" only after punctuation under o200k
    body = inline.post("/api/unreachable", json={"merges": [[98, 99, 256], [97, 98, 257], [257, 99, 258]]}).get_json()
    assert body["groups"]["inside"] == [] and body["groups"]["unused"] == [258]
    assert 258 in body["ids"] and body["count"] == len(body["ids"]) and body["undecided"] == []
    for key, text in body["witnesses"].items():  # (the half-character bytes, inside whole characters)
        assert int(key) in reference.encode(text, [[98, 99, 256], [97, 98, 257], [257, 99, 258]])
    split = inline.post("/api/unreachable", json={"merges": [[10, 47, 256], [256, 47, 257]],
                                                  "pretokenize": "o200k"}).get_json()
    assert "\n//" in split["witnesses"]["257"] and split["witnesses"]["257"] != "\n//"


@pytest.mark.parametrize("body, field", [({}, "merges"), ({"merges": "x"}, "merges"),
                                         ({"merges": [], "pretokenize": "nope"}, "pretokenize")])
def test_bad_typed_rules_are_400s_naming_the_field(inline, body, field) -> None:
    response = inline.post("/api/unreachable", json=body)
    assert response.status_code == 400 and response.get_json()["error"]["field"] == field


def test_typed_rules_past_the_inline_bound_are_refused(tmp_path) -> None:
    app = make_app(tmp_path, JOB_VOCAB_TOKENS=3)
    client = app.test_client()
    rules = [[97, 98, 256], [256, 99, 257], [257, 100, 258], [258, 101, 259]]
    response = client.post("/api/unreachable", json={"merges": rules})
    assert response.status_code == 400 and response.get_json()["error"]["field"] == "merges"
    assert client.post("/api/unreachable", json={"merges": rules[:3]}).status_code == 200
    get_storage(app).dispose()


@pytest.mark.slow
@pytest.mark.skipif(not is_installed("o200k_base"), reason="the o200k_base preset is not installed")
def test_a_card_shows_the_witness_and_links_it_to_bytes(inline) -> None:
    card = inline.get("/api/tokenizers/o200k_base/vocab/3413").get_json()  # b" I'"
    assert card["text"] == " I'" and card["status"] == "reachable" and card["own"] is False
    assert card["self_ids"] != [3413] and " I'" in card["witness"]
    page = inline.get("/vocab?tokenizer=o200k_base&token=3413").get_data(as_text=True)
    assert 'data-status="reachable"' in page and 'data-fact="witness-link"' in page
    link = page.split('data-fact="witness-link"')[0].rsplit('href="', 1)[1].split('"')[0].replace("&amp;", "&")
    query = parse_qs(urlsplit(link).query)
    assert query["mark"] == ["3413"] and query["text"] == [card["witness"]] and query["tokenizer"] == ["o200k_base"]
    bytes_page = inline.get(link).get_data(as_text=True)
    marked = bytes_page.split("tok-marked")[1].split(">")[0]
    assert 'data-token-id="3413"' in marked
    special = inline.get("/vocab?tokenizer=o200k_base&token=199999").get_data(as_text=True)
    assert 'data-status="unreachable"' in special and 'data-group="special"' in special


@pytest.mark.skipif(not is_installed("r50k_base"), reason="the r50k_base preset is not installed")
def test_the_heading_counts_what_is_proven(inline) -> None:
    answer = inline.get("/api/tokenizers/r50k_base/unreachable").get_json()
    page = inline.get("/vocab?tokenizer=r50k_base").get_data(as_text=True)
    heading = page.split('id="reach-count">')[1].split("</p>")[0]
    assert f"{answer['count']} unreachable" in heading and f"{len(answer['witnesses'])} only inside other text" in heading
    assert "undecided" not in heading  # (none: nothing to say)
    assert 'data-group="not_utf8"' in page and 'data-group="witnesses"' in page
