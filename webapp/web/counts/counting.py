"""Counting one text with many tokenizers: tokens, characters per token, bytes per token.

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from webapp.infra import inputs, timebudget
from webapp.opened import active as act
from webapp.opened.store import Loaded
from webapp.tokenizer import (
    PRESET_NAMES, OutOfTime, TokenizerError, is_installed, is_preset, preset_chat_template,
)
from webapp.tokenizer.reading.text import charged, check_request_budget
from webapp.web.chat.chatting import render_and_count, template_for

#: The columns the page sorts by (a leading "-" sorts in descending order).
SORT_KEYS = ("name", "tokens", "chars_per_token", "bytes_per_token")
#: The column the page adds when tools are given.
TOOLS_KEY = "tools_tokens"
#: A tools cell's reasons (the same words in the API's `tools_note` and on the page).
NO_TEMPLATE = "no chat template"
IGNORES_TOOLS = "its template ignores tools"
NEEDS_TOOLS = "its template cannot render the text without tools"

Tools = Sequence[Mapping[str, Any]]


@dataclass(frozen=True)
class ToolsCost:
    """What the tools cost one tokenizer: tokens with them less tokens without (None: not known,
    `note` says why; a note beside a number explains it)."""

    tokens: int | None
    note: str | None = None


@dataclass(frozen=True)
class CountRow:
    """One tokenizer's count of the text (or why it has none)."""

    tokenizer: str
    tokens: int | None
    chars_per_token: float | None
    bytes_per_token: float | None
    error: str | None = None
    tools: ToolsCost | None = None  # None: no tools were given (the answer then has no tools keys)

    @property
    def tools_tokens(self) -> int | None:
        """The tools column's value (what `sorted_rows` sorts by)."""
        return None if self.tools is None else self.tools.tokens

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"tokenizer": self.tokenizer, "tokens": self.tokens,
                                  "chars_per_token": self.chars_per_token, "bytes_per_token": self.bytes_per_token}
        if self.error:
            out["error"] = self.error
        if self.tools is not None:
            out[TOOLS_KEY] = self.tools.tokens
            if self.tools.note:
                out["tools_note"] = self.tools.note
        return out


def default_refs() -> list[str]:
    """Every preset the app ships, in the registry's order (open models appear when they are added)."""
    return list(PRESET_NAMES)


def _ratio(n: int, tokens: int) -> float | None:
    return round(n / tokens, 3) if tokens else None


def template_kind(ref: str) -> str | None:
    """How counting the tools' cost would render `ref`'s chat template (what the work estimate counts):
    "preset" (in-process), "opened" (an opened file's: in a child process, webapp/tokenizer/chat/process.py),
    or None (no template). A preset's is known by its name; an opened file's only once the file is
    open, so an opened file is taken to have one."""
    if is_preset(ref):
        return "preset" if is_installed(ref) and preset_chat_template(ref) is not None else None
    return "opened"


def tools_cost(entry: Loaded, text: str, tools: Tools, limits: inputs.Limits) -> ToolsCost:
    """The chat API's `tools_tokens` for the conversation `[{"role": "user", "content": text}]`
    (the same rendering and encode, no generation prompt), or why there is none."""
    try:
        template_for(entry)
    except TokenizerError:
        return ToolsCost(None, NO_TEMPLATE)
    try:
        counted = render_and_count(entry, [{"role": "user", "content": text}], False, limits, tools)
    except OutOfTime:
        raise
    except TokenizerError as exc:  # (the template failed or was refused: the row says so, the counts stand)
        return ToolsCost(None, exc.message)
    if counted.tools_tokens is None:
        return ToolsCost(None, NEEDS_TOOLS)
    # (as the Chat view's note: a template that writes the tools always costs something)
    if counted.tools_tokens == 0 and tools:
        return ToolsCost(0, IGNORES_TOOLS)
    return ToolsCost(counted.tools_tokens)


def count_one(ref: str, text: str, n_bytes: int, tools: Tools | None = None,
              limits: inputs.Limits | None = None) -> CountRow:
    unknown = None if tools is None else ToolsCost(None)  # (a row without a count: its error says why)
    if is_preset(ref) and not is_installed(ref):
        return CountRow(ref, None, None, None, error=f"{ref} is not installed on this server", tools=unknown)
    active = act.of_ref(ref)
    try:
        entry = active.loaded()  # (opening is not charged: a cold process's presets are not the text's work)
        with charged():  # the whole encode counts against the request's budget, not only file regexes
            ids = act.byte_ids(active, text, entry.tok.pretokenize)
            if tools is not None:
                check_request_budget()  # (an encode that spent the budget starts no renderings)
            cost = None if tools is None else tools_cost(entry, text, tools, limits or inputs.current_limits())
    except OutOfTime:
        raise
    except TokenizerError as exc:
        return CountRow(ref, None, None, None, error=exc.message, tools=unknown)
    return CountRow(ref, len(ids), _ratio(len(text), len(ids)), _ratio(n_bytes, len(ids)), tools=cost)


def count_all(text: str, refs: Iterable[str],
              on_row: Callable[[int, int, str], None] | None = None, tools: Tools | None = None) -> list[CountRow]:
    """Each tokenizer's count of `text`, in the order given; each whole encode (and with `tools`, the
    two renderings of the tools' cost, under the chat limits) is charged to the request's time budget
    (webapp.infra.timebudget), which is checked before each tokenizer, and running out names the tokenizer.
    `on_row(done, total, name)` is told before each tokenizer starts (a job's progress)."""
    n_bytes = len(text.encode("utf-8"))
    limits = None if tools is None else inputs.current_limits()
    refs = list(refs)
    rows = []
    for index, ref in enumerate(refs):
        if on_row is not None:
            on_row(index, len(refs), ref)
        try:
            check_request_budget()
            rows.append(count_one(ref, text, n_bytes, tools, limits))
            if index + 1 < len(refs):
                check_request_budget()  # spent by this one's encode: it is the one named, not the next
        except OutOfTime as exc:
            raise timebudget.out_of_time(exc, ref, index, len(refs)) from None
    return rows


def counts_json(text: str, rows: list[CountRow]) -> dict[str, Any]:
    """The `POST /api/counts` answer (and a counts job's result: the same dict)."""
    return {"chars": len(text), "bytes": len(text.encode("utf-8")), "counts": [r.to_dict() for r in rows]}


def rows_of(result: Mapping[str, Any]) -> list[CountRow]:
    """The rows back from a `counts_json` answer (a finished job's result, for the page)."""
    return [CountRow(str(c["tokenizer"]), c.get("tokens"), c.get("chars_per_token"), c.get("bytes_per_token"),
                     error=c.get("error"),
                     tools=ToolsCost(c[TOOLS_KEY], c.get("tools_note")) if TOOLS_KEY in c else None)
            for c in result["counts"]]


def read_sort(value: object) -> str:
    """A sort key from the page (anything else: by name)."""
    if isinstance(value, str) and value.lstrip("-") in (*SORT_KEYS, TOOLS_KEY):
        return value
    return "name"


def sorted_rows(rows: list[CountRow], sort: str) -> list[CountRow]:
    """Rows by a column (rows without a count last), ties by name."""
    key = sort.lstrip("-")
    descending = sort.startswith("-")
    if key == "name":
        return sorted(rows, key=lambda r: r.tokenizer, reverse=descending)
    counted = [r for r in rows if getattr(r, key) is not None]
    rest = [r for r in rows if getattr(r, key) is None]
    counted.sort(key=lambda r: r.tokenizer)
    counted.sort(key=lambda r: getattr(r, key), reverse=descending)
    return counted + sorted(rest, key=lambda r: r.tokenizer)
