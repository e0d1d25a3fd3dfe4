"""The JSON API: seed answers, typed-form strings, and a 4xx with a message for every bad input."""

from __future__ import annotations

import json

import pytest

from tests.conftest import make_app

SEED_CHAR_VOCAB = {"l": 0, "o": 1, "w": 2, "e": 3, "r": 4, "lo": 5, "er": 6, "low": 7, "lower": 8}
SEED_CHAR_MERGES = [["l", "o"], ["e", "r"], ["lo", "w"], ["low", "er"]]


def post(client, url, body, content_type="application/json"):
    data = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return client.post(url, data=data, content_type=content_type)


def assert_error(response, status, field, *words):
    assert response.status_code == status, response.get_data(as_text=True)
    body = response.get_json()
    assert set(body) == {"error"}
    error = body["error"]
    assert error["field"] == field
    for word in words:
        assert word in error["message"], error["message"]
    return error


def test_encode_seed(client):
    r = post(client, "/api/encode", {"text": "low", "merges": [[108, 111, 256], [256, 119, 257]]})
    assert r.status_code == 200
    assert r.get_json() == {"ids": [257], "tokens": [{"id": 257, "text": "low", "bytes": [108, 111, 119], "start": 0, "end": 3}]}
    r = post(client, "/api/encode", {"text": "aaa", "merges": [[97, 97, 256]]})
    assert r.get_json()["ids"] == [256, 97]


def test_encode_tokens_of_a_split_character_have_no_text(client):
    r = post(client, "/api/encode", {"text": "é", "merges": []})
    assert r.get_json()["tokens"] == [
        {"id": 195, "text": None, "bytes": [195], "start": 0, "end": 1},
        {"id": 169, "text": None, "bytes": [169], "start": 1, "end": 2},
    ]


def test_encode_tokens_for_a_list_that_redefines_an_id(client):
    r = post(client, "/api/encode", {"text": "ab cd", "merges": [[97, 98, 256], [99, 100, 256]]})
    body = r.get_json()
    assert body["ids"] == [256, 32, 256]
    assert [t["text"] for t in body["tokens"]] == ["ab", " ", "cd"]


def test_encode_accepts_the_typed_plain_form(client):
    r = post(client, "/api/encode", {"text": "low", "merges": "108 111 256\n256 119 257"})
    assert r.get_json()["ids"] == [257]


def test_encode_with_pretokenization(client):
    r = post(client, "/api/encode", {"text": "low low", "merges": [[108, 111, 256], [32, 256, 257]], "pretokenize": "gpt2"})
    assert r.status_code == 200
    assert r.get_json()["ids"] == [256, 119, 257, 119]


def test_decode_seed(client):
    r = post(client, "/api/decode", {"ids": [257], "vocab": {"256": [108, 111], "257": [108, 111, 119]}})
    assert r.get_json() == {"text": "low"}
    assert post(client, "/api/decode", {"ids": [104, 105]}).get_json() == {"text": "hi"}


def test_encode_text_seed(client):
    r = post(client, "/api/encode-text", {"text": "lower", "vocab": SEED_CHAR_VOCAB, "merges": SEED_CHAR_MERGES})
    assert r.get_json() == {"ids": [8], "tokens": ["lower"]}


@pytest.mark.parametrize(
    "words, num_merges, merges",
    [(["low", "lower", "lowest"], 2, ["lo", "low"]), (["aaa"], 3, ["aa", "aaa"]), ("low lower lowest", 2, ["lo", "low"])],
)
def test_train_seed(client, words, num_merges, merges):
    r = post(client, "/api/train", {"words": words, "num_merges": num_merges})
    assert r.status_code == 200 and r.get_json()["merges"] == merges


@pytest.mark.parametrize(
    "url, body, field, words",
    [
        # wrong types
        ("/api/encode", {"text": 5, "merges": []}, "text", "expected a string"),
        ("/api/encode", {"text": "a", "merges": {"a": 1}}, "merges", "got an object"),
        ("/api/encode", {"text": "a", "merges": [[108, "o", 256]]}, "merges", "rule 1"),
        ("/api/encode", {"text": "a", "merges": [[1, 2, True]]}, "merges", "rule 1"),
        ("/api/encode", {"text": "a", "merges": "1 2"}, "merges", "line 1"),
        ("/api/encode", {"text": "a", "merges": [], "pretokenize": "bert"}, "pretokenize", "none, gpt2, cl100k"),
        ("/api/encode", {"text": "\ud800", "merges": []}, "text", "surrogate"),
        ("/api/encode-text", {"text": "a", "vocab": [], "merges": []}, "vocab", "got a list"),
        ("/api/encode-text", {"text": "a", "vocab": {"a": 0}, "merges": [["a"]]}, "merges", "rule 1"),
        ("/api/train", {"words": [1], "num_merges": 1}, "words", "words: word 1 should be a string, got 1"),
        ("/api/train", {"words": ["a"], "num_merges": True}, "num_merges", "true"),
        ("/api/train", {"words": ["a"], "num_merges": -1}, "num_merges", "-1"),
        ("/api/train", {"words": ["a"], "num_merges": "ten"}, "num_merges", "whole number"),
        # out-of-range and unknown ids, invalid UTF-8
        ("/api/decode", {"ids": [-1]}, "ids", "position 1"),
        ("/api/decode", {"ids": [1, 2.5]}, "ids", "position 2"),
        ("/api/decode", {"ids": [999]}, "ids", "id 999 at position 1"),
        ("/api/decode", {"ids": [104, 195]}, "ids", "byte offset 1"),
        ("/api/decode", {"ids": [256], "vocab": {"256": [300]}}, "vocab",
         "vocab: token 256 should be a list of byte values 0..255, got [300]"),
        ("/api/decode", {"ids": [256], "vocab": {"x": [1]}}, "vocab", 'vocab: key "x" should be a token id'),
        # missing vocab entries
        ("/api/encode-text", {"text": "lowest", "vocab": SEED_CHAR_VOCAB, "merges": SEED_CHAR_MERGES}, "vocab", '"s"'),
    ],
)
def test_invalid_values_are_4xx_with_the_field(client, url, body, field, words):
    assert_error(post(client, url, body), 400, field, words)


def test_missing_invalid_utf8_char_error_has_a_location(client):
    error = assert_error(post(client, "/api/decode", {"ids": [104, 195]}), 400, "ids")
    assert error["location"]["offset"] == 1


@pytest.mark.parametrize(
    "body, status, field, words",
    [
        (b"{bad", 400, "body", "invalid JSON at line 1, column 2"),
        (b"\xff\xfe", 400, "body", "not valid UTF-8 at byte offset 0"),
        (b"[1, 2]", 400, "body", "expected a JSON object"),
        (b'{"text": NaN, "merges": []}', 400, "body", "NaN"),
        (b"[" * 50_000 + b"]" * 50_000, 400, "body", "nested too deeply"),
        (b'{"text": "a"}', 400, "merges", "missing"),
        (b'{"text": "a", "merges": [], "merge": []}', 400, "merge", "unknown field"),
        (b"", 400, "body", "invalid JSON"),
    ],
)
def test_malformed_bodies(client, body, status, field, words):
    assert_error(post(client, "/api/encode", body), status, field, words)


def test_wrong_content_type_is_415(client):
    r = client.post("/api/encode", data={"text": "a", "merges": ""})
    assert_error(r, 415, "body", "application/json")


def test_too_large_body_is_413_stating_the_limit(tmp_path):
    client = make_app(tmp_path, MAX_CONTENT_LENGTH=1000).test_client()
    r = post(client, "/api/encode", {"text": "a" * 2000, "merges": []})
    assert_error(r, 413, "body", "limit of 1,000 bytes")


@pytest.mark.parametrize(
    "config, url, body, field, words",
    [
        ({"LIMIT_TEXT_CHARS": 5}, "/api/encode", {"text": "a" * 6, "merges": []}, "text", "limit of 5 characters"),
        ({"LIMIT_RULES": 1}, "/api/encode", {"text": "a", "merges": [[1, 2, 256], [1, 2, 257]]}, "merges", "limit of 1 rules"),
        ({"LIMIT_VOCAB": 1}, "/api/decode", {"ids": [1], "vocab": {"256": [1], "257": [2]}}, "vocab", "limit of 1 entries"),
        ({"LIMIT_IDS": 2}, "/api/decode", {"ids": [1, 2, 3]}, "ids", "limit of 2 ids"),
        ({"LIMIT_WORDS": 2}, "/api/train", {"words": ["a", "b", "c"], "num_merges": 1}, "words", "limit of 2 words"),
        ({}, "/api/train", {"words": ["a"], "num_merges": 10**9}, "num_merges", "limit of 50,000"),
    ],
)
def test_workloads_over_a_limit(tmp_path, config, url, body, field, words):
    client = make_app(tmp_path, **config).test_client()
    assert_error(post(client, url, body), 400, field, words)


def test_api_method_and_path_errors_are_json(client):
    r = client.get("/api/encode")
    assert_error(r, 405, "method", "GET is not allowed", "POST")
    assert "POST" in r.headers["Allow"]
    assert_error(client.post("/api/nothing", json={}), 404, "path", "/api/nothing")


def test_every_route_answers_json_errors_not_500(client):
    for url in ("/api/encode", "/api/decode", "/api/encode-text", "/api/train"):
        for body in (b"null", b"{}", b'{"text": [], "ids": {}, "words": 3}', b"\x00"):
            r = post(client, url, body)
            assert 400 <= r.status_code < 500, (url, body, r.status_code)
            assert "message" in r.get_json()["error"]
