"""Where a prompt ends, over HTTP: the answer's ids are /encode's, every witness changes its token through
/encode too, final tokens survive continuations, typed rules are answered, and bad input is a 400 naming
its field."""

from __future__ import annotations

import pytest

from webapp.tokenizer import is_installed, reference


def encode(client, name: str, text: str) -> list[int]:
    body = client.post(f"/api/tokenizers/{name}/encode", json={"text": text, "allowed_special": "none"}).get_json()
    return body["ids"]


@pytest.mark.parametrize("name", ["cl100k_base", "qwen3", "mistral_v3"])
def test_a_preset_answer_is_true_through_encode(inline_client, name: str) -> None:
    if not is_installed(name):
        pytest.skip(f"{name} is not prepared on this machine")
    text = "The quick brown fox jumps over the la"
    body = inline_client.post(f"/api/tokenizers/{name}/prompt", json={"text": text}).get_json()
    assert set(body) == {"ids", "stable", "unstable", "undecided", "end", "healing"}
    assert body["ids"] == encode(inline_client, name, text)
    assert body["undecided"] == [] and body["end"] == "changeable"
    assert [u["index"] for u in body["unstable"]] == list(range(body["stable"], len(body["ids"])))
    for item in body["unstable"]:
        changed = encode(inline_client, name, text + item["witness"])
        assert changed[:item["index"] + 1] != body["ids"][:item["index"] + 1]
    for more in ["zy", "st", " dog", ".", "\n", "y's"]:
        assert encode(inline_client, name, text + more)[:body["stable"]] == body["ids"][:body["stable"]]
    healing = body["healing"]
    assert healing["candidates"] >= len(healing["examples"]) >= 1
    assert body["ids"][-1] in [e["id"] for e in healing["examples"]]


def test_typed_rules_are_answered(inline_client) -> None:
    rules = [[108, 111, 256], [256, 119, 257]]  # "lo", then "low"
    body = inline_client.post("/api/prompt", json={"text": "a lo", "merges": rules, "pretokenize": "gpt2"}).get_json()
    assert body["ids"] == [97, 32, 256] and body["stable"] == 2
    assert body["unstable"] == [{"index": 2, "witness": "w"}]
    assert reference.encode("low", rules) == [257]
    assert body["healing"]["candidates"] == 2


@pytest.mark.parametrize("url, body, field", [
    ("/api/prompt", {"text": "x"}, "merges"),
    ("/api/prompt", {"text": "x", "merges": "1 2"}, "merges"),
    ("/api/prompt", {"text": "x", "merges": [], "pretokenize": "nope"}, "pretokenize"),
    ("/api/prompt", {"merges": []}, "text"),
    ("/api/tokenizers/cl100k_base/prompt", {"text": 5}, "text"),
    ("/api/tokenizers/cl100k_base/prompt", {"text": "x", "pretokenize": "nope"}, "pretokenize"),
])
def test_bad_input_is_a_400_naming_the_field(inline_client, url: str, body: dict, field: str) -> None:
    response = inline_client.post(url, json=body)
    assert response.status_code == 400, response.get_data(as_text=True)
    assert response.get_json()["error"]["field"] == field


def test_a_text_over_the_limit_is_a_400_naming_text(inline_client) -> None:
    response = inline_client.post("/api/prompt", json={"text": "a" * 70_000, "merges": []})
    assert response.status_code == 400 and response.get_json()["error"]["field"] == "text"
    assert "LIMIT_EXPLAIN_BYTES" in response.get_json()["error"]["message"]


def test_an_unknown_tokenizer_is_a_404(inline_client) -> None:
    response = inline_client.post("/api/tokenizers/no-such-id/prompt", json={"text": "x"})
    assert response.status_code == 404
