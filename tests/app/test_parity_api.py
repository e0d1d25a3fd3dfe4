"""`POST /api/parity`: specs as /api/compare takes them, the built-in probes or given texts, the answer's
shape, GGUF files opened through the API, the bounds (LIMIT_PARITY_TEXTS, LIMIT_PARITY_BYTES, the
request's time budget) and 400s naming the field.
"""

from __future__ import annotations

from typing import Any

import pytest

gguf = pytest.importorskip("gguf")

from tests.gguf_files import byte_level_keys, write_gguf  # noqa: E402
from webapp.tokenizer import is_installed  # noqa: E402
from webapp.tokenizer.core.alphabet import bytes_to_token  # noqa: E402
from webapp.tokenizer.parity import PROBE_TEXTS, STAGES  # noqa: E402

RULES = [[104, 101, 256], [108, 108, 257], [256, 257, 258], [258, 111, 259], [32, 119, 260], [260, 111, 261]]
TEXTS = ["hello world", "hell", "shell of a well"]


def parity(client: Any, a: Any, b: Any, texts: Any = None, status: int = 200) -> dict[str, Any]:
    body = {"a": a, "b": b} if texts is None else {"a": a, "b": b, "texts": texts}
    answer = client.post("/api/parity", json=body)
    assert answer.status_code == status, answer.get_json()
    return dict(answer.get_json())


def error(client: Any, body: Any) -> dict[str, Any]:
    answer = client.post("/api/parity", json=body)
    assert answer.status_code == 400, answer.get_json()
    return dict(answer.get_json()["error"])


def test_typed_merges_beside_themselves_agree_and_the_answer_has_its_shape(client) -> None:
    answer = parity(client, {"merges": RULES, "pretokenize": "gpt2"}, {"merges": RULES, "pretokenize": "gpt2"}, TEXTS)
    assert answer["summary"] == {"same": 3, **{stage: 0 for stage in STAGES}} and answer["probes"] is False
    first = answer["texts"][0]
    assert set(first) == {"text", "same", "a", "b", "stage", "detail"}
    assert first["same"] and first["stage"] is None and first["detail"] is None
    assert first["a"]["ids"] == [259, 261, 114, 108, 100]
    assert [t["text"] for t in first["a"]["tokens"]] == ["hello", " wo", "r", "l", "d"]


def test_a_removed_rule_is_named_and_putting_it_back_agrees(client) -> None:
    lacking = [rule for rule in RULES if rule[:2] != [108, 108]]
    answer = parity(client, {"merges": RULES, "pretokenize": "gpt2"}, {"merges": lacking, "pretokenize": "gpt2"},
                    TEXTS)
    assert [e["stage"] for e in answer["texts"]] == ["merges", "merges", "merges"]
    for entry in answer["texts"]:
        detail = entry["detail"]
        assert detail["kind"] == "missing" and detail["lacks"] == "b" and detail["rule"]["merged"] == "ll"
        index = detail["a"]["rule"]
        back = lacking[:index] + [RULES[index]] + lacking[index:]
        again = parity(client, {"merges": RULES, "pretokenize": "gpt2"}, {"merges": back, "pretokenize": "gpt2"},
                       [entry["text"]])
        assert again["texts"][0]["same"]
    tokens = answer["texts"][1]["b"]["tokens"]
    assert [(t["text"], t["differs"]) for t in tokens] == [("he", True), ("l", True), ("l", True)]


@pytest.mark.skipif(not (is_installed("cl100k_base") and is_installed("o200k_base")), reason="presets not installed")
def test_presets_on_the_built_in_probes(client) -> None:
    answer = parity(client, {"tokenizer": "cl100k_base"}, {"tokenizer": "o200k_base"})
    assert answer["probes"] is True and [e["text"] for e in answer["texts"]] == list(PROBE_TEXTS)
    assert sum(answer["summary"].values()) == len(PROBE_TEXTS)
    assert (answer["a"], answer["b"]) == ("cl100k_base", "o200k_base")
    for entry in answer["texts"]:
        assert entry["same"] == (entry["a"]["ids"] == entry["b"]["ids"])
        assert (entry["stage"] is None) == entry["same"]


def _small_gguf(**ids: int | bool) -> bytes:
    tokens = [bytes_to_token(bytes([b])) for b in range(256)] + ["he", "ll", "hell", "hello", "<s>"]
    types = [1] * 260 + [3]
    return write_gguf(byte_level_keys(tokens, types, ["h e", "l l", "he ll", "hell o"], "gpt-2", **ids))


def _opened(client: Any, data: bytes) -> str:
    answer = client.post("/api/import?filename=model.gguf", data=data, content_type="application/octet-stream")
    assert answer.status_code == 200, answer.get_json()
    return str(answer.get_json()["tokenizer"])


def test_an_opened_gguf_with_bos_beside_one_without_differs_at_the_post_processor(client) -> None:
    plain = _opened(client, _small_gguf(add_bos=False))
    with_bos = _opened(client, _small_gguf(bos=260, add_bos=True))
    answer = parity(client, {"tokenizer": plain}, {"tokenizer": with_bos}, TEXTS)
    assert [e["stage"] for e in answer["texts"]] == ["post_processor"] * 3
    detail = answer["texts"][0]["detail"]
    assert detail["a"]["before"] == [] and detail["b"]["before"] == [260] and detail["b"]["before_text"] == ["<s>"]
    assert answer["texts"][0]["b"]["ids"][0] == 260
    same = parity(client, {"tokenizer": plain}, {"merges": RULES[:4], "pretokenize": "gpt2"}, ["hello"])
    assert same["texts"][0]["same"]  # (the GGUF's hello is its token 256 + 3, as the fourth typed rule's)
    shifted = [[104, 101, 266], [108, 108, 267], [266, 267, 268], [268, 111, 269]]
    other = parity(client, {"tokenizer": plain}, {"merges": shifted, "pretokenize": "gpt2"}, ["hello"])["texts"][0]
    assert other["stage"] == "vocab" and (other["detail"]["a_id"], other["detail"]["b_id"]) == (259, 269)


@pytest.mark.parametrize("body, field", [
    ({"a": {"merges": RULES}}, "b"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES}, "c": 1}, "c"),
    ({"a": {"tokenizer": "no-such-thing"}, "b": {"merges": RULES}}, "a.tokenizer"),
    ({"a": {"merges": RULES}, "b": {"merges": "1 2"}}, "b.merges"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES, "pretokenize": "nope"}}, "b.pretokenize"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES, "colour": 1}}, "b.colour"),
    ({"a": "cl100k_base", "b": {"merges": RULES}}, "a"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES}, "texts": "hello"}, "texts"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES}, "texts": ["ok", 3]}, "texts[1]"),
    ({"a": {"merges": RULES}, "b": {"merges": RULES}, "texts": ["ok", "\ud800"]}, "texts[1]"),
])
def test_bad_input_is_a_400_naming_the_field(client, body: Any, field: str) -> None:
    found = error(client, body)
    assert found["field"] == field and found["message"].startswith(field), found


def test_the_texts_are_bounded_by_count_and_by_bytes(client, app) -> None:
    app.config.update({"LIMIT_PARITY_TEXTS": 3, "LIMIT_PARITY_BYTES": 100})
    sides = {"a": {"merges": RULES}, "b": {"merges": RULES}}
    found = error(client, {**sides, "texts": ["a"] * 4})
    assert found["field"] == "texts" and "LIMIT_PARITY_TEXTS" in found["message"] and "4 texts" in found["message"]
    found = error(client, {**sides, "texts": ["é" * 30, "é" * 30]})
    assert found["field"] == "texts" and "LIMIT_PARITY_BYTES" in found["message"] and "120 bytes" in found["message"]
    assert parity(client, sides["a"], sides["b"], ["é" * 25, "é" * 25])["summary"]["same"] == 2


def test_the_request_time_budget_stops_a_long_check_with_a_503(client, app) -> None:
    app.config["LIMIT_REQUEST_SECONDS"] = 1e-9
    answer = client.post("/api/parity", json={"a": {"merges": RULES}, "b": {"merges": RULES}, "texts": TEXTS})
    assert answer.status_code == 503
    assert answer.get_json()["error"]["field"] == "texts" and "LIMIT_REQUEST_SECONDS" in answer.get_json()["error"]["message"]


def test_the_page_and_its_fragment_answer(client) -> None:
    page = client.post("/parity", data={"a": "no-such-thing", "b": "also-not", "texts": "hello"})
    assert page.status_code == 200 and b"a.tokenizer" in page.data
    fragment = client.post("/fragments/parity", data={"a": "no-such-thing", "b": "x", "texts": ""})
    assert fragment.status_code == 200 and b"parity-error" in fragment.data
