"""Issue 8, findings 5 and 6 (Flask test client): odd bodies and odd values on
every JSON route get a 4xx naming the field, from one body reader and one
error handler; error messages never echo a whole input."""

from __future__ import annotations

import base64
import json

import pytest

DEEP = "[" * 100_000 + "]" * 100_000
MINBPE = "minbpe v1\n\n0\n97 97\n"

JSON_ROUTES = ["/api/encode", "/api/decode", "/api/encode-text", "/api/train", "/api/share", "/api/import", "/api/export"]


def _error(response, status: int = 400) -> dict:
    assert response.status_code == status, response.get_data(as_text=True)[:500]
    body = response.get_json()
    assert set(body) == {"error"}
    return body["error"]


@pytest.fixture
def tokenizer_id(client) -> str:
    response = client.post("/api/import", json={"content": MINBPE, "format": "minbpe"})
    assert response.status_code == 200
    return response.get_json()["tokenizer"]


@pytest.mark.parametrize("path", JSON_ROUTES + ["/api/tokenizers/{id}/encode"])
def test_deeply_nested_json_is_a_400_on_every_route(client, tokenizer_id, path):
    response = client.post(path.format(id=tokenizer_id), data=DEEP, content_type="application/json")
    error = _error(response)
    assert error["field"] == "body" and "nested too deeply" in error["message"]


@pytest.mark.parametrize("path", JSON_ROUTES[:5] + ["/api/tokenizers/{id}/encode"])
def test_a_form_body_is_a_415_on_json_only_routes(client, tokenizer_id, path):
    error = _error(client.post(path.format(id=tokenizer_id), data={"text": "a"}), 415)
    assert error["field"] == "body" and "application/json" in error["message"]


def test_tokenizer_encode_refuses_unknown_and_missing_fields(client, tokenizer_id):
    error = _error(client.post(f"/api/tokenizers/{tokenizer_id}/encode", json={"text": "aa", "txet": 1}))
    assert error["field"] == "txet" and "unknown field" in error["message"]
    error = _error(client.post(f"/api/tokenizers/{tokenizer_id}/encode", json={"pretokenize": "none"}))
    assert error["field"] == "text" and "missing" in error["message"]
    ok = client.post(f"/api/tokenizers/{tokenizer_id}/encode", json={"text": "aaa"})
    assert ok.status_code == 200 and ok.get_json()["ids"] == [256, 97]


def test_tokenizer_encode_of_an_unknown_id_is_a_404(client):
    error = _error(client.post("/api/tokenizers/aaaaaaaaaaaaaaaa/encode", json={"text": "a"}), 404)
    assert error["field"] == "tokenizer"


@pytest.mark.parametrize("filename", [{"a": 1}, 5, ["x"], True])
def test_import_filename_of_the_wrong_type(client, filename):
    error = _error(client.post("/api/import", json={"content": MINBPE, "filename": filename}))
    assert error["field"] == "filename"


@pytest.mark.parametrize("fmt", [{"a": 1}, 5, ["hf"]])
def test_import_format_of_the_wrong_type(client, fmt):
    error = _error(client.post("/api/import", json={"content": MINBPE, "format": fmt}))
    assert error["field"] == "format"


HF = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}


@pytest.mark.parametrize(
    "extra, name",
    [
        ({"added_tokens": 5}, "added_tokens"),
        ({"added_tokens": "x"}, "added_tokens"),
        ({"pre_tokenizer": {"type": "Sequence", "pretokenizers": 5}}, "pretokenizers"),
        ({"decoder": {"type": "Sequence", "decoders": {"a": 1}}}, "decoders"),
    ],
)
def test_hf_file_with_a_number_where_a_list_belongs(client, extra, name):
    content = json.dumps({**HF, **extra})
    error = _error(client.post("/api/import", json={"content": content, "format": "hf"}))
    assert error["field"] == "file" and f'"{name}" should be a list' in error["message"]


@pytest.mark.parametrize(
    "content, line",
    [
        ("minbpe v1\n\n0\n" + "9" * 5000 + " 97\n", 4),
        ("minbpe v1\n\n0\n97 " + "9" * 5000 + "\n", 4),
        ("minbpe v1\n\n" + "9" * 5000 + "\n", 3),
        ("minbpe v1\n\n1\n<s> " + "9" * 5000 + "\n", 4),
        ("minbpe v1\n\n0\n97 ²\n", 4),  # a digit to str.isdigit, not to int()
    ],
)
def test_minbpe_numbers_that_int_would_refuse(client, content, line):
    error = _error(client.post("/api/import", json={"content": content, "format": "minbpe"}))
    assert error["field"] == "file" and error["location"] == {"line": line}
    assert len(error["message"]) < 300


def test_error_messages_quote_at_most_80_characters(client):
    token = base64.b64encode(bytes(range(200)) * 250).decode()  # a 50,000-byte token
    rank_file = "YQ== 0\nYg== 1\n" + token + " 2\n"
    error = _error(client.post("/api/import", json={"content": rank_file, "format": "tiktoken"}))
    assert error["location"] == {"rank": 2} and len(error["message"]) < 400
    error = _error(client.post("/api/export?format=" + "x" * 5000, json={"merges": []}))
    assert error["field"] == "format" and len(error["message"]) < 300
    error = _error(client.post("/api/encode", json={"text": "a", "merges": [], "pretokenize": "p" * 50_000}))
    assert error["field"] == "pretokenize" and len(error["message"]) < 300
    error = _error(client.post("/api/encode", json={"text": "a", "merges": [], "m" * 50_000: 1}))
    assert error["field"] == "m" * 80 and len(error["message"]) < 300


@pytest.mark.parametrize("level", [["x"] * 1000, {"a": "b" * 10_000}, "w" * 10_000])
def test_export_level_of_any_shape(client, level):
    error = _error(client.post("/api/export", json={"merges": [[97, 97, 256]], "level": level}))
    assert error["field"] == "level" and len(error["message"]) < 300
