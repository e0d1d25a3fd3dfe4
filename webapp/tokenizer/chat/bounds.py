"""The size bounds of one chat-template rendering, checked *before* a value is built.

What it does not do: the sandbox's attribute rules or the time limit
(webapp/tokenizer/chat/templates.py and watchdog.py), or kill anything - the child
process of process.py is the second line, for whatever these predictions
miss.

Decisions and details: docs/engine.md, "Module notes".
"""

from __future__ import annotations

import functools
import threading
import time
from typing import Any, Callable, Iterable

import jinja2
import jinja2.utils

from webapp.tokenizer.errors import short_repr


class Refused(jinja2.exceptions.TemplateError):
    """A limit stopped the rendering (the message says which)."""


class Bounds:
    """The running rendering's deadline, its per-value bound and its running total of characters built."""

    def __init__(self, rendered_chars: int, built_chars: int, seconds: float) -> None:
        self.rendered_chars = rendered_chars
        self.built_chars = built_chars
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.built = 0

    def size(self, n: int, what: str) -> None:
        """One value of `n` characters (or items) is about to be built: refused over the per-value bound."""
        if n > self.rendered_chars:
            raise Refused(f"{what} would make {n:,} characters, over the limit of {self.rendered_chars:,} "
                          "(setting LIMIT_CHAT_RENDERED_CHARS)")

    def build(self, n: int, what: str) -> None:
        """As `size`, and `n` is added to what the rendering has built; refused past the total."""
        self.size(n, what)
        self.built += n
        if self.built > self.built_chars:
            raise Refused(f"{what} would bring what the rendering built to {self.built:,} characters, over the "
                          f"limit of {self.built_chars:,} (setting LIMIT_CHAT_BUILT_CHARS)")

    def clock(self) -> None:
        if time.monotonic() > self.deadline:
            raise Refused(f"rendering took over {self.seconds:g} s, the limit (setting LIMIT_CHAT_SECONDS)")


_RENDERING = threading.local()  # this thread's rendering in progress: its Bounds


def current() -> Bounds | None:
    return getattr(_RENDERING, "bounds", None)


def enter(bounds: Bounds | None) -> None:
    _RENDERING.bounds = bounds


def length(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple, dict)) else None


# --- what str() / tojson of a value would make ----------------------------------------


def text_weight(value: Any, limit: int, indent: int = 0) -> int:
    """About the characters `str(value)` (or `json.dumps(value, indent=indent)`) makes; over `limit`
    it stops counting and returns limit + 1. Strings count their length plus quotes; escaping can add a
    small factor on top (the child's memory limit covers that)."""
    total = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, (list, tuple, dict, jinja2.utils.Namespace)):
            members: Iterable[Any]
            if isinstance(item, jinja2.utils.Namespace):
                members = list(item._Namespace__attrs.items())
            elif isinstance(item, dict):
                members = list(item.items())
            else:
                members = item
            count = 0
            for member in members:
                count += 1
                if isinstance(member, tuple) and isinstance(item, (dict, jinja2.utils.Namespace)):
                    stack.append((member[0], depth + 1))
                    stack.append((member[1], depth + 1))
                else:
                    stack.append((member, depth + 1))
                total += 2 + (1 + (depth + 1) * indent if indent else 0)
                if total > limit:
                    return limit + 1
            total += 2 + (1 + depth * indent if indent and count else 0)
        elif isinstance(item, bool) or item is None:
            total += 5
        elif isinstance(item, int):
            total += item.bit_length() * 30103 // 100000 + 2
        else:
            total += 32  # a float, an Undefined, a loop or a macro object: short reprs
        if total > limit:
            return limit + 1
    return total


def weigh(bounds: Bounds, value: Any, what: str, indent: int = 0) -> int:
    """The predicted size of `str(value)` (a string: its length), refused over the per-value bound."""
    if isinstance(value, str) and not indent:
        return len(value)
    n = text_weight(value, bounds.rendered_chars, indent)
    bounds.size(n, what)
    return n


# --- format strings -------------------------------------------------------------------


def format_size(bounds: Bounds, fmt: str, args: Iterable[Any], what: str) -> int:
    """An upper bound for `fmt % args` or `fmt.format(*args)`: every field as wide as the widest width in
    the string, the largest integer argument (a nested `{:{}}` width) or the widest argument's text."""
    widest = 0
    run = ""
    for ch in fmt + " ":
        if ch.isdigit():
            run += ch
            if len(run) > 10:
                bounds.size(10 ** (len(run) - 1), f"{what}'s width")
        elif run:
            widest = max(widest, int(run))
            run = ""
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool):
            widest = max(widest, abs(arg), weigh(bounds, arg, what))
        else:
            widest = max(widest, weigh(bounds, arg, what))
    fields = fmt.count("{") + fmt.count("%")
    n = len(fmt) + fields * widest
    bounds.size(n, what)
    return n


# --- filters, calls and lipsum --------------------------------------------------------


def check_int_args(bounds: Bounds, args: Iterable[Any], what: str) -> None:
    for arg in args:
        if isinstance(arg, int) and not isinstance(arg, bool) and abs(arg) > bounds.rendered_chars:
            bounds.size(abs(arg), what)


def _arg(args: tuple[Any, ...], kwargs: dict[str, Any], index: int, name: str, default: Any) -> Any:
    if name in kwargs:
        return kwargs[name]
    return args[index] if len(args) > index else default


def _as_width(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    return max(int(value), 0) if isinstance(value, int) else 0


#: Filters whose result is at most this many times the text of their input (escaping, case mapping).
_TEXT_FACTOR = {"string": 1, "safe": 1, "trim": 1, "striptags": 1, "lower": 3, "upper": 3, "title": 3,
                "capitalize": 3, "e": 6, "escape": 6, "forceescape": 6, "urlencode": 12, "xmlattr": 6,
                "wordcount": 0}


def predict_filter(bounds: Bounds, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int | None:
    """The size a filter's result could have, from its arguments (None: it builds nothing big)."""
    what = f"`|{name}`"
    if not args:
        return None
    value, rest = args[0], args[1:]
    if name in _TEXT_FACTOR:
        return weigh(bounds, value, what) * max(_TEXT_FACTOR[name], 1)
    if name == "center":
        return max(weigh(bounds, value, what), _as_width(_arg(rest, kwargs, 0, "width", 80)))
    if name == "indent":
        text = weigh(bounds, value, what)
        width = _as_width(_arg(rest, kwargs, 0, "width", 4))
        lines = value.count("\n") + 1 if isinstance(value, str) else text
        return text + lines * width
    if name == "wordwrap":
        wrap = _arg(rest, kwargs, 3, "wrapstring", None)
        return weigh(bounds, value, what) * (1 + (len(wrap) if isinstance(wrap, str) else 1))
    if name == "truncate":
        end = _arg(rest, kwargs, 2, "end", "...")
        return weigh(bounds, value, what) + (len(end) if isinstance(end, str) else 0)
    if name == "urlize":
        text = weigh(bounds, value, what)
        extra = sum(len(v) for v in list(rest) + list(kwargs.values()) if isinstance(v, str))
        return 3 * text + (text // 2 + 1) * (64 + extra)
    if name == "format":
        return format_size(bounds, str(value) if isinstance(value, str) else "%s", list(rest) + list(kwargs.values()),
                           what)
    if name in ("tojson", "pprint"):
        indent = _arg(rest, kwargs, 1, "indent", None) if name == "tojson" else 1
        width = _as_width(indent) if indent is not None else 0
        return weigh(bounds, value, what, indent=width) * (6 if name == "tojson" else 1)
    if name == "replace":
        old, new = _arg(rest, kwargs, 0, "old", None), _arg(rest, kwargs, 1, "new", None)
        if isinstance(value, str) and isinstance(old, str) and isinstance(new, str):
            parts = len(value) + 1 if not old else value.count(old) + 1
            return len(value) + parts * len(new)
    return None


def predict_join(bounds: Bounds, items: list[Any], separator: Any, what: str) -> int:
    """`separator.join(str(item) ...)`: the items' text and the separators between them."""
    sep = len(separator) if isinstance(separator, str) else 0
    total = max(len(items) - 1, 0) * sep
    bounds.size(total, what)
    for item in items:
        total += weigh(bounds, item, what) if not isinstance(item, str) else len(item)
        bounds.size(total, what)
    return total


def bounded_filter(name: str, func: Callable[..., Any]) -> Callable[..., Any]:
    """A filter whose result's size is predicted (and charged) before it runs, and checked after."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        bounds = current()
        if bounds is None:
            return func(*args, **kwargs)
        bounds.clock()
        check_int_args(bounds, list(args) + list(kwargs.values()), f"`|{name}`")
        plain = [a for a in args if not isinstance(a, (jinja2.runtime.Context, jinja2.nodes.EvalContext,
                                                        jinja2.Environment))]
        lead = args[: len(args) - len(plain)]
        if name == "join" and plain:
            items = list(plain[0])  # (a generator, e.g. from `|map`, is run here: each of its calls is bounded)
            separator = _arg(tuple(plain[1:]), kwargs, 0, "d", "")
            bounds.build(predict_join(bounds, items, separator, "`|join`"), "`|join`")
            args = (*lead, items, *plain[1:])
        else:
            predicted = predict_filter(bounds, name, tuple(plain), kwargs)
            if predicted is not None:
                bounds.build(predicted, f"`|{name}`")
        result = func(*args, **kwargs)
        n = length(result)
        if n is not None:
            bounds.size(n, f"`|{name}`")
        return result

    return run


#: The longest word of Jinja's lorem ipsum, plus its comma or full stop and the space after it.
LIPSUM_WORD_CHARS = 14


def bounded_lipsum(n: Any = 5, html: Any = True, min: Any = 20, max: Any = 100) -> Any:  # noqa: A002 (Jinja's names)
    """`lipsum(...)`, its size predicted from n and max before a word is made (Jinja's own loop is plain Python
    that no deadline interrupts)."""
    bounds = current()
    if bounds is not None:
        for value, label in ((n, "n"), (min, "min"), (max, "max")):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise Refused(f"`lipsum`: {label} should be a non-negative integer, got {short_repr(value)}")
        bounds.build(n * (max * LIPSUM_WORD_CHARS + 16), "`lipsum`")
    return jinja2.utils.generate_lorem_ipsum(n=n, html=html, min=min, max=max)


def bounded_concat(parts: Iterable[Any]) -> str:
    """`~` and the text a block captures ({% set %}...{% endset %}, a macro, a filter block): the parts'
    text added up before it is joined."""
    items = list(parts)
    bounds = current()
    if bounds is not None:
        bounds.build(predict_join(bounds, items, "", "`~`"), "`~`")
    return "".join(map(str, items))


def finalize(value: Any) -> Any:
    """Every `{{ value }}` output: a value that is not text has its text's size predicted before `str()`."""
    if not isinstance(value, str):
        bounds = current()
        if bounds is not None:
            bounds.build(weigh(bounds, value, "the output of a value"), "the output of a value")
    return value
