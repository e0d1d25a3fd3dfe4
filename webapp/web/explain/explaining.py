"""Explaining a text with the page's or the request's tokenizer, within the explain limit.

What it does not do: routes (routes.py), the replay itself (webapp.tokenizer).

Decisions and details: docs/architecture.md, "Module notes".
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from flask import current_app

from webapp import tokenizer as tk
from webapp.infra import inputs
from webapp.infra.errors import ApiError
from webapp.opened import active as act

#: The default of LIMIT_EXPLAIN_BYTES (docs/limits.md).
DEFAULT_EXPLAIN_BYTES = 65_536
#: Digits a `story` given as a string may have (read before any work).
STORY_DIGITS = 12


def read_bytes_form(form: Mapping[str, str], **more: Callable[[], Any]
                    ) -> tuple[act.ActiveTokenizer, dict[str, Any]]:
    """The Bytes page's posted form: its tokenizer, and its `text`, typed `merges` (None when a preset or
    file is active) and `pretokenize` read (plus `more` readers); the first problem raised, naming its
    field. Its text is checked against the explain limit."""
    limits = inputs.current_limits()
    active = act.resolve("bytes", form)
    values, errors = inputs.collect({
        "text": lambda: inputs.read_text(form.get("text", ""), limits, form=True),
        "merges": lambda: act.page_merges(active),
        "pretokenize": lambda: inputs.read_pretokenize(form.get("pretokenize", "none")),
        **more,
    })
    if errors:
        raise next(iter(errors.values()))
    check_size(values["text"])
    return active, values


def explain_limit() -> int:
    return int(current_app.config.get("LIMIT_EXPLAIN_BYTES", DEFAULT_EXPLAIN_BYTES))


def check_size(text: str) -> None:
    """400 naming `text` when its UTF-8 size is over the explain limit (before any work)."""
    limit = explain_limit()
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise ApiError(
            f"text: {size:,} bytes of UTF-8 is over the {limit:,} an explanation takes (LIMIT_EXPLAIN_BYTES); "
            "explain a shorter part of the text", field="text", location={"bytes": size, "limit": limit})


def read_story(value: Any) -> int | None:
    """The boundary whose story is wanted (0-based), or None."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        raw = value.strip()
        # ASCII digits only ("²" is a digit to str.isdigit, not to int), and few of them: a
        # boundary index has at most as many digits as the longest text has bytes' count
        if not (raw.isascii() and raw.isdigit() and len(raw) <= STORY_DIGITS):
            raise ApiError(f"story: expected the index of a boundary (a whole number from 0, at most "
                           f"{STORY_DIGITS} digits)", field="story")
        value = int(raw)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ApiError("story: expected the index of a boundary (a whole number from 0)", field="story")
    return value


def check_story(answer: dict[str, Any], story: int | None) -> None:
    """404-free: a story index past the last boundary is a 400 naming `story` and the count."""
    count = len(answer["boundaries"])
    if story is not None and story >= count:
        raise ApiError(f"story: boundary {story} does not exist; this text has {count:,} "
                       f"{'boundary' if count == 1 else 'boundaries'}" + (f" (0 to {count - 1:,})" if count else ""), field="story", location={"index": story, "boundaries": count})


def explain_active(active: act.ActiveTokenizer, text: str, scheme: str | None,
                   story: int | None = None, allowed: Any = None) -> dict[str, Any]:
    """The explanation with `active` split by `scheme` (None: its own); `allowed` overrides the page's
    special-token choice (the API's allowed_special)."""
    check_size(text)
    entry = active.loaded()
    special = tk.allowed_set(active.special if allowed is None else allowed, entry.tok.special_tokens)
    answer = tk.explain_loaded(entry.stages(scheme), text, special, story=story)
    check_story(answer, story)
    return answer


__all__ = ["check_size", "check_story", "explain_active", "explain_limit", "read_bytes_form", "read_story"]
