"""Tools in chat through the Flask test client: `POST /api/tokenizers/<id>/chat` with `tools`, and the
Bytes page's Chat view with its tools box (`chat_tools`) and what the tools cost.

The ids must be transformers' `apply_chat_template(messages, tools=tools, tokenize=True)` for qwen3 (its
template writes the tools into the system turn); the tools and the conversation (tool calls, tool
answers) are the ones of tests/unit/tokenizer/chat/test_chat_tools.py.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.app.test_chat_api import model_ref, opened_with_template
from tests.conftest import INLINE_ONLY, make_app
from tests.hypothesis_profiles import examples
from tests.unit.tokenizer.chat.test_chat_tools import CONVERSATION, TOOLS, library
from webapp.infra.storage import get_storage


@pytest.fixture(scope="module")
def tools_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    application = make_app(tmp_path_factory.mktemp("chat-tools"), **INLINE_ONLY, LIMIT_CHAT_TOOLS=4)
    yield application
    get_storage(application).dispose()


@pytest.fixture(scope="module")
def client(tools_app: Flask) -> FlaskClient:
    return tools_app.test_client()


def post_json(client: FlaskClient, path: str, body: dict[str, Any]) -> Any:
    """A JSON body with its keys in the order given (the test client's `json=` sorts them, and the
    order of a tool's keys is what the template writes)."""
    return client.post(path, data=json.dumps(body), content_type="application/json")


def transformers_ids(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, prompt: bool) -> list[int]:
    out = library("qwen3").apply_chat_template(messages, tools=tools, tokenize=True, add_generation_prompt=prompt)
    return list(out["input_ids"] if hasattr(out, "keys") else out)


@pytest.mark.parametrize("prompt", [False, True])
def test_qwen3_ids_with_tools_are_apply_chat_templates(client: FlaskClient, prompt: bool) -> None:
    ref = model_ref(client, "qwen3")
    answer = post_json(client, f"/api/tokenizers/{ref}/chat",
                       {"messages": CONVERSATION, "tools": TOOLS, "add_generation_prompt": prompt})
    assert answer.status_code == 200, answer.json
    body = answer.json
    assert body["ids"] == transformers_ids(CONVERSATION, TOOLS, prompt)
    assert body["text"] == library("qwen3").apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False,
                                                                add_generation_prompt=prompt)
    without = transformers_ids(CONVERSATION, None, prompt)
    assert body["count"] == len(body["ids"])
    assert body["count_without_tools"] == len(without)
    assert body["tools_tokens"] == len(body["ids"]) - len(without) > 300  # three specs and qwen3's preamble


def test_no_tools_null_tools_and_an_empty_list(client: FlaskClient) -> None:
    ref = model_ref(client, "qwen3")
    plain = post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION}).json
    assert set(plain) == {"text", "ids", "count"}  # no tools: the answer as before
    assert plain["ids"] == transformers_ids(CONVERSATION, None, False)
    assert post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION, "tools": None}).json == plain
    empty = post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION, "tools": []}).json
    assert empty["ids"] == transformers_ids(CONVERSATION, [], False) == plain["ids"]  # qwen3 asks `if tools`
    assert empty["count_without_tools"] == empty["count"] and empty["tools_tokens"] == 0


def test_an_opened_template_is_given_the_tools(client: FlaskClient) -> None:
    ref = opened_with_template(client, "{{ bos_token }}{% for t in tools or [] %}ab{% endfor %}"
                                       "{% for m in messages %}{{ m.content }}{% endfor %}")
    body = client.post(f"/api/tokenizers/{ref}/chat",
                       json={"messages": [{"role": "user", "content": "ab"}], "tools": TOOLS}).json
    assert body == {"text": "<s>abababab", "ids": [3, 2, 2, 2, 2], "count": 5, "count_without_tools": 2,
                    "tools_tokens": 3}


@pytest.mark.parametrize("payload, field, message, location", [
    ({"tools": {"type": "function"}}, "tools", "tools: expected a list of tools", {}),
    ({"tools": [TOOLS[0], {"type": "function", "function": {"name": 3}}]}, "tools",
     "tools[1].function.name: expected a string, got a number", {"index": 1, "path": ["function", "name"]}),
    ({"tools": [{"type": "function", "name": "f", "parameters": {}}]}, "tools",
     "tools[0]: unknown key 'name'; a tool has type and function", {"index": 0, "key": "name", "path": []}),
    ({"tools": [TOOLS[0]] * 5}, "tools", "tools: 5 tools is over the limit of 4 tools (setting LIMIT_CHAT_TOOLS)",
     {"limit": 4}),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"properties": {"q": "\ud800"}}}}]},
     "tools", "tools[0].function.parameters.properties.q: a lone surrogate U+D800",
     {"index": 0, "path": ["function", "parameters", "properties", "q"], "offset": 0}),
    ({"messages": [{"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f"}}]}]}, "messages",
     "messages[0].tool_calls[0].function: arguments is missing",
     {"index": 0, "key": "arguments", "path": ["tool_calls", 0, "function"]}),
])
def test_bad_tools_are_a_400_naming_the_field_and_place(client: FlaskClient, payload: dict[str, Any], field: str,
                                                         message: str, location: dict[str, Any]) -> None:
    ref = model_ref(client, "qwen3")
    answer = post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION[:2], **payload})
    assert answer.status_code == 400
    error = answer.json["error"]
    assert error["field"] == field and error["message"].startswith(message), error
    assert error.get("location", {}) == location


_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=20))
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                       st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=16)
#: Tools that are nearly right: a real spec with one part replaced by any JSON value, or any JSON at all.
_tools = st.one_of(
    _json,
    st.lists(st.one_of(_json, st.builds(lambda key, value: {**TOOLS[0], key: value},
                                        st.sampled_from(["type", "function", "extra"]), _json),
                       st.builds(lambda key, value: {"type": "function", "function": {**TOOLS[1]["function"],
                                                                                      key: value}},
                                 st.sampled_from(["name", "description", "parameters", "strict"]), _json)),
             max_size=3),
)


def test_any_tools_give_an_answer_or_a_400_never_a_500(client: FlaskClient) -> None:
    ref = model_ref(client, "qwen3")

    @settings(max_examples=examples(60), deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(tools=_tools)
    def run(tools: Any) -> None:
        answer = post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION[:2], "tools": tools})
        assert answer.status_code in (200, 400), answer.json
        if answer.status_code == 400:
            assert answer.json["error"]["field"] == "tools" and answer.json["error"]["message"].startswith("tools")
        page = client.post("/fragments/bytes", data={"tokenizer": ref, "view": "chat", "text": "x",
                                                     "chat_tools": json.dumps(tools)}, headers={"HX-Request": "true"})
        assert page.status_code == 200

    run()


# --- the Chat view --------------------------------------------------------------------------------


def shown(page: str, dd_id: str) -> int:
    found = re.search(rf'<dd id="{dd_id}">([\d,]+)</dd>', page)
    assert found, dd_id
    return int(found.group(1).replace(",", ""))


def test_the_chat_view_counts_the_tools_and_what_they_cost(client: FlaskClient) -> None:
    ref = model_ref(client, "qwen3")
    tools_text = json.dumps(TOOLS, indent=2)
    page = client.get("/bytes", query_string={"tokenizer": ref, "view": "chat", "text": "x",
                                              "chat": json.dumps(CONVERSATION), "chat_tools": tools_text}).data.decode()
    with_tools, without = transformers_ids(CONVERSATION, TOOLS, False), transformers_ids(CONVERSATION, None, False)
    assert shown(page, "chat-count") == len(with_tools)
    assert shown(page, "chat-without-tools") == len(without)
    assert shown(page, "chat-tools-tokens") == len(with_tools) - len(without)
    assert shown(page, "chat-tools-given") == 3
    assert '<details class="chat-tools" id="chat-tools" open>' in page  # open: it holds something
    assert html.unescape(page.split('id="f-chat_tools"', 1)[1].split(">\n", 1)[1].split("</textarea>")[0]) == tools_text
    # the assistant row with tool calls keeps them in its hidden field and names them
    extras = [html.unescape(v) for v in re.findall(r'name="chat_extra" value="([^"]*)"', page)]
    assert json.loads(extras[2]) == {"tool_calls": CONVERSATION[2]["tool_calls"]}
    assert json.loads(extras[3]) == {"tool_call_id": "call_1"} and extras[0] == ""
    assert "Calls <code>get_weather</code>, <code>get_weather</code>" in page
    # a template that ignores tools: they cost nothing, and the view says why
    llama = client.get("/bytes", query_string={"tokenizer": model_ref(client, "llama3"), "view": "chat", "text": "x",
                                               "chat_tools": tools_text}).data.decode()
    assert shown(llama, "chat-tools-tokens") == 0 and 'id="chat-tools-note"' in llama
    plain = client.get("/bytes", query_string={"tokenizer": ref, "view": "chat", "text": "x"}).data.decode()
    assert 'id="chat-tools-tokens"' not in plain and '<details class="chat-tools" id="chat-tools">' in plain


def test_the_editor_keeps_tool_calls_and_bad_tools_are_shown_beside_the_box(client: FlaskClient) -> None:
    ref = model_ref(client, "qwen3")
    rows = CONVERSATION[:5]
    form = {"tokenizer": ref, "view": "chat", "text": "x", "chat_rows": str(len(rows)),
            "chat_role": [m["role"] for m in rows], "chat_content": [m["content"] for m in rows],
            "chat_extra": [json.dumps({k: v for k, v in m.items() if k not in ("role", "content")}) if len(m) > 2
                           else "" for m in rows]}
    typed = '[{"type": "function", "function": {"name": 7}}]'
    page = client.post("/fragments/bytes", data={**form, "chat_tools": typed},
                       headers={"HX-Request": "true"}).data.decode()
    assert 'id="error-chat_tools" role="alert" hx-swap-oob="true">chat_tools[0].function.name: expected a string, ' \
           'got a number' in page
    added = client.post("/bytes", data={**form, "chat_tools": typed, "action": "chat-add"}).data.decode()
    assert typed in html.unescape(added)  # what was typed is kept
    assert 'id="error-chat_tools" role="alert">chat_tools[0].function.name' in added
    # the rows (and their tool calls) survive the editor's round trip
    again = client.post("/bytes", data={**form, "chat_tools": ""}).data.decode()
    rendered = html.unescape(re.sub(r"<[^>]+>", "", again.split('id="chat-rendered">', 1)[1].split("</pre>")[0]))
    assert rendered == library("qwen3").apply_chat_template(rows, tokenize=False)
    assert rendered.count("<tool_call>") == 2
    assert shown(again, "chat-count") == len(transformers_ids(rows, None, False))
    example = client.post("/fragments/bytes", data={**form, "action": "chat-tools-example"},
                          headers={"HX-Request": "true"}).data.decode()
    assert 'id="chat-editor" hx-swap-oob="true"' in example and "get_weather" in example
    assert 'id="chat-tools-tokens"' in example


def test_the_tools_are_shared_with_the_conversation(client: FlaskClient) -> None:
    ref = model_ref(client, "qwen3")
    by_api = post_json(client, "/api/share", {"tool": "bytes", "tokenizer": ref, "view": "chat", "text": "x",
                                              "chat": CONVERSATION[:2], "chat_tools": TOOLS})
    assert by_api.status_code in (200, 201), by_api.json
    saved = client.get(f"/api/share/{by_api.json['id']}").json["state"]
    assert json.loads(saved["chat_tools"]) == TOOLS
    page = client.get(by_api.json["path"]).data.decode()
    assert shown(page, "chat-count") == len(transformers_ids(CONVERSATION[:2], TOOLS, False))
