"""Issue 28, rows 1-5 and 12, through the Flask test client: an opened (untrusted) chat template,
deep JSON in every JSON field, and a lone surrogate inside a chat message.

Each test here failed before its fix:
- rows 1-3: every way of building a value is bounded before it allocates, and an opened
  template renders in a child process with a memory and a hard time limit;
- row 4: a template that cannot compile is refused when it is opened, and one stored before
  that check answers 400 (the API) or a message (the page, a share link), never a 500;
- row 5: deep JSON in the Chat view's `chat` field, in a share of that state, and in a job
  token body is a clear message, never a RecursionError;
- row 12: a lone surrogate in a message is named by the message's index, role and offset.
"""

from __future__ import annotations

import json
import time
from typing import Any, Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.conftest import INLINE_ONLY, make_app
from webapp.infra.storage import get_storage

#: A tokenizer.json small enough to open inline (ids: a=0 b=1 ab=2 <s>=3).
CONTENT = json.dumps({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "<s>": 3}, "merges": ["a b"]},
                      "added_tokens": [{"id": 3, "content": "<s>", "special": True, "single_word": False,
                                        "lstrip": False, "rstrip": False, "normalized": False}]})
MESSAGES = [{"role": "user", "content": "abab"}]


@pytest.fixture(scope="module")
def untrusted_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    application = make_app(tmp_path_factory.mktemp("untrusted"), **INLINE_ONLY)
    yield application
    get_storage(application).dispose()


@pytest.fixture(scope="module")
def client(untrusted_app: Flask) -> FlaskClient:
    return untrusted_app.test_client()


def open_with(client: FlaskClient, template: str) -> Any:
    return client.post("/api/import?include=summary", json={
        "content": CONTENT, "config": json.dumps({"chat_template": template, "bos_token": "<s>"})})


def opened(client: FlaskClient, template: str) -> str:
    answer = open_with(client, template)
    assert answer.status_code == 200, answer.json
    return str(answer.json["tokenizer"])


def chat(client: FlaskClient, ref: str, messages: Any = MESSAGES) -> Any:
    return client.post(f"/api/tokenizers/{ref}/chat", json={"messages": messages})


# --- rows 1-3: every way of building a value is bounded; the render runs in a child ---------

DOUBLING = ("{% set ns = namespace(s='ab') %}{% for i in range(N) %}{% set ns.s = ns.s OP ns.s %}{% endfor %}"
            "{{ ns.s|length }}")

HOSTILE = {
    "tilde doubling 28": DOUBLING.replace("N", "28").replace("OP", "~"),
    "tilde doubling 40": DOUBLING.replace("N", "40").replace("OP", "~"),
    "lipsum huge": "{{ lipsum(n=1000, min=99999, max=100000)|length }}",
    "center widths": "{{ range(1000)|map('center', 999999)|list|length }}",
    "tojson indent": "{% set ns = namespace(v=1) %}{% for i in range(20) %}{% set ns.v = [ns.v, ns.v] %}"
                     "{% endfor %}{{ ns.v|tojson(indent=999999)|length }}",
    "format widths": "{{ range(1000)|map('format', 1)|list|length if false }}"
                     "{{ ('{0:>999999}' * 50).format('x')|length }}",
    "indent widths": "{{ ('a\\n' * 1000)|indent(999999)|length }}",
    "join of a repeated list": "{{ (['x' * 999999] * 1000)|join|length }}",
    "star of a repeated list": "{{ ([['x' * 999999] * 1000] * 1000)|string|length }}",
    "output of a doubled list": "{% set ns = namespace(v='x' * 1000) %}{% for i in range(30) %}"
                                "{% set ns.v = [ns.v, ns.v] %}{% endfor %}{{ ns.v }}",
}


@pytest.mark.alone
@pytest.mark.parametrize("name", list(HOSTILE))
def test_a_hostile_template_is_refused_quickly_naming_the_template(client: FlaskClient, name: str) -> None:
    ref = opened(client, HOSTILE[name])
    start = time.perf_counter()
    answer = chat(client, ref)
    took = time.perf_counter() - start
    assert answer.status_code == 400, (answer.status_code, answer.data[:300])
    error = answer.json["error"]
    assert error["field"] == "chat_template"
    assert "refused" in error["message"], error
    assert took < 3.0, took  # the 2 s time limit, whatever the template calls


def test_an_opened_template_still_renders_and_counts(client: FlaskClient) -> None:
    ref = opened(client, "{{ bos_token }}{% for m in messages %}{{ m.content ~ '' }}{% endfor %}"
                         "{% if lipsum(1, false, 1, 2)|length > 0 %}{{ 'a'|center(1) ~ 'b' }}{% endif %}")
    assert chat(client, ref).json == {"text": "<s>ababab", "ids": [3, 2, 2, 2], "count": 4}


# --- row 4: compiled when opened; nothing stored 500s later ----------------------------------

NESTED_FOR = "{% for a in [1] %}" * 25 + "x" + "{% endfor %}" * 25
NESTED_IF = "{% if true %}" * 100 + "x" + "{% endif %}" * 100


@pytest.mark.parametrize("template", [NESTED_FOR, NESTED_IF], ids=["25 for", "100 if"])
def test_a_template_that_cannot_compile_is_refused_when_opened(client: FlaskClient, template: str) -> None:
    answer = open_with(client, template)
    assert answer.status_code == 400, answer.data[:300]
    error = answer.json["error"]
    assert error["field"] == "chat_template"
    assert error["message"].startswith("chat_template: the template does not compile"), error


def test_a_stored_template_that_cannot_compile_never_500s(client: FlaskClient,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A tokenizer stored before the check at opening: the API is a 400, the page and a share a message."""
    from webapp.tokenizer.chat import templates as chat_module

    monkeypatch.setattr(chat_module, "check_compiles", lambda *args: None)
    ref = opened(client, NESTED_FOR)
    monkeypatch.undo()
    answer = chat(client, ref)
    assert answer.status_code == 400 and answer.json["error"]["field"] == "chat_template"
    page = client.get("/bytes", query_string={"tokenizer": ref, "view": "chat", "text": "ab",
                                              "chat": json.dumps(MESSAGES)})
    assert page.status_code == 200 and b"does not compile" in page.data
    shared = client.post("/api/share", json={"tool": "bytes", "tokenizer": ref, "view": "chat", "text": "ab",
                                             "chat": MESSAGES})
    assert shared.status_code in (200, 201), shared.data[:300]
    link = client.get("/s/" + shared.json["id"])
    assert link.status_code == 200 and b"does not compile" in link.data


# --- row 5: one JSON reader with the depth limit -------------------------------------------


def test_deep_json_in_the_chat_field_and_its_share_is_a_message(client: FlaskClient) -> None:
    deep = "[" * 1500
    page = client.get("/bytes", query_string={"tokenizer": "llama3", "view": "chat", "chat": deep})
    assert page.status_code == 200, page.status_code
    assert b"nested too deeply" in page.data
    shared = client.post("/api/share", json={"tool": "bytes", "tokenizer": "llama3", "view": "chat", "chat": deep})
    assert shared.status_code in (200, 201), shared.data[:300]
    link = client.get("/s/" + shared.json["id"])
    assert link.status_code == 200 and b"nested too deeply" in link.data
    for action in ("chat-add", "chat-remove-0"):  # the editor's buttons read the same field
        pressed = client.post("/bytes", data={"tokenizer": "llama3", "view": "chat", "chat": deep, "action": action})
        assert pressed.status_code in (200, 303), pressed.status_code


def test_deep_json_in_a_job_token_body_is_read_by_the_one_reader(untrusted_app: Flask) -> None:
    from webapp.jobs import tokens

    with untrusted_app.test_request_context("/api/jobs/x/cancel", method="POST", data="[" * 100_000,
                                            content_type="application/json"):
        assert tokens._offered("x") == []  # no token in it: nothing offered, and no RecursionError


# --- row 12: a lone surrogate in a message --------------------------------------------------


def test_a_lone_surrogate_names_the_message_and_the_offset(client: FlaskClient) -> None:
    ref = opened(client, "{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}")
    body = '{"messages": [{"role": "system", "content": "ok"}, {"role": "user", "content": "ab\\ud800c"}]}'
    answer = client.post(f"/api/tokenizers/{ref}/chat", data=body, content_type="application/json")
    assert answer.status_code == 400
    error = answer.json["error"]
    assert error["field"] == "messages"
    assert error["location"] == {"index": 1, "key": "content", "offset": 2}, error
    assert error["message"].startswith("messages[1].content (role user): a lone surrogate U+D800 at offset 2")
    role = '{"messages": [{"role": "us\\udfffer", "content": "ok"}]}'
    answer = client.post(f"/api/tokenizers/{ref}/chat", data=role, content_type="application/json")
    assert answer.json["error"]["location"] == {"index": 0, "key": "role", "offset": 2}
