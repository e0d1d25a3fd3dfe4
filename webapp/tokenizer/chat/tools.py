"""Tools in a conversation: the `tools` a chat template is given, and an assistant message's `tool_calls`.

`check_tools(value, max_tools, max_chars)` takes a list of function specs in the OpenAI / transformers
shape, `{"type": "function", "function": {"name", "description", "parameters", ...}}`;
`check_tool_calls` a message's `[{"id"?, "type"?, "function": {"name", "arguments"}}]`. Both give back
plain JSON in the order it came (what transformers hands a template), its compact-JSON characters counted
as it is walked (so the walk is bounded too); every problem is a TokenizerError naming the field and the
place (`tools[2].function.name: expected a string, got a number`). What it does not do: render
(chat/templates.py) or read a page's text (webapp.infra.inputs).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field as dataclass_field
from typing import Any

from webapp.tokenizer.errors import TokenizerError, json_type, short_repr
from webapp.tokenizer.textformats import MAX_JSON_DEPTH

#: The keys of one tool (OpenAI's and transformers' shape; anything else is likely a mistake, e.g. the
#: Responses API's flattened `{"type", "name", "parameters"}`).
TOOL_KEYS = ("type", "function")
#: The keys of one tool call in a message.
CALL_KEYS = ("id", "type", "function")


@dataclass
class Budget:
    """Compact-JSON characters counted so far against a limit; `over` says what to report past it."""

    limit: int
    over: str
    used: int = 0
    location: dict[str, Any] = dataclass_field(default_factory=dict)

    def spend(self, chars: int, field: str) -> None:
        self.used += chars
        if self.used > self.limit:
            raise TokenizerError(self.over, field=field, location={**self.location, "limit": self.limit})


def place(where: str, path: list[str | int]) -> str:
    """`tools[2]` + ["function", "name"] -> `tools[2].function.name` (odd keys quoted: `.properties["a b"]`)."""
    out = where
    for step in path:
        if isinstance(step, int):
            out += f"[{step}]"
        elif step.isidentifier():
            out += f".{step}"
        else:
            out += f"[{_quoted(step)}]"
    return out


def _quoted(key: str) -> str:
    """A key as JSON writes it, cut at 40 characters (a lone surrogate escaped, so the message is text)."""
    cut = key[:40]
    try:
        cut.encode("utf-8")
        quoted = json.dumps(cut, ensure_ascii=False)
    except UnicodeEncodeError:
        quoted = json.dumps(cut)
    return quoted + ("…" if len(key) > 40 else "")


def _listing(keys: tuple[str, ...]) -> str:
    return keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"


def _problem(where: str, path: list[str | int], what: str, field: str, location: dict[str, Any]) -> TokenizerError:
    return TokenizerError(f"{place(where, path)}: {what}", field=field, location={**location, "path": list(path)})


def _text(value: str, where: str, path: list[str | int], field: str, location: dict[str, Any]) -> str:
    """A string that is text: a lone surrogate (JSON allows `"\\ud800"`) named with its offset."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"{place(where, path)}: a lone surrogate U+{ord(value[exc.start]):04X} at offset {exc.start}, which is "
            "not text and cannot be encoded as UTF-8", field=field,
            location={**location, "path": list(path), "offset": exc.start}) from None
    return value


def _key_text(key: str, where: str, path: list[str | int], field: str, location: dict[str, Any]) -> None:
    """A key that is text (named by the object holding it: the key itself cannot be shown)."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise _problem(where, path, f"a key holds a lone surrogate U+{ord(key[exc.start]):04X} at offset "
                       f"{exc.start}, which is not text", field, location) from None


def plain(value: Any, where: str, path: list[str | int], field: str, location: dict[str, Any],
          budget: Budget) -> Any:
    """A JSON value copied as plain dicts, lists and scalars, every string checked and the characters of
    its compact JSON counted against the budget (a container's own before its children are walked, so
    the walk stops as soon as the limit is passed), at most MAX_JSON_DEPTH deep."""
    if len(path) > MAX_JSON_DEPTH:
        raise _problem(where, path, f"nested more than {MAX_JSON_DEPTH} levels", field, location)
    if isinstance(value, str):
        budget.spend(len(json.dumps(value, ensure_ascii=False)), field)  # (with its quotes and escapes)
        return _text(value, where, path, field, location)
    if value is None or isinstance(value, bool):
        budget.spend(5 if value is False else 4, field)
        return value
    if isinstance(value, int):
        try:
            budget.spend(len(str(value)), field)
        except ValueError:  # (over Python's 4,300 digits: the JSON reader refuses those before this)
            raise _problem(where, path, "a number with too many digits", field, location) from None
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):  # (1e999 in JSON reads as infinity, which JSON cannot write back)
            raise _problem(where, path, f"expected a finite number, got {value}", field, location)
        budget.spend(len(repr(value)), field)
        return float(value)
    if isinstance(value, list):
        budget.spend(2 + max(len(value) - 1, 0), field)
        return [plain(item, where, [*path, i], field, location, budget) for i, item in enumerate(value)]
    if isinstance(value, dict):
        budget.spend(2 + max(2 * len(value) - 1, 0), field)
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise _problem(where, path, f"a key is {json_type(key)}, not a string", field, location)
            budget.spend(len(json.dumps(key, ensure_ascii=False)), field)
            _key_text(key, where, path, field, location)
            out[key] = plain(item, where, [*path, key], field, location, budget)
        return out
    raise _problem(where, path, f"expected a JSON value, got {json_type(value)}", field, location)


def _object(value: Any, where: str, path: list[str | int], what: str, field: str,
            location: dict[str, Any]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _problem(where, path, f"expected {what}, got {json_type(value)}", field, location)
    return value


def _keys(value: dict[str, Any], allowed: tuple[str, ...], required: tuple[str, ...], where: str,
          path: list[str | int], what: str, field: str, location: dict[str, Any]) -> None:
    """Unknown keys first (a typo is the likelier mistake), then the missing ones."""
    extra = [key for key in value if key not in allowed]
    if extra:
        raise _problem(where, path, f"unknown key {short_repr(extra[0])}; {what} has {_listing(allowed)}",
                       field, {**location, "key": extra[0]})
    for key in required:
        if key not in value:
            raise _problem(where, path, f"{key} is missing", field, {**location, "key": key})


def _function_type(value: dict[str, Any], where: str, path: list[str | int], field: str,
                   location: dict[str, Any]) -> None:
    if "type" in value and value["type"] != "function":
        raise _problem(where, [*path, "type"], f"expected \"function\", got {short_repr(value['type'], 40)}",
                       field, location)


def _name(function: dict[str, Any], where: str, path: list[str | int], field: str,
          location: dict[str, Any]) -> None:
    name = function.get("name")
    if not isinstance(name, str):
        what = "is missing" if "name" not in function else f"expected a string, got {json_type(name)}"
        raise _problem(where, [*path, "name"], what, field, location)
    if not name:
        raise _problem(where, [*path, "name"], "expected a name, got an empty string", field, location)


def check_tool(value: Any, index: int, field: str, budget: Budget) -> dict[str, Any]:
    """One tool spec: `{"type": "function", "function": {"name": str, "description"?: str,
    "parameters"?: object, ...}}`; the function's other keys (`strict`, `return`) pass as they are."""
    where, location = f"{field}[{index}]", {"index": index}
    tool = _object(value, where, [], "an object {\"type\": \"function\", \"function\": {...}}", field, location)
    _keys(tool, TOOL_KEYS, TOOL_KEYS, where, [], "a tool", field, location)
    _function_type(tool, where, [], field, location)
    function = _object(tool["function"], where, ["function"], "an object with a name", field, location)
    _name(function, where, ["function"], field, location)
    if "description" in function and not isinstance(function["description"], str):
        raise _problem(where, ["function", "description"],
                       f"expected a string, got {json_type(function['description'])}", field, location)
    if "parameters" in function:
        _object(function["parameters"], where, ["function", "parameters"], "an object (a JSON schema)", field,
                location)
    budget.location = location
    copied: dict[str, Any] = plain(tool, where, [], field, location, budget)
    return copied


def check_tools(value: Any, max_tools: int, max_chars: int, field: str = "tools") -> tuple[dict[str, Any], ...]:
    """The tools a template is given: a list of at most `max_tools` specs, at most `max_chars`
    characters of compact JSON in all, each checked by `check_tool`."""
    if not isinstance(value, list):
        raise TokenizerError(f"{field}: expected a list of tools [{{\"type\": \"function\", \"function\": "
                             f"{{\"name\", \"description\", \"parameters\"}}}}, ...], got {json_type(value)}",
                             field=field)
    if len(value) > max_tools:
        raise TokenizerError(f"{field}: {len(value):,} tools is over the limit of {max_tools:,} tools "
                             "(setting LIMIT_CHAT_TOOLS)", field=field, location={"limit": max_tools})
    budget = Budget(max_chars, f"{field}: the tools' JSON is over {max_chars:,} characters, the limit "
                               "(setting LIMIT_TEXT_CHARS)")
    budget.spend(2 + max(len(value) - 1, 0), field)  # the list's brackets and commas
    return tuple(check_tool(tool, index, field, budget) for index, tool in enumerate(value))


def check_tool_calls(value: Any, where: str, field: str, location: dict[str, Any],
                     budget: Budget) -> list[dict[str, Any]]:
    """A message's tool calls: a list of `{"id"?: str, "type"?: "function", "function": {"name": str,
    "arguments": object or JSON text}}` (templates write the arguments as they are, or with tojson)."""
    if not isinstance(value, list):
        raise _problem(where, ["tool_calls"], f"expected a list of tool calls, got {json_type(value)}", field,
                       location)
    for i, item in enumerate(value):
        path: list[str | int] = ["tool_calls", i]
        call = _object(item, where, path, "an object {\"function\": {\"name\", \"arguments\"}}", field, location)
        _keys(call, CALL_KEYS, ("function",), where, path, "a tool call", field, location)
        if "id" in call and not isinstance(call["id"], str):
            raise _problem(where, [*path, "id"], f"expected a string, got {json_type(call['id'])}", field, location)
        _function_type(call, where, path, field, location)
        function = _object(call["function"], where, [*path, "function"], "an object with name and arguments",
                           field, location)
        _keys(function, ("name", "arguments"), ("name", "arguments"), where, [*path, "function"], "a called function",
              field, location)
        _name(function, where, [*path, "function"], field, location)
        if not isinstance(function["arguments"], (dict, str)):
            raise _problem(where, [*path, "function", "arguments"],
                           f"expected an object or JSON text, got {json_type(function['arguments'])}", field, location)
    copied: list[dict[str, Any]] = plain(value, where, ["tool_calls"], field, location, budget)
    return copied


def json_chars(value: Any) -> int:
    """Characters of a plain JSON value written compactly (what the limits and the work charged count)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
