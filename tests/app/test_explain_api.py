"""The explain routes: answers that agree with the encode routes, and clear 4xx naming the field."""

from __future__ import annotations

import pytest

from webapp.tokenizer import is_installed

LOWEST = [[108, 111, 256], [119, 101, 257], [257, 115, 258], [258, 116, 259], [256, 119, 260]]


def test_typed_merges_are_explained(client):
    r = client.post("/api/explain", json={"text": "lowest", "merges": LOWEST})
    assert r.status_code == 200
    body = r.get_json()
    encoded = client.post("/api/encode", json={"text": "lowest", "merges": LOWEST}).get_json()
    assert body["ids"] == encoded["ids"]
    assert [(t["start"], t["end"]) for t in body["tokens"]] == [(t["start"], t["end"]) for t in encoded["tokens"]]
    (b,) = body["boundaries"]
    assert b["cause"] == "blocked" and b["at"] == 2
    assert b["would_join"] == {"index": 4, "left": 256, "right": 119, "new": 260, "text": ["lo", "w", "low"]}
    assert b["taken_by"]["index"] == 1 and b["taken_by"]["took"] == "right"


def test_aaa_is_an_overlap_and_the_story_is_told(client):
    r = client.post("/api/explain", json={"text": "aaa", "merges": [[97, 97, 256]], "story": 0})
    body = r.get_json()
    assert body["ids"] == [256, 97]
    assert body["boundaries"][0]["cause"] == "overlap"
    rule = {"index": 0, "left": 97, "right": 97, "new": 256, "text": ["a", "a", "aa"]}
    assert body["story"] == [
        {"text": ["a", "a"], "left": 97, "right": 97, "from": -1, "made": None, "until": 0, "took": "left",
         "taken_text": ["a", "a"], "rule": rule, "taken_by": rule, "candidate": True},
        {"text": ["aa", "a"], "left": 256, "right": 97, "from": 0, "made": "left", "until": None, "took": None,
         "rule": None, "made_by": rule},
    ]
    assert body["story_piece"] == {"start": 0, "end": 3}


@pytest.mark.parametrize("level", [["chars"], {"chars": 1}, "words", 3])
def test_a_level_other_than_bytes_or_chars_is_a_400_naming_the_field(client, level):
    r = client.post("/api/explain", json={"text": "lowest", "merges": LOWEST, "level": level})
    assert r.status_code == 400
    assert r.get_json()["error"]["field"] == "level"
    assert 'expected "bytes" or "chars"' in r.get_json()["error"]["message"]


def test_characters_are_explained_in_code_points(client):
    vocab = {"l": 0, "o": 1, "w": 2, "lo": 3, "é": 4}
    r = client.post("/api/explain", json={"text": "éloé", "merges": [["l", "o"]], "vocab": vocab, "level": "chars"})
    body = r.get_json()
    assert body["ids"] == [4, 3, 4] and body["unit"] == "chars"
    assert [b["at"] for b in body["boundaries"]] == [1, 3]


@pytest.mark.parametrize("name", ["cl100k_base", "llama3"])
def test_presets_agree_with_their_encode_route(client, name):
    if not is_installed(name):
        pytest.skip(f"{name} is not installed here")
    text = "Hello lowest  world <|endoftext|>1234567 naïve"
    explained = client.post(f"/api/tokenizers/{name}/explain", json={"text": text}).get_json()
    encoded = client.post(f"/api/tokenizers/{name}/encode", json={"text": text}).get_json()
    assert explained["ids"] == encoded["ids"]
    assert [(t["start"], t["end"]) for t in explained["tokens"]] == [(t["start"], t["end"]) for t in encoded["tokens"]]
    assert len(explained["boundaries"]) == len(encoded["ids"]) - 1


@pytest.mark.parametrize("body, field, status", [
    ({"text": "a", "merges": [[97, 97]]}, "merges", 400),
    ({"text": 3, "merges": []}, "text", 400),
    ({"text": "ab", "merges": [], "story": 5}, "story", 400),
    ({"text": "ab", "merges": [], "story": -1}, "story", 400),
    ({"text": "ab", "merges": [], "story": True}, "story", 400),
    ({"text": "ab", "merges": [], "story": "\u00b2"}, "story", 400),  # a digit to str.isdigit, not to int
    ({"text": "ab", "merges": [], "story": "9" * 5000}, "story", 400),  # over int()'s digit limit
    ({"text": "ab", "merges": [], "level": "words"}, "level", 400),
    ({"text": "ab", "merges": [], "vocab": {}}, "vocab", 400),
    ({"text": "ab", "merges": [["a", "b"]], "vocab": {"a": 0}, "level": "chars"}, "vocab", 400),
    ({"text": "ab", "merges": [], "pretokenize": "words"}, "pretokenize", 400),
    ({"text": "ab", "merges": [], "colour": 1}, "colour", 400),
])
def test_bad_input_names_the_field(client, body, field, status):
    r = client.post("/api/explain", json=body)
    assert r.status_code == status
    assert r.get_json()["error"]["field"] == field


def test_the_size_limit_is_checked_first(tmp_path):
    from tests.conftest import make_app

    app = make_app(tmp_path, LIMIT_EXPLAIN_BYTES=10)
    r = app.test_client().post("/api/explain", json={"text": "é" * 6, "merges": []})
    assert r.status_code == 400
    error = r.get_json()["error"]
    assert error["field"] == "text" and "LIMIT_EXPLAIN_BYTES" in error["message"]
    assert error["location"] == {"bytes": 12, "limit": 10}


def test_an_unknown_tokenizer_is_a_404(client):
    r = client.post("/api/tokenizers/no_such_thing/explain", json={"text": "a"})
    assert r.status_code == 404
    assert r.get_json()["error"]["field"] == "tokenizer"


def test_the_page_form_is_explained_as_the_page_encodes_it(client):
    form = {"text": "lowest\r\nlow", "merges": "108 111 256\n119 101 257\n256 119 260", "pretokenize": "gpt2"}
    r = client.post("/fragments/explain", data=form)
    assert r.status_code == 200
    body = r.get_json()
    assert [b["cause"] for b in body["boundaries"]][:2] == ["blocked", "no_rule"]
    assert body["tokens"][0] == {"start": 0, "end": 2}


def test_a_bad_page_form_is_a_json_error_naming_the_field(client):
    # (static/explain.js shows error.message in the gap's box, not a generic sentence)
    r = client.post("/fragments/explain", data={"text": "low", "merges": "108 111", "pretokenize": "gpt2"})
    assert r.status_code == 400 and r.is_json
    assert r.get_json()["error"]["field"] == "merges" and "line 1" in r.get_json()["error"]["message"]
