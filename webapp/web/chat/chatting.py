"""A conversation rendered with a tokenizer's chat template, encoded and shaped for the page and the API.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from webapp.infra import inputs
from webapp.opened import active as act
from webapp.opened.store import Loaded
from webapp.tokenizer import (
    ChatTemplate,
    OutOfTime,
    TokenizerError,
    is_preset,
    load_json,
    preset_chat_template,
    render_chat,
)
from webapp.tokenizer.chat.process import render_chat_isolated
from webapp.tokenizer.chat.tools import json_chars
from webapp.tokenizer.chat.templates import MESSAGE_EXTRAS, PRESET_CHAT_PACKAGES, check_rendered
from webapp.tokenizer.textformats import JsonProblem
from webapp.tokenizer.stages import split_special

#: The roles the Chat view offers (any string is accepted).
ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class ChatCount:
    """A rendered conversation: its text, ids, and the text in (part, is special token) pieces."""

    text: str
    ids: list[int]
    specials: frozenset[str] = frozenset()
    origin: str = ""
    tools: int | None = None  # how many tools were given (None: none, not even an empty list)
    without_tools: int | None = None  # the count of the same conversation rendered without them

    @property
    def count(self) -> int:
        return len(self.ids)

    @property
    def tools_tokens(self) -> int | None:
        """What the tools cost: the count with them less the count without (None: no tools, or the
        template could not render the conversation without them)."""
        return None if self.without_tools is None else self.count - self.without_tools

    @property
    def parts(self) -> list[tuple[str, bool]]:
        """The text cut at its special tokens (the Chat view's boxes; the API never needs them)."""
        return split_special(self.text, self.specials)


def models_with_templates() -> list[str]:
    """The presets whose template ships with the app (the open models, once they are presets)."""
    return [name for name in PRESET_CHAT_PACKAGES if is_preset(name) and preset_chat_template(name) is not None]


def how_to_get_one() -> str:
    """The end of a "no chat template" message: which presets have one, or how to open one."""
    models = models_with_templates()
    choose = f"choose a model that has one ({', '.join(models)}), or " if models else ""
    return choose + "open a tokenizer.json together with its tokenizer_config.json"


def template_for(entry: Loaded) -> tuple[ChatTemplate, str]:
    """(the template, where it comes from), or a TokenizerError (field "chat_template") saying how to get one."""
    if entry.tok.chat:
        return ChatTemplate.from_json(entry.tok.chat), "the tokenizer_config.json opened with it"
    if is_preset(entry.id):
        found = preset_chat_template(entry.id)
        if found is not None:
            return found, f"{entry.id}'s tokenizer_config.json"
    name = entry.id if is_preset(entry.id) else "this tokenizer"
    raise TokenizerError(f"chat_template: {name} has no chat template; {how_to_get_one()}", field="chat_template")


def render_and_count(entry: Loaded, messages: Sequence[Mapping[str, Any]], add_generation_prompt: bool,
                     limits: inputs.Limits, tools: Sequence[Mapping[str, Any]] | None = None) -> ChatCount:
    """Render with the entry's template (sandboxed, bounded), encode as apply_chat_template does; with
    tools, also count the conversation without them (a second rendering), so their cost can be shown."""
    template, origin = template_for(entry)
    # An opened template is untrusted code: it renders in a child process with a memory and a hard time
    # limit. A preset's template ships with the app's packages and renders in-process (docs/chat.md).
    render = render_chat_isolated if entry.tok.chat else render_chat

    def rendered(given: Sequence[Mapping[str, Any]] | None) -> str:
        return check_rendered(render(template, messages, add_generation_prompt=add_generation_prompt, tools=given,
                                     limits=limits.chat))

    text = rendered(tools)
    ids = act.chat_ids(entry, text)
    without = None
    if tools is not None:
        try:
            without = len(act.chat_ids(entry, rendered(None)))
        except OutOfTime:  # (the request's time budget: not the template's doing, so not swallowed below)
            raise
        except TokenizerError:  # (a template that insists on tools: the count with them still stands)
            without = None
    return ChatCount(text, ids, frozenset(entry.tok.special_tokens), origin,
                     None if tools is None else len(tools), without)


def work_of(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> tuple[int, int]:
    """What a chat count is charged (RATE_LIMIT_WORK): the characters of the messages and tools, times
    the renderings (two with tools: with and without them)."""
    chars = sum(len(m["role"]) + len(m["content"]) for m in messages)
    chars += sum(json_chars(m[key]) for m in messages for key in MESSAGE_EXTRAS if key in m)
    if tools is None:
        return chars, 1
    return chars + json_chars(list(tools)), 2


# --- the Bytes page's Chat view ------------------------------------------------------


def starter_messages(text: str) -> str:
    """A new Chat view's conversation: a system message and the page's text as the user's."""
    return json.dumps([{"role": "system", "content": "You are a helpful assistant."},
                       {"role": "user", "content": text}], ensure_ascii=False)


def rows_of(state: Mapping[str, str]) -> list[dict[str, Any]]:
    """The message rows the editor shows: the `chat` field's messages, as far as they are rows of strings.
    What a message holds besides role and content (its tool calls) rides along unedited as JSON in the
    row's `extra`, with the called functions' names to show (`calls`)."""
    try:
        value = load_json(state.get("chat") or "[]")
    except JsonProblem:  # (the Chat view says what is wrong with the field)
        return []
    if not isinstance(value, list):
        return []
    return [_row(m) for m in value if isinstance(m, dict)]


def _row(message: Mapping[str, Any]) -> dict[str, Any]:
    extra = {key: message[key] for key in MESSAGE_EXTRAS if message.get(key) is not None}
    calls = extra.get("tool_calls")
    names = [str(c["function"].get("name", "?")) for c in calls if isinstance(c, dict) and isinstance(
        c.get("function"), dict)] if isinstance(calls, list) else []
    return {"role": str(message.get("role", "")), "content": str(message.get("content", "")),
            "extra": json.dumps(extra, ensure_ascii=False) if extra else "", "calls": names}


def message_of_row(role: str, content: str, extra: str) -> dict[str, Any]:
    """A message from an editor row: its role, its content and what its `extra` JSON carried along
    (only the keys a message may hold besides those two; anything unreadable is dropped)."""
    message: dict[str, Any] = {"role": role, "content": content}
    if extra.strip():
        try:
            carried = load_json(extra)
        except JsonProblem:  # (the server wrote it: only a hand-made form gets here)
            carried = None
        if isinstance(carried, dict):
            message.update({key: carried[key] for key in MESSAGE_EXTRAS if key in carried})
    return message


def page_chat(state: Mapping[str, str], active: act.ActiveTokenizer) -> tuple[dict[str, Any] | None,
                                                                            dict[str, TokenizerError]]:
    """The Chat view of a Bytes page state: (what it shows, errors by field); None outside the Chat view
    (an opened template may take up to LIMIT_CHAT_SECONDS: typing in the other views never waits for it).
    A tokenizer without a template is no input error: the view says how to get one."""
    if state.get("view") != "chat":
        return None, {}
    limits = inputs.current_limits()
    read, errors = inputs.collect({
        "chat": lambda: inputs.read_messages(state.get("chat", ""), limits, form=True),
        "chat_tools": lambda: inputs.read_tools(state.get("chat_tools", ""), limits, form=True),
    })
    if errors:
        return {"ok": False}, errors
    messages, tools = read["chat"], read["chat_tools"]
    if not active.ref:
        return {"ok": False, "note": f"Typed merges have no chat template: {how_to_get_one()}."}, {}
    try:
        entry = active.loaded()
        template_for(entry)
    except TokenizerError as exc:
        return {"ok": False, "note": exc.message.removeprefix("chat_template: ")}, {}
    try:
        counted = render_and_count(entry, messages, state.get("chat_prompt") == "on", limits, tools)
    except TokenizerError as exc:
        return {"ok": False}, {"chat": exc}
    return {"ok": True, "text": counted.text, "count": counted.count, "parts": counted.parts,
            "origin": counted.origin, "chars": len(counted.text), "messages": len(messages),
            "tools": counted.tools, "without_tools": counted.without_tools,
            "tools_tokens": counted.tools_tokens}, {}


#: What "Example tools" fills in: two functions an assistant might be given, in the shape transformers takes.
EXAMPLE_TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "Get the current weather in a city.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "The city, e.g. Paris"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "search_docs", "description": "Search the documentation and return the best passages.",
        "parameters": {"type": "object", "properties": {
            "query": {"type": "string", "description": "What to look for"},
            "limit": {"type": "integer", "description": "How many passages", "minimum": 1}},
            "required": ["query"]}}},
]


def chat_action(state: dict[str, str], action: str) -> bool:
    """The editor's buttons without JavaScript: "chat-add" appends a message, "chat-remove-<n>" removes one,
    "chat-tools-example" fills the tools box with EXAMPLE_TOOLS."""
    if action == "chat-tools-example":
        state["chat_tools"] = json.dumps(EXAMPLE_TOOLS, ensure_ascii=False, indent=2)
        return True
    rows = rows_of(state)
    if action == "chat-add":
        last = rows[-1]["role"] if rows else "assistant"
        rows.append({"role": "assistant" if last == "user" else "user", "content": "", "extra": ""})
    elif action.startswith("chat-remove-") and action[len("chat-remove-"):].isascii() and action[len("chat-remove-"):].isdigit():
        index = int(action[len("chat-remove-"):])
        if not 0 <= index < len(rows):
            return False
        del rows[index]
    else:
        return False
    state["chat"] = json.dumps([message_of_row(r["role"], r["content"], r["extra"]) for r in rows],
                               ensure_ascii=False)
    return True
