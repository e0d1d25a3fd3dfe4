"""`POST /fragments/prompt`, the Bytes page's question (static/prompt.js): the page's form in, the
prompt-end answer for the tokens the page shows out, and errors as JSON naming the field.

Typed merges (list order, split by GPT-2's pattern), a preset (its answer equal to the API's), a
preset split by another pattern (the page's choice decides), and the 400s.
"""

from __future__ import annotations

import pytest

from webapp.tokenizer import is_installed

MERGES = "108 111 256\n119 101 257\n256 119 260"
FOX = "The quick brown fox jumps over the la"


def _spans(tokens: list[dict]) -> list[tuple[int, int]]:
    return [(t["start"], t["end"]) for t in tokens]


def _changes(encode, text: str, witness: str, index: int) -> bool:
    """Whether text + witness no longer encodes to the same tokens up to and including `index`."""
    return encode(text + witness)[: index + 1] != encode(text)[: index + 1]


def test_typed_merges_the_page_shows(client):
    form = {"text": "lowest lo", "merges": MERGES, "pretokenize": "gpt2"}
    r = client.post("/fragments/prompt", data=form)
    assert r.status_code == 200
    body = r.get_json()
    encoded = client.post("/api/encode", json={"text": form["text"], "merges": MERGES, "pretokenize": "gpt2"}).get_json()
    assert body["ids"] == encoded["ids"] == [256, 257, 115, 116, 32, 256]
    assert body["tokens"] == [{"start": s, "end": e} for s, e in _spans(encoded["tokens"])]
    # `lo` at the end may become `low`; everything before it is final
    assert body["stable"] == 5 and body["end"] == "changeable" and body["undecided"] == []
    assert [u["index"] for u in body["unstable"]] == [5]

    def encode(text: str) -> list[int]:
        return client.post("/api/encode", json={"text": text, "merges": MERGES, "pretokenize": "gpt2"}).get_json()["ids"]

    assert all(_changes(encode, form["text"], u["witness"], u["index"]) for u in body["unstable"])
    # healing: the tokens whose bytes start with `lo` (256 `lo`, 260 `low`)
    assert body["healing"] == {"candidates": 2, "examples": [{"id": 256, "text": "lo"}, {"id": 260, "text": "low"}]}
    # the same answer as the JSON API's, plus the spans
    api = client.post("/api/prompt", json={"text": form["text"], "merges": MERGES, "pretokenize": "gpt2"}).get_json()
    assert {k: v for k, v in body.items() if k != "tokens"} == api


def test_a_preset_answers_as_its_api(client):
    if not is_installed("cl100k_base"):
        pytest.skip("cl100k_base is not installed here")
    r = client.post("/fragments/prompt", data={"text": FOX, "tokenizer": "cl100k_base", "pretokenize": "cl100k"})
    assert r.status_code == 200
    body = r.get_json()
    api = client.post("/api/tokenizers/cl100k_base/prompt", json={"text": FOX}).get_json()
    assert {k: v for k, v in body.items() if k != "tokens"} == api
    encoded = client.post("/api/tokenizers/cl100k_base/encode", json={"text": FOX}).get_json()
    assert body["ids"] == encoded["ids"]
    assert _spans(body["tokens"]) == _spans(encoded["tokens"])
    # ` la` may still change, the seven tokens before it may not
    assert body["stable"] == len(body["ids"]) - 1 and body["end"] == "changeable"
    assert body["healing"]["candidates"] > len(body["healing"]["examples"]) > 0

    def encode(text: str) -> list[int]:
        return client.post("/api/tokenizers/cl100k_base/encode", json={"text": text}).get_json()["ids"]

    assert all(_changes(encode, FOX, u["witness"], u["index"]) for u in body["unstable"])


def test_the_page_s_own_pre_tokenize_choice_decides(client):
    """A preset split by another pattern than its own (the page's "These are not cl100k_base's ids"):
    the answer is about the tokens the page shows, not the preset's own."""
    if not is_installed("cl100k_base"):
        pytest.skip("cl100k_base is not installed here")
    text = "a1234"
    body = client.post("/fragments/prompt", data={"text": text, "tokenizer": "cl100k_base", "pretokenize": "gpt2"}).get_json()
    shown = client.post("/api/tokenizers/cl100k_base/encode", json={"text": text, "pretokenize": "gpt2"}).get_json()
    own = client.post("/api/tokenizers/cl100k_base/encode", json={"text": text}).get_json()
    assert shown["ids"] != own["ids"]  # (else this test would show nothing)
    assert body["ids"] == shown["ids"]
    assert _spans(body["tokens"]) == _spans(shown["tokens"])


def test_bad_merges_are_a_400_naming_the_field_in_json(client):
    r = client.post("/fragments/prompt", data={"text": "hi", "merges": "104 105", "pretokenize": "none"})
    assert r.status_code == 400
    assert r.mimetype == "application/json"  # the page's script shows the message in its note
    error = r.get_json()["error"]
    assert error["field"] == "merges"
    assert error["message"].startswith("merges: line 1:")


def test_a_bad_pre_tokenize_choice_names_its_field(client):
    r = client.post("/fragments/prompt", data={"text": "hi", "merges": "", "pretokenize": "words"})
    assert r.status_code == 400
    assert r.get_json()["error"]["field"] == "pretokenize"


def test_a_text_over_the_explain_limit_names_text(tmp_path):
    from tests.conftest import make_app

    app = make_app(tmp_path, LIMIT_EXPLAIN_BYTES=10)
    r = app.test_client().post("/fragments/prompt", data={"text": "é" * 6, "merges": "", "pretokenize": "none"})
    assert r.status_code == 400
    error = r.get_json()["error"]
    assert error["field"] == "text" and error["location"] == {"bytes": 12, "limit": 10}


def test_an_empty_text_has_no_tokens_and_a_final_end(client):
    body = client.post("/fragments/prompt", data={"text": "", "merges": MERGES, "pretokenize": "none"}).get_json()
    assert body["ids"] == [] and body["tokens"] == [] and body["end"] == "final"
