"""What a tool page's state is made of: its fields, views, error slots and defaults.

A page's whole state is its form fields (strings); `normalize_state` makes a
complete state from any mapping, `example_state` from a seed example. What it
does not do: compute (webapp.web.playground.compute) or render (webapp.web.playground.pages).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from webapp.infra import inputs
from webapp.web.chat.chatting import message_of_row, starter_messages

from webapp.web.playground.examples import EXAMPLES
from webapp.tokenizer import get_preset, is_preset


TOOL_TITLES = {"bytes": "Bytes", "chars": "Characters", "train": "Train"}

# The form fields of each tool page, i.e. what a page's state is made of.
FIELDS: dict[str, tuple[str, ...]] = {
    "bytes": ("text", "merges", "pretokenize", "ids", "vocab", "view", "tokenizer", "special",
              "compare", "compare_merges", "compare_pretokenize", "compare_special",  # compare_*: webapp.web.compare.page
              "tokens_from", "chat", "chat_prompt", "chat_tools", "story", "mark"),  # tokens_from: the page of spans shown (compute.token_window);
    # chat, chat_prompt, chat_tools: the Chat view (webapp.web.chat.chatting): messages as JSON, "on", tools as JSON;
    # story: the boundary (from 0) whose story the Trace view shows (webapp.web.explain.story);
    # mark: a token id whose spans are outlined (the Vocabulary card's witness link)
    "chars": ("text", "merges", "vocab", "view", "tokenizer", "tokens_from"),
    "train": ("words", "num_merges", "view"),
}
VIEWS: dict[str, tuple[tuple[str, str], ...]] = {
    "bytes": (("tokens", "Tokens"), ("ids", "Ids"), ("trace", "Trace"), ("chat", "Chat")),
    "chars": (("tokens", "Tokens"), ("ids", "Ids"), ("trace", "Trace")),
    "train": (("steps", "Steps"), ("words", "Words")),
}
# Fields whose error slot sits beside an input (for the out-of-band swaps).
ERROR_FIELDS: dict[str, tuple[str, ...]] = {
    "bytes": ("text", "merges", "pretokenize", "ids", "vocab", "compare", "compare_merges", "compare_pretokenize",
              "chat", "chat_tools"),
    "chars": ("text", "merges", "vocab"),
    "train": ("words", "num_merges"),
}


DEFAULT_STATE: dict[str, dict[str, str]] = {
    "bytes": {"text": "", "merges": "", "pretokenize": "none", "ids": "", "vocab": "", "view": "tokens", "tokenizer": "",
              "special": "", "compare": "", "compare_merges": "", "compare_pretokenize": "", "compare_special": "",
              "tokens_from": "", "chat": "", "chat_prompt": "", "chat_tools": "", "story": "", "mark": ""},
    "chars": {"text": "", "merges": "", "vocab": "", "view": "tokens", "tokenizer": "", "tokens_from": ""},
    "train": {"words": "", "num_merges": "10", "view": "steps"},
}


def normalize_state(tool: str, raw: Mapping[str, Any]) -> dict[str, str]:
    """The tool's fields from a mapping of strings; missing fields get defaults."""
    state = dict(DEFAULT_STATE[tool])
    for name in FIELDS[tool]:
        value = raw.get(name)
        if isinstance(value, str):
            state[name] = value
    if tool == "bytes" and "chat_rows" in raw:
        state["chat"] = chat_rows_json(raw)  # the Chat view's editor rows are the messages
    elif tool == "bytes" and not state["chat"]:
        state["chat"] = starter_messages(state["text"])  # a first conversation: the text as the user's message
    if state.get("view") not in {key for key, _ in VIEWS[tool]}:
        state["view"] = VIEWS[tool][0][0]
    if tool == "bytes" and not isinstance(raw.get("pretokenize"), str) and is_preset(state["tokenizer"]):
        # /bytes?tokenizer=o200k_base: a preset splits text with its own pattern unless told otherwise
        state["pretokenize"] = get_preset(state["tokenizer"]).scheme
    return state


def chat_rows_json(raw: Mapping[str, Any]) -> str:
    """The Chat editor's rows (repeated chat_role / chat_content / chat_extra fields, in order) as the
    `chat` field's JSON; a row's chat_extra carries its tool calls (a form without them: none)."""
    getlist = getattr(raw, "getlist", None)
    roles = getlist("chat_role") if getlist else [raw.get("chat_role", "")]
    contents = getlist("chat_content") if getlist else [raw.get("chat_content", "")]
    extras = getlist("chat_extra") if getlist else [raw.get("chat_extra", "")]
    extras = list(extras) + [""] * (len(roles) - len(extras))
    rows = [message_of_row(r, inputs.normalize_newlines(c), e if isinstance(e, str) else "")
            for r, c, e in zip(roles, contents, extras) if isinstance(r, str) and isinstance(c, str)]
    return json.dumps(rows, ensure_ascii=False)


def example_state(tool: str, key: str | None) -> dict[str, str] | None:
    for example in EXAMPLES[tool]:
        if key is None or example.key == key:
            return normalize_state(tool, example.state)
    return None
