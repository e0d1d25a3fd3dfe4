"""Tools in chat (webapp/tokenizer/chat/tools.py, templates.py): checking `tools` and `tool_calls`, and
rendering them as transformers' `apply_chat_template(messages, tools=...)` does.

Of the presets only qwen3's template writes the tools into the prompt; llama3's, deepseek_v3's and
gemma3's ignore them (deepseek_v3 reads `tool_calls` only when a message's content is null, which a
message here cannot be), and they must agree with transformers on that too. So the second template that
reads tools is one written here, and so is a config with a named "tool_use" template.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from webapp.tokenizer import ChatTemplate, TokenizerError, preset_chat_template, render_chat
from webapp.tokenizer.chat.process import render_chat_isolated
from webapp.tokenizer.chat.templates import ChatLimits, preset_config_path, validate_messages, validate_tools

#: Three function specs as an agent would be given them (transformers' / OpenAI's shape).
TOOLS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather for a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "City name, e.g. \"Paris\""},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"], "description": "Temperature unit"}},
            "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_web", "description": "Search the web and return the top results as title, URL and snippet.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string"}, "max_results": {"type": "integer", "minimum": 1, "maximum": 10}},
            "required": ["query"]}}},
    {"type": "function", "function": {
        "name": "send_email", "description": "Send an email on the user's behalf. Ask before sending.",
        "parameters": {"type": "object", "properties": {
            "to": {"type": "array", "items": {"type": "string", "format": "email"}},
            "subject": {"type": "string"}, "body": {"type": "string"}, "urgent": {"type": "boolean", "default": False}},
            "required": ["to", "subject", "body"]}, "strict": True}},
]

#: A conversation with a tool call (arguments as an object and as JSON text) and the tools' answers.
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "You are a travel assistant. Be brief."},
    {"role": "user", "content": "What's the weather in Paris and Tōkyō right now?"},
    {"role": "assistant", "content": "", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
        {"id": "call_2", "type": "function",
         "function": {"name": "get_weather", "arguments": "{\"city\": \"Tōkyō\", \"unit\": \"celsius\"}"}}]},
    {"role": "tool", "content": "{\"temp\": 21, \"sky\": \"clear\"}", "tool_call_id": "call_1"},
    {"role": "tool", "content": "{\"temp\": 27, \"sky\": \"rain\"}", "tool_call_id": "call_2"},
    {"role": "assistant", "content": "Paris: 21 °C and clear. Tōkyō: 27 °C with rain."},
    {"role": "user", "content": "Email that to ana@example.org."},
]

#: A template that reads tools, written here (no preset but qwen3 has one): the specs in a system turn
#: with tojson(indent=4) when `tools is not none`, tool calls as JSON, tool answers as their own turn.
TOOLS_AWARE = """{{- bos_token }}
{%- if tools is not none %}<|start_header_id|>system<|end_header_id|>

You may call these functions ({{ tools | length }}):
{% for tool in tools %}{{ tool | tojson(indent=4) }}
{% endfor %}<|eot_id|>
{%- endif %}
{%- for m in messages %}<|start_header_id|>{{ 'ipython' if m.role == 'tool' else m.role }}<|end_header_id|>

{% if m.tool_calls is defined %}{% for call in m.tool_calls %}{"name": "{{ call.function.name }}", "parameters": {{ call.function.arguments | tojson if call.function.arguments is mapping else call.function.arguments }}}{% endfor %}{% else %}{{ m.content | trim }}{% endif %}<|eot_id|>
{%- endfor %}
{%- if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>

{% endif %}"""


def library(model: str, template: str | dict[str, str] | None = None) -> Any:
    """transformers' tokenizer of a preset's files, with its template or the one given."""
    transformers = pytest.importorskip("transformers")
    shipped = preset_chat_template(model)
    path = preset_config_path(model)
    assert shipped is not None and path is not None
    return transformers.PreTrainedTokenizerFast(
        tokenizer_file=str(path.parent / "tokenizer.json"), chat_template=template or shipped.template,
        bos_token=shipped.bos_token, eos_token=shipped.eos_token)


# --- rendering, against transformers ------------------------------------------------------------


@pytest.mark.parametrize("prompt", [False, True])
def test_qwen3_writes_the_tools_as_transformers_does(prompt: bool) -> None:
    template = preset_chat_template("qwen3")
    assert template is not None
    tools, messages = validate_tools(TOOLS), validate_messages(CONVERSATION)
    ours = render_chat(template, messages, tools=tools, add_generation_prompt=prompt)
    assert ours == library("qwen3").apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False,
                                                        add_generation_prompt=prompt)
    # what a reader would check by eye: the specs one per line in <tools>, in order, keys as given
    specs = ours.split("<tools>\n", 1)[1].split("\n</tools>", 1)[0].split("\n")
    assert [json.loads(line) for line in specs] == TOOLS
    assert '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>' in ours
    assert '"arguments": {"city": "Tōkyō", "unit": "celsius"}}' in ours  # JSON text written as it is
    assert "<tool_response>\n{\"temp\": 27, \"sky\": \"rain\"}\n</tool_response>" in ours
    without = render_chat(template, messages, add_generation_prompt=prompt)
    assert "# Tools" not in without and without == library("qwen3").apply_chat_template(
        CONVERSATION, tokenize=False, add_generation_prompt=prompt)


@pytest.mark.parametrize("model", ["llama3", "deepseek_v3"])
def test_presets_that_ignore_tools_agree_with_transformers(model: str) -> None:
    template = preset_chat_template(model)
    assert template is not None
    ours = render_chat(template, validate_messages(CONVERSATION), tools=validate_tools(TOOLS))
    assert ours == library(model).apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    assert ours == render_chat(template, validate_messages(CONVERSATION))  # the tools change nothing here


def test_gemma3_refuses_a_tool_turn_as_transformers_does() -> None:
    template = preset_chat_template("gemma3")
    assert template is not None
    with pytest.raises(Exception, match="roles must alternate"):
        library("gemma3").apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False)
    with pytest.raises(TokenizerError, match="roles must alternate") as exc:
        render_chat(template, validate_messages(CONVERSATION), tools=validate_tools(TOOLS))
    assert exc.value.field == "chat_template"


@pytest.mark.parametrize("prompt", [False, True])
def test_a_template_that_reads_tools_renders_as_transformers(prompt: bool) -> None:
    ours = render_chat(ChatTemplate(TOOLS_AWARE, "<|begin_of_text|>"), validate_messages(CONVERSATION),
                       tools=validate_tools(TOOLS), add_generation_prompt=prompt)
    theirs = library("llama3", TOOLS_AWARE).apply_chat_template(CONVERSATION, tools=TOOLS, tokenize=False,
                                                                 add_generation_prompt=prompt)
    assert ours == theirs
    assert "You may call these functions (3):\n{\n    \"type\": \"function\"," in ours


@pytest.mark.parametrize("tools", [None, [], TOOLS[:1]])
def test_the_template_sees_tools_as_transformers_passes_them(tools: list[dict[str, Any]] | None) -> None:
    # transformers always defines `tools` (None when none are given) and `documents` (None here)
    source = "{{ tools is defined }}|{{ tools is none }}|{{ tools | tojson }}|{{ documents is defined }}" \
             "|{{ documents is none }}|{% if tools %}some{% else %}none{% endif %}"
    given = None if tools is None else validate_tools(tools)
    ours = render_chat(ChatTemplate(source), [{"role": "user", "content": "x"}], tools=given)
    assert ours == library("llama3", source).apply_chat_template([{"role": "user", "content": "x"}], tools=tools,
                                                                 tokenize=False)
    assert ours.startswith("True|True|null|True|True|none" if tools is None else "True|False|")


def test_a_named_tool_use_template_is_chosen_when_tools_are_given() -> None:
    named = {"default": "D:{{ tools is none }}", "tool_use": "T:{{ tools | length }}"}
    template = ChatTemplate(named["default"], tool_use=named["tool_use"])
    lib = library("llama3")
    lib.chat_template = named  # transformers' named templates: "tool_use" when tools is not None
    messages = [{"role": "user", "content": "x"}]
    for tools in (None, [], TOOLS):
        ours = render_chat(template, messages, tools=None if tools is None else validate_tools(tools))
        assert ours == lib.apply_chat_template(messages, tools=tools, tokenize=False)
    assert render_chat(template, messages) == "D:True"
    assert render_chat(template, messages, tools=()) == "T:0"  # an empty list is given tools, as there


def test_an_opened_template_gets_the_tools_in_its_own_process() -> None:
    template = ChatTemplate(TOOLS_AWARE, "<|begin_of_text|>")
    messages, tools = validate_messages(CONVERSATION), validate_tools(TOOLS)
    assert render_chat_isolated(template, messages, tools=tools) == render_chat(template, messages, tools=tools)
    named = ChatTemplate("D", tool_use="T{{ tools | length }}")
    assert render_chat_isolated(named, messages, tools=tools) == "T3"


# --- what is accepted, and every problem named with its place ------------------------------------


def test_checked_values_are_plain_copies_in_their_order() -> None:
    original = copy.deepcopy(TOOLS)
    checked = validate_tools(original)
    assert list(checked) == TOOLS and list(checked[2]["function"]) == ["name", "description", "parameters", "strict"]
    original[0]["function"]["name"] = "changed"
    assert checked[0]["function"]["name"] == "get_weather"  # a copy: what was checked is what renders
    messages = validate_messages([*CONVERSATION, {"role": "user", "content": "x", "tool_calls": None,
                                                  "tool_call_id": None}])
    assert messages[:-1] == tuple(CONVERSATION)
    assert messages[-1] == {"role": "user", "content": "x"}  # null is as if absent (transformers drops it)
    assert validate_tools([]) == ()


@pytest.mark.parametrize("value, message, location", [
    ({"type": "function"}, "tools: expected a list of tools", {}),
    ([TOOLS[0], "get_weather"], "tools[1]: expected an object {\"type\": \"function\", \"function\": {...}}, got a "
     "string", {"index": 1, "path": []}),
    ([{"type": "function", "name": "f", "parameters": {}}], "tools[0]: unknown key 'name'; a tool has type and "
     "function", {"index": 0, "key": "name", "path": []}),
    ([{"function": {"name": "f"}}], "tools[0]: type is missing", {"index": 0, "key": "type", "path": []}),
    ([{"type": "tool", "function": {"name": "f"}}], "tools[0].type: expected \"function\", got 'tool'",
     {"index": 0, "path": ["type"]}),
    ([{"type": "function", "function": "f"}], "tools[0].function: expected an object with a name, got a string",
     {"index": 0, "path": ["function"]}),
    ([TOOLS[0], TOOLS[1], {"type": "function", "function": {"name": 7}}],
     "tools[2].function.name: expected a string, got a number", {"index": 2, "path": ["function", "name"]}),
    ([{"type": "function", "function": {"description": "d"}}], "tools[0].function.name: is missing",
     {"index": 0, "path": ["function", "name"]}),
    ([{"type": "function", "function": {"name": ""}}], "tools[0].function.name: expected a name, got an empty "
     "string", {"index": 0, "path": ["function", "name"]}),
    ([{"type": "function", "function": {"name": "f", "description": ["d"]}}],
     "tools[0].function.description: expected a string, got a list", {"index": 0, "path": ["function", "description"]}),
    ([{"type": "function", "function": {"name": "f", "parameters": "{}"}}],
     "tools[0].function.parameters: expected an object (a JSON schema), got a string",
     {"index": 0, "path": ["function", "parameters"]}),
    ([{"type": "function", "function": {"name": "f", "parameters": {"properties": {"a b": {"default": float("inf")}}}}}],
     "tools[0].function.parameters.properties[\"a b\"].default: expected a finite number, got inf",
     {"index": 0, "path": ["function", "parameters", "properties", "a b", "default"]}),
    ([{"type": "function", "function": {"name": "f\ud800"}}], "tools[0].function.name: a lone surrogate U+D800 at "
     "offset 1", {"index": 0, "path": ["function", "name"], "offset": 1}),
    ([{"type": "function", "function": {"name": "f", "parameters": {"\udfff": 1}}}],
     "tools[0].function.parameters: a key holds a lone surrogate U+DFFF at offset 0",
     {"index": 0, "path": ["function", "parameters"]}),
    ([{"type": "function", "function": {"name": "f", "return": {"x": (1, 2)}}}],
     "tools[0].function.return.x: expected a JSON value, got tuple", {"index": 0, "path": ["function", "return", "x"]}),
])
def test_bad_tools_are_named_with_their_place(value: Any, message: str, location: dict[str, Any]) -> None:
    with pytest.raises(TokenizerError) as exc:
        validate_tools(value)
    assert exc.value.field == "tools"
    assert exc.value.message.startswith(message), exc.value.message
    assert exc.value.location == location


@pytest.mark.parametrize("extra, message, location", [
    ({"tool_calls": {"function": {}}}, "messages[1].tool_calls: expected a list of tool calls, got an object",
     {"index": 1, "path": ["tool_calls"]}),
    ({"tool_calls": [{"function": {"name": "f", "arguments": {}}}, "f"]},
     "messages[1].tool_calls[1]: expected an object {\"function\": {\"name\", \"arguments\"}}, got a string",
     {"index": 1, "path": ["tool_calls", 1]}),
    ({"tool_calls": [{"name": "f", "arguments": {}}]}, "messages[1].tool_calls[0]: unknown key 'name'; a tool call "
     "has id, type and function", {"index": 1, "key": "name", "path": ["tool_calls", 0]}),
    ({"tool_calls": [{"function": {"name": "f"}}]}, "messages[1].tool_calls[0].function: arguments is missing",
     {"index": 1, "key": "arguments", "path": ["tool_calls", 0, "function"]}),
    ({"tool_calls": [{"id": 1, "function": {"name": "f", "arguments": {}}}]},
     "messages[1].tool_calls[0].id: expected a string, got a number", {"index": 1, "path": ["tool_calls", 0, "id"]}),
    ({"tool_calls": [{"function": {"name": "f", "arguments": 3}}]},
     "messages[1].tool_calls[0].function.arguments: expected an object or JSON text, got a number",
     {"index": 1, "path": ["tool_calls", 0, "function", "arguments"]}),
    ({"tool_calls": [{"function": {"name": "f", "arguments": {"q": "\ud83d"}}}]},
     "messages[1].tool_calls[0].function.arguments.q: a lone surrogate U+D83D at offset 0",
     {"index": 1, "path": ["tool_calls", 0, "function", "arguments", "q"], "offset": 0}),
    ({"tool_call_id": 5}, "messages[1].tool_call_id: expected a string, got a number",
     {"index": 1, "key": "tool_call_id"}),
    ({"name": "x"}, "messages[1]: unknown key 'name'; a message has role and content (and tool_calls, tool_call_id)",
     {"index": 1, "key": "name"}),
])
def test_bad_tool_calls_are_named_with_their_place(extra: dict[str, Any], message: str,
                                                    location: dict[str, Any]) -> None:
    with pytest.raises(TokenizerError) as exc:
        validate_messages([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", **extra}])
    assert exc.value.field == "messages"
    assert exc.value.message.startswith(message), exc.value.message
    assert exc.value.location == location


def test_tools_are_bounded_in_number_size_and_depth() -> None:
    with pytest.raises(TokenizerError) as exc:
        validate_tools(TOOLS * 2, ChatLimits(tools=5))
    assert exc.value.message == "tools: 6 tools is over the limit of 5 tools (setting LIMIT_CHAT_TOOLS)"
    assert exc.value.location == {"limit": 5}
    assert len(validate_tools([TOOLS[0]] * 128)) == 128  # the default limit
    with pytest.raises(TokenizerError, match="129 tools is over the limit of 128 tools"):
        validate_tools([TOOLS[0]] * 129)
    size = len(json.dumps(TOOLS, ensure_ascii=False, separators=(",", ":")))
    assert validate_tools(TOOLS, ChatLimits(message_chars=size)) == tuple(TOOLS)  # compact JSON, counted exactly
    with pytest.raises(TokenizerError) as exc:
        validate_tools(TOOLS, ChatLimits(message_chars=size - 1))
    assert exc.value.message == (f"tools: the tools' JSON is over {size - 1:,} characters, the limit "
                                 "(setting LIMIT_TEXT_CHARS)")
    assert exc.value.location == {"index": 2, "limit": size - 1}
    # a list of a million nulls is refused as soon as the count passes the limit, not after the walk
    with pytest.raises(TokenizerError, match="over 1,000 characters"):
        validate_tools([{"type": "function", "function": {"name": "f", "x": [None] * 1_000_000}}],
                       ChatLimits(message_chars=1_000))
    deep: Any = 1
    for _ in range(70):
        deep = {"d": deep}
    with pytest.raises(TokenizerError, match="nested more than 64 levels"):
        validate_tools([{"type": "function", "function": {"name": "f", "parameters": deep}}])


def test_tool_calls_count_against_the_messages_characters() -> None:
    call = {"role": "assistant", "content": "", "tool_calls": [
        {"function": {"name": "f", "arguments": {"q": "x" * 200}}}]}
    validate_messages([call], ChatLimits(message_chars=300))
    with pytest.raises(TokenizerError) as exc:
        validate_messages([call], ChatLimits(message_chars=150))
    assert "the messages hold over 150 characters" in exc.value.message and exc.value.location["index"] == 0
