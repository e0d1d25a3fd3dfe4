"""Counts with tools, through the Flask test client: `POST /api/counts` with `tools` and the Counts page's Tools box.

Oracles: for qwen3 (whose template writes the tools into the prompt) the row's tools cost must be the chat
API's `tools_tokens` for the same one-message conversation and tools, and both must be transformers'
`apply_chat_template(messages, tools=tools)` less `apply_chat_template(messages)`; the presets without a
chat template say so, and those whose template ignores tools give 0 with a note, as the chat API's 0.
Bodies go as raw JSON: the test client's `json=` sorts keys, and qwen3 writes a tool's keys in their order.
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

from tests.app.test_chat_api import opened_with_template
from tests.app.test_chat_tools_api import _tools as nearly_tools, post_json, transformers_ids
from tests.conftest import INLINE_ONLY, make_app
from tests.hypothesis_profiles import examples
from tests.unit.tokenizer.chat.test_chat_tools import TOOLS
from webapp.infra.storage import get_storage
from webapp.tokenizer import PRESET_NAMES, is_installed
from webapp.tokenizer.chat.templates import preset_chat_template
from webapp.web.counts.counting import IGNORES_TOOLS, NO_TEMPLATE
from webapp.web.counts.kinds import FORK_UNITS, CountsWork, work_of

TEXT = "What's the weather in Paris and Tōkyō right now?"
CONVERSATION = [{"role": "user", "content": TEXT}]
#: The presets whose shipped template takes no notice of the tools (docs/chat.md#tools).
IGNORING = ("llama3", "deepseek_v3", "gemma3")


@pytest.fixture(scope="module")
def counts_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Flask]:
    application = make_app(tmp_path_factory.mktemp("counts-tools"), **INLINE_ONLY, LIMIT_CHAT_TOOLS=4)
    yield application
    get_storage(application).dispose()


@pytest.fixture(scope="module")
def client(counts_app: Flask) -> FlaskClient:
    return counts_app.test_client()


@pytest.fixture(scope="module")
def every_preset(client: FlaskClient) -> dict[str, dict[str, Any]]:
    """Every preset's row for TEXT with TOOLS (counted once for the tests below)."""
    answer = post_json(client, "/api/counts", {"text": TEXT, "tools": TOOLS})
    assert answer.status_code == 200, answer.json
    return {row["tokenizer"]: row for row in answer.json["counts"]}


def chat_tools_tokens(client: FlaskClient, ref: str) -> int:
    answer = post_json(client, f"/api/tokenizers/{ref}/chat", {"messages": CONVERSATION, "tools": TOOLS})
    assert answer.status_code == 200, answer.json
    return int(answer.json["tools_tokens"])


def test_qwen3s_tools_cost_is_the_chat_apis_and_transformers(client: FlaskClient,
                                                              every_preset: dict[str, dict[str, Any]]) -> None:
    if not is_installed("qwen3"):
        pytest.skip("the qwen3 preset is not prepared here")
    row = every_preset["qwen3"]
    by_transformers = len(transformers_ids(CONVERSATION, TOOLS, False)) - len(transformers_ids(CONVERSATION, None,
                                                                                               False))
    assert row["tools_tokens"] == chat_tools_tokens(client, "qwen3") == by_transformers > 300
    assert "tools_note" not in row
    # the text's own count is the plain one, as without tools
    plain = client.post("/api/counts", json={"text": TEXT, "tokenizers": ["qwen3"]}).json["counts"][0]
    assert plain == {key: row[key] for key in plain} and "tools_tokens" not in plain


def test_presets_without_a_template_say_so_and_ignoring_templates_give_0(
        client: FlaskClient, every_preset: dict[str, dict[str, Any]]) -> None:
    assert list(every_preset) == list(PRESET_NAMES)
    for name, row in every_preset.items():
        if not is_installed(name):
            assert row["tools_tokens"] is None and "not installed" in row["error"]
        elif preset_chat_template(name) is None:
            assert row["tools_tokens"] is None and row["tools_note"] == NO_TEMPLATE, row
            assert isinstance(row["tokens"], int)  # the text is counted all the same
    for name in IGNORING:
        if is_installed(name):
            assert every_preset[name]["tools_tokens"] == 0 == chat_tools_tokens(client, name)
            assert every_preset[name]["tools_note"] == IGNORES_TOOLS


def test_an_opened_template_is_given_the_tools(client: FlaskClient) -> None:
    ref = opened_with_template(client, "{{ bos_token }}{% for t in tools or [] %}ab{% endfor %}"
                                       "{% for m in messages %}{{ m.content }}{% endfor %}")
    body = post_json(client, "/api/counts", {"text": "ab", "tokenizers": [ref, "no_such_tokenizer"],
                                             "tools": TOOLS}).json
    assert body["counts"][0] == {"tokenizer": ref, "tokens": 1, "chars_per_token": 2.0, "bytes_per_token": 2.0,
                                 "tools_tokens": 3}  # <s>abababab less <s>ab: three tools, one "ab" each
    assert body["counts"][1]["tools_tokens"] is None and body["counts"][1]["error"]
    insists = opened_with_template(client, "{% if tools is none %}{{ raise_exception('tools, please') }}{% endif %}"
                                           "{{ messages[0].content }}")
    row = post_json(client, "/api/counts", {"text": "ab", "tokenizers": [insists], "tools": TOOLS}).json["counts"][0]
    assert row["tokens"] == 1 and row["tools_tokens"] is None and "without tools" in row["tools_note"]


@pytest.mark.parametrize("tools, message, location", [
    ({"type": "function"}, "tools: expected a list of tools", {}),
    ([TOOLS[0], {"type": "function", "function": {"name": 3}}], "tools[1].function.name: expected a string, got a "
                                                                "number", {"index": 1, "path": ["function", "name"]}),
    ([TOOLS[0]] * 5, "tools: 5 tools is over the limit of 4 tools (setting LIMIT_CHAT_TOOLS)", {"limit": 4}),
])
def test_bad_tools_are_a_400_naming_tools_and_the_place(client: FlaskClient, tools: Any, message: str,
                                                        location: dict[str, Any]) -> None:
    answer = post_json(client, "/api/counts", {"text": TEXT, "tools": tools})
    assert answer.status_code == 400
    error = answer.json["error"]
    assert error["field"] == "tools" and error["message"].startswith(message), error
    assert error.get("location", {}) == location


def test_any_tools_give_an_answer_or_a_400_never_a_500(client: FlaskClient) -> None:
    @settings(max_examples=examples(30), deadline=None, database=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(tools=nearly_tools)
    def run(tools: Any) -> None:
        answer = post_json(client, "/api/counts", {"text": "x", "tokenizers": ["cl100k_base", "qwen3"], "tools": tools})
        assert answer.status_code in (200, 400), answer.json
        if answer.status_code == 400:
            assert answer.json["error"]["field"] == "tools" and answer.json["error"]["message"].startswith("tools")
        else:  # (null is no tools: the answer as without them)
            assert all(("tools_tokens" in row) == (tools is not None) for row in answer.json["counts"])
        page = client.post("/fragments/counts", data={"text": "x", "tools": json.dumps(tools)})
        assert page.status_code == 200

    run()


def test_the_work_counts_each_rendering() -> None:
    assert work_of("abc", ["cl100k_base", "qwen3"]) == CountsWork(3, 2)
    with_tools = work_of("abc", ["cl100k_base", "qwen3", "an-opened-id"], TOOLS)
    tools_chars = len(json.dumps(TOOLS, ensure_ascii=False, separators=(",", ":")))
    # qwen3 (if prepared here) and the opened id (whose template is only known once it is open) may render;
    # an opened template renders in a child process, which costs FORK_UNITS a rendering besides its characters
    templates = 2 if is_installed("qwen3") else 1
    assert with_tools == CountsWork(3, 3, len("user") + 3 + tools_chars, 2, templates, 1)
    assert with_tools.units == 3 * 3 + (7 + tools_chars) * 2 * templates + FORK_UNITS * 2
    assert "x 2 renderings" in with_tools.described() and "opened templates" in with_tools.described()
    assert work_of("abc", ["cl100k_base"], TOOLS) == CountsWork(3, 1, 7 + tools_chars, 2, 0, 0)


def test_big_tools_make_a_job_sooner(tmp_path: Any) -> None:
    app = make_app(tmp_path, JOB_COUNTS_WORK=1_000, RATE_LIMIT_WORK="")
    client = app.test_client()
    try:
        body = {"text": "a" * 200, "tokenizers": ["cl100k_base", "qwen3"]}
        assert client.post("/api/counts", json=body).status_code == 200  # 400 units: inline
        answer = post_json(client, "/api/counts", {**body, "tools": TOOLS})  # and two renderings of the tools
        assert answer.status_code == 202 and answer.json["kind"] == "counts"
    finally:
        get_storage(app).dispose()


def test_the_429_names_the_renderings(tmp_path: Any) -> None:
    app = make_app(tmp_path, **INLINE_ONLY, RATE_LIMIT_WORK="2000/minute")
    client = app.test_client()
    try:
        answer = post_json(client, "/api/counts", {"text": "a" * 100, "tokenizers": ["qwen3"], "tools": TOOLS})
        assert answer.status_code == 429
        assert "x 2 renderings x 1 chat templates for the tools' cost" in answer.json["error"]["message"]
    finally:
        get_storage(app).dispose()


# --- the Counts page ------------------------------------------------------------------------------


def box(page: str) -> str:
    """What the Tools box holds."""
    return html.unescape(page.split('id="f-tools"', 1)[1].split(">\n", 1)[1].split("</textarea>")[0])


def tools_cells(page: str) -> dict[str, str]:
    """Each row's tools cell as text, in the table's order (rows with an error have none)."""
    cells = {}
    for row in page.split('<tr data-tokenizer="')[1:]:
        name, rest = row.split('"', 1)
        cell = re.search(r'<td data-col="tools_tokens">(.*?)</td>', rest.split("</tr>")[0], re.S)
        if cell:
            cells[name] = html.unescape(re.sub(r"<[^>]+>", "", cell.group(1))).strip()
    return cells


def test_the_page_shows_the_tools_column_and_keeps_the_box_in_the_url(client: FlaskClient) -> None:
    typed = json.dumps(TOOLS, indent=2)
    page = client.get("/counts", query_string={"text": TEXT, "tools": typed, "sort": "-tools_tokens"}).data.decode()
    assert box(page) == typed and '<details class="chat-tools" id="counts-tools" open>' in page
    assert 'id="counts-tools-explained"' in page and "3 tools cost each model" in page
    assert 'aria-sort="descending"' in page.split('data-sort="tools_tokens"')[0].rsplit("<th", 1)[1]
    shown = tools_cells(page)
    assert list(shown) == [name for name in sorted(
        PRESET_NAMES, key=lambda n: (preset_chat_template(n) is None, n != "qwen3", n))
        if is_installed(name)]  # qwen3 first (the most), the zeros, then the rows without a number
    if is_installed("qwen3"):
        assert int(shown["qwen3"].replace(",", "")) == chat_tools_tokens(client, "qwen3")
    assert shown["cl100k_base"] == NO_TEMPLATE
    # no tools: no column, and the box is folded
    plain = client.get("/counts", query_string={"text": TEXT}).data.decode()
    assert 'data-col="tools_tokens"' not in plain and '<details class="chat-tools" id="counts-tools">' in plain


def test_a_bad_box_keeps_what_was_typed_and_says_where(client: FlaskClient) -> None:
    typed = '[{"type": "function", "function": {"name": 7}}]'
    page = client.post("/counts", data={"text": TEXT, "tools": typed}).data.decode()
    assert box(page) == typed and '<details class="chat-tools" id="counts-tools" open>' in page
    assert 'id="error-tools" role="alert">tools[0].function.name: expected a string, got a number' in page
    assert 'aria-invalid="true"' in page and 'id="counts-tools-wait"' in page
    assert 'data-col="tokens"' not in page  # nothing is counted until the tools are right
    # the live update says it out of band, and clears it once the box is right
    fragment = client.post("/fragments/counts", data={"text": TEXT, "tools": typed}).data.decode()
    assert 'id="error-tools" role="alert" hx-swap-oob="true">tools[0].function.name' in fragment
    fixed = client.post("/fragments/counts", data={"text": TEXT, "tools": "[]"}).data.decode()
    assert 'id="error-tools" role="alert" hx-swap-oob="true"></p>' in fixed
    assert 'data-col="tools_tokens"' in fixed and "0 tools cost each model" in fixed
    # a JSON mistake names its line and column
    unfinished = client.post("/counts", data={"text": TEXT, "tools": "[{"}).data.decode()
    assert 'id="error-tools" role="alert">tools: invalid JSON at line 1, column 3' in unfinished
    assert box(unfinished) == "[{"


def test_example_tools_fill_the_box(client: FlaskClient) -> None:
    fragment = client.post("/fragments/counts", data={"text": TEXT, "tools": "",
                                                      "action": "counts-tools-example"}).data.decode()
    assert '<details class="chat-tools" id="counts-tools" open hx-swap-oob="true">' in fragment
    assert "get_weather" in box(fragment) and 'data-col="tools_tokens"' in fragment
    page = client.post("/counts", data={"text": TEXT, "action": "counts-tools-example"}).data.decode()
    assert json.loads(box(page))[0]["function"]["name"] == "get_weather"
